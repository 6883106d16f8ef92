/** POST /api/service/v1/heartbeat: health and liveness; says whether the agent's config changed. */
import type { FastifyInstance } from 'fastify'
import { HeartbeatBody, HeartbeatResponse } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'

export async function heartbeatRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { agents, directory, config } = services
  app.post('/heartbeat', {
    schema: {
      tags: ['v1'],
      summary: 'Report health and liveness',
      body: HeartbeatBody,
      response: { 202: HeartbeatResponse, ...errorResponses(400, 401, 403, 413, 415, 429) }
    }
  }, async (req, reply) => {
    const agent = agentOf(req)
    const body = req.body as HeartbeatBody
    ensureOwnAgent(agent, body.agent_id)
    const ap = await directory.forAgent(agent)
    await agents.heartbeat(agent, body.status, {
      metrics: body.metrics ?? null,
      version: body.version ?? null,
      telemetry: body.telemetry ?? null,
      config_hash: body.config_hash ?? null,
      secrets_hash: body.secrets_hash ?? null
    })
    reply.code(202)
    return {
      acknowledged: true,
      config_changed: body.config_hash !== undefined && body.config_hash !== ap.hash,
      next_heartbeat_seconds: config.heartbeatIntervalSeconds
    }
  })
}
