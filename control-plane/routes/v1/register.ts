/** POST /api/service/v1/register: bootstrap token -> a new agent and its runtime key (shown once). */
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { RegisterBody, RegisterResponse } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import type { RouteOptions } from '../../services.js'

export async function registerRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const { auth, agents, directory } = services
  app.post('/register', {
    schema: {
      tags: ['v1'],
      summary: 'Register an agent and mint its runtime key',
      headers: Type.Object({ [`x-${services.config.apiName}-bootstrap`]: Type.Optional(Type.String()) }),
      body: RegisterBody,
      response: { 201: RegisterResponse, ...errorResponses(400, 401, 409, 413, 415, 429) }
    }
  }, async (req, reply) => {
    const tenantId = auth.bootstrapTenant(req)
    const body = req.body as RegisterBody
    await agents.ensureTenant(tenantId)
    const metadata: Record<string, unknown> = body.metadata ?? {}
    const deployment = body.deployment_id ?? (typeof metadata.deployment === 'string' ? metadata.deployment : null)
    const { agent, key } = await agents.register({
      tenantId,
      agentId: body.agent_id,
      slugBase: body.agent_type,
      name: body.name,
      agentType: body.agent_type,
      capabilities: body.capabilities ?? [],
      metadata,
      deploymentId: deployment,
      contract: 'v1'
    })
    const ap = await directory.forAgent(agent)
    reply.code(201)
    return { agent_id: agent.agent_id, api_key: key.key, config: ap.settings, policies: ap.v1 }
  })
}
