/** POST /api/service/v1/deregister: terminates the agent; its key stops working. */
import type { FastifyInstance } from 'fastify'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../../../shared/contracts/common.js'
import { badRequest } from '../../../shared/errors.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'

export async function deregisterRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { agents } = services
  app.post('/deregister', {
    schema: {
      tags: ['v1'],
      summary: 'Deactivate the agent endpoint (empty body or {})',
      response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 429) }
    }
  }, async (req, reply) => {
    const agent = agentOf(req)
    const body = req.body
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw badRequest('the body must be empty or a JSON object', [{ path: '/', message: 'must be object' }])
    }
    const agentId = (body as { agent_id?: unknown } | undefined)?.agent_id
    if (agentId !== undefined && typeof agentId !== 'string') {
      throw badRequest('agent_id must be a string', [{ path: '/agent_id', message: 'must be string' }])
    }
    ensureOwnAgent(agent, agentId)
    await agents.deregister(agent)
    reply.code(204)
  })
}
