/** GET /api/service/v1/config/{agent_id}: runtime settings and effective policies. */
import type { FastifyInstance } from 'fastify'
import { AgentParams, ConfigResponse } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'
import { configResponse } from '../../policies/directory.js'

export async function configRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { directory } = services
  app.get('/config/:agent_id', {
    schema: {
      tags: ['v1'],
      summary: 'Runtime config and effective policies',
      params: AgentParams,
      response: { 200: ConfigResponse, ...errorResponses(401, 403, 429) }
    }
  }, async (req) => {
    const agent = agentOf(req)
    ensureOwnAgent(agent, (req.params as { agent_id: string }).agent_id)
    return configResponse(agent, await directory.forAgent(agent))
  })
}
