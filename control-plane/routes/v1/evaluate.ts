/**
 * POST /api/service/v1/evaluate: allow or block an action. Always 200 for a decision.
 * Served twice over, with the same steps: by fastify (the schema, the onRequest authentication), and
 * by the fast lane for an agent whose key is cached (shared/fast-lane.ts), which is every request of
 * an agent but its first.
 */
import type { FastifyInstance } from 'fastify'
import { EvaluateBody, EvaluateResponse, evaluateResponseBytes, evaluateResponseJson } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { buildInputV1, type Decision } from '../../../shared/policy/index.js'
import { agentHook, agentOf, ensureOwnAgent, type CachedCaller } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'
import type { AgentRecord } from '../../store/store.js'
import type { AgentPolicies } from '../../policies/directory.js'

const JSON_UTF8 = 'application/json; charset=utf-8'

export async function evaluateRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { directory, metrics, agents, auth, lane } = services

  /** The decision (serialised by hand by each path; the route's schema documents it). */
  const decide = (agent: AgentRecord, ap: AgentPolicies, body: EvaluateBody): Decision => {
    let d = ap.set.evaluate(buildInputV1(body as Record<string, unknown>, ap.info))
    metrics.decision('v1', d.allowed)
    if (!d.allowed) {
      d = directory.approvals.forBlocked(agent, d, (body.context as { tool?: unknown } | undefined)?.tool, body.action, body)
      agents.recordBlock(agent, body, d)
    }
    return d
  }
  /** The handler's work for an authenticated agent and a valid body: synchronous once its policies are compiled. */
  const answer = (agent: AgentRecord, body: EvaluateBody): Decision | Promise<Decision> => {
    ensureOwnAgent(agent, body.agent_id)
    const ap = directory.compiledFor(agent)
    if (ap !== undefined) return decide(agent, ap, body)
    return directory.forAgent(agent).then((compiled) => decide(agent, compiled, body))
  }

  app.post('/evaluate', {
    schema: {
      tags: ['v1'],
      summary: 'Evaluate an action before execution',
      body: EvaluateBody,
      response: { 200: EvaluateResponse, ...errorResponses(400, 401, 403, 413, 415, 429) }
    }
  }, (req, reply) => {
    const body = req.body as EvaluateBody
    const d = answer(agentOf(req), body)
    if (!(d instanceof Promise)) {
      reply.type(JSON_UTF8).send(evaluateResponseJson(d, body.context))
      return
    }
    return d.then((decided) => { reply.type(JSON_UTF8).send(evaluateResponseJson(decided, body.context)) })
  })

  const path = `${app.prefix}/evaluate`
  lane.add<CachedCaller>(app, {
    path,
    bodySchema: EvaluateBody,
    claim: (req) => auth.cachedV1(req.headers[auth.keyHeader]),
    admit: (caller) => { auth.admitCached(caller) },
    answer: (caller, body) => {
      const d = answer(caller.agent, body as EvaluateBody)
      return d instanceof Promise ? d.then((decided) => evaluateResponseBytes(decided, body.context)) : evaluateResponseBytes(d, body.context)
    },
    served: (_caller, statusCode, ms) => metrics.observe('POST', path, statusCode, ms / 1000)
  })
}
