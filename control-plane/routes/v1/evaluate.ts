/** POST /api/service/v1/evaluate: allow or block an action. Always 200 for a decision. */
import type { FastifyInstance } from 'fastify'
import { EvaluateBody, EvaluateResponse, evaluateResponseJson } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { buildInputV1 } from '../../../shared/policy/index.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'
import type { AgentRecord } from '../../store/store.js'
import type { AgentPolicies } from '../../policies/directory.js'

const JSON_UTF8 = 'application/json; charset=utf-8'

export async function evaluateRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { directory, metrics, agents } = services
  app.post('/evaluate', {
    schema: {
      tags: ['v1'],
      summary: 'Evaluate an action before execution',
      body: EvaluateBody,
      response: { 200: EvaluateResponse, ...errorResponses(400, 401, 403, 413, 415, 429) }
    }
  }, (req, reply) => {
    // Synchronous when the key and the compiled policies are cached (every request but the first).
    const decide = (agent: AgentRecord, ap: AgentPolicies): void => {
      const body = req.body as EvaluateBody
      let d = ap.set.evaluate(buildInputV1(body as Record<string, unknown>, ap.info))
      metrics.decision('v1', d.allowed)
      if (!d.allowed) {
        d = directory.approvals.forBlocked(agent, d, (body.context as { tool?: unknown } | undefined)?.tool, body.action, body)
        agents.recordBlock(agent, body, d)
      }
      // Serialised here (the schema below documents the answer): a JSON string is sent as it is.
      reply.type(JSON_UTF8).send(evaluateResponseJson(d, body.context))
    }
    const withAgent = (agent: AgentRecord): void | Promise<void> => {
      ensureOwnAgent(agent, (req.body as EvaluateBody).agent_id)
      const ap = directory.compiledFor(agent)
      if (ap !== undefined) return decide(agent, ap)
      return directory.forAgent(agent).then((compiled) => decide(agent, compiled))
    }
    return withAgent(agentOf(req))
  })
}
