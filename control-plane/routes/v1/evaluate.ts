/** POST /api/service/v1/evaluate: allow or block an action. Always 200 for a decision. */
import type { FastifyInstance } from 'fastify'
import { EvaluateBody, EvaluateResponse } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { buildInputV1 } from '../../../shared/policy/index.js'
import { ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'

export async function evaluateRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const { auth, directory, metrics } = services
  const allowedCount = metrics.decisions.labels('v1', 'allowed')
  const blockedCount = metrics.decisions.labels('v1', 'blocked')
  app.post('/evaluate', {
    schema: {
      tags: ['v1'],
      summary: 'Evaluate an action before execution',
      body: EvaluateBody,
      response: { 200: EvaluateResponse, ...errorResponses(400, 401, 403, 413, 415, 429) }
    }
  }, async (req) => {
    const agent = await auth.v1Agent(req)
    const body = req.body as EvaluateBody
    ensureOwnAgent(agent, body.agent_id)
    const ap = await directory.forAgent(agent)
    const d = ap.set.evaluate(buildInputV1(body as Record<string, unknown>, ap.info))
    ;(d.allowed ? allowedCount : blockedCount).inc()
    return {
      allowed: d.allowed,
      reason: d.reason,
      policies_evaluated: d.policies_evaluated,
      warnings: d.warnings,
      restrictions: d.restrictions,
      context: body.context ?? {}
    }
  })
}
