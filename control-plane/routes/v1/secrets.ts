/**
 * GET /api/service/v1/secrets and /secrets/{agent_id}: the secrets granted to the agent's scopes, and
 * the tenant's active LLM provider keys (`isActive` in the settings grants a provider to agents).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AgentParams, SecretsResponse } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'

export const SECRETS_TTL_MS = 5 * 60_000

export async function secretsRoutes (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { agents } = services
  const handler = async (req: FastifyRequest): Promise<unknown> => {
    const agent = agentOf(req)
    ensureOwnAgent(agent, (req.params as { agent_id?: string }).agent_id)
    return {
      secrets: await agents.secrets(agent),
      providers: await agents.providers(agent),
      expires_at: new Date(Date.now() + SECRETS_TTL_MS).toISOString()
    }
  }
  const response = { 200: SecretsResponse, ...errorResponses(401, 403, 429) }
  app.get('/secrets', { schema: { tags: ['v1'], summary: 'Secrets of the authenticated agent', response } }, handler)
  app.get('/secrets/:agent_id', { schema: { tags: ['v1'], summary: 'Secrets of the named (own) agent', params: AgentParams, response } }, handler)
}
