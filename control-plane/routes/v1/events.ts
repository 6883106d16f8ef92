/** POST /api/service/v1/events: a batch of events, validated whole, answered 202 once committed. */
import type { FastifyInstance } from 'fastify'
import { eventsBody, EventsResponse, type EventsBody } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'

export async function eventsRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { agents, metrics } = services
  app.post('/events', {
    schema: {
      tags: ['v1'],
      summary: 'Submit buffered events',
      body: eventsBody(services.config.maxEventsPerBatch),
      response: { 202: EventsResponse, ...errorResponses(400, 401, 403, 413, 415, 429, 503) }
    }
  }, async (req, reply) => {
    const agent = agentOf(req)
    const body = req.body as EventsBody
    ensureOwnAgent(agent, body.agent_id)
    const batchId = await agents.events(agent, body.events.map((e) => ({
      clientId: e.id ?? null,
      type: e.type,
      category: e.category,
      timestamp: e.timestamp,
      userId: e.user_id ?? null,
      payload: e.payload ?? {},
      evaluationId: null
    })))
    metrics.eventsAccepted('v1', body.events.length)
    reply.code(202)
    return { accepted: body.events.length, batch_id: batchId }
  })
}
