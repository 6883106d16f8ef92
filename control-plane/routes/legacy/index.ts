/**
 * The legacy contract, `/api/<name>/` (interface.md section 4.2): bearer authentication, a tenant API
 * key for registration and `zk_live_` agent keys for everything else.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import * as L from '../../../shared/contracts/legacy.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { buildInputLegacy } from '../../../shared/policy/index.js'
import type { RouteOptions } from '../../services.js'
import { agentHook, agentOf, type CachedCaller } from '../../auth/agent-auth.js'
import { LEGACY_HEARTBEAT_SECONDS } from '../../health/monitor.js'
import { SECRETS_TTL_MS } from '../v1/secrets.js'
import { serveConfigWatch, watchStreams } from '../v1/config-watch.js'
import { configResponse, type AgentPolicies } from '../../policies/directory.js'
import type { AgentRecord } from '../../store/store.js'

export const LEGACY_CACHE_TTL = 300

const JSON_UTF8 = 'application/json; charset=utf-8'

function legacySettings (): { cache_ttl: number, heartbeat_interval_seconds: number, event_batch_size: number, event_flush_interval_seconds: number } {
  return { cache_ttl: LEGACY_CACHE_TTL, heartbeat_interval_seconds: LEGACY_HEARTBEAT_SECONDS, event_batch_size: 100, event_flush_interval_seconds: 5 }
}

/** Event category of a legacy event type. */
function categoryOf (type: string): string {
  if (type === 'policy.blocked') return 'audit'
  if (type === 'error.occurred') return 'alert'
  return 'telemetry'
}

function legacyConfig (agent: AgentRecord, ap: AgentPolicies): Record<string, unknown> {
  return {
    agent_id: agent.agent_id,
    policies: ap.legacy,
    allowed_models: ap.set.restrictions.allowed_models ?? [],
    features: {
      content_scanning: ap.legacy.some((p) => p.type === 'content_filter'),
      audit_logging: true,
      rate_limiting: ap.legacy.some((p) => p.type === 'rate_limit'),
      budget_tracking: ap.legacy.some((p) => p.type === 'budget_limit')
    },
    cache_ttl: LEGACY_CACHE_TTL,
    config_hash: ap.hash,
    v1_config: configResponse(agent, ap)
  }
}

export async function legacyRoutes (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const { auth, agents, directory, ingest, metrics, config, legacyServed, lane } = services
  const legacyAuth = agentHook((req) => auth.legacyAgent(req))

  app.post('/register', {
    schema: {
      tags: ['legacy'],
      summary: 'Register an agent with a tenant API key (Authorization: Bearer tk_live_...)',
      body: L.RegisterBody,
      response: { 201: L.RegisterResponse, ...errorResponses(400, 401, 403, 409, 413, 415, 429) }
    }
  }, async (req, reply) => {
    const tenant = await auth.tenantForKey(req)
    const body = req.body as L.RegisterBody
    const metadata: Record<string, unknown> = body.metadata ?? {}
    const { agent, key } = await agents.register({
      tenantId: tenant.id,
      agentId: body.agent_id,
      slugBase: body.name,
      name: body.name,
      agentType: 'custom',
      capabilities: body.capabilities ?? [],
      metadata,
      deploymentId: body.deployment_id ?? (typeof metadata.deployment === 'string' ? metadata.deployment : null),
      contract: 'legacy'
    })
    const ap = await directory.forAgent(agent)
    reply.code(201)
    return { agent_id: agent.agent_id, api_key: key.key, api_key_prefix: key.prefix, config: legacySettings(), policies: ap.legacy }
  })

  /**
   * A legacy decision, kept in the interaction log under its `evaluation_id` (written off the
   * request path), as the answer's JSON text (serialised by hand; the route's schema documents it).
   */
  const decide = (agent: AgentRecord, ap: AgentPolicies, body: L.EvaluateBody): string => {
    const raw = ap.set.evaluate(buildInputLegacy(body as Record<string, unknown>, ap.info))
    const d = raw.allowed ? raw : directory.approvals.forBlocked(agent, raw, (body.context as { tool?: unknown } | undefined)?.tool, body.request_type, body)
    metrics.decision('legacy', d.allowed)
    const evaluationId = `eval_${randomBytes(12).toString('base64url')}`
    ingest.writeLater([{
      id: evaluationId,
      tenant_id: agent.tenant_id,
      agent_uuid: agent.id,
      allowed: d.allowed,
      reason: d.reason,
      request: body,
      decision: {
        allowed: d.allowed,
        reason: d.reason,
        policies_evaluated: d.policies_evaluated.length,
        restrictions: d.restrictions,
        warnings: d.warnings,
        evaluation_id: evaluationId,
        policies: d.policies_evaluated
      },
      created_at: new Date().toISOString()
    }])
    return L.evaluateResponseJson(d, evaluationId)
  }
  /** Synchronous once the agent's policies are compiled (every request but its first). */
  const evaluate = (agent: AgentRecord, body: L.EvaluateBody): string | Promise<string> => {
    const ap = directory.compiledFor(agent)
    if (ap !== undefined) return decide(agent, ap, body)
    return directory.forAgent(agent).then((compiled) => decide(agent, compiled, body))
  }

  app.post('/evaluate', {
    onRequest: legacyAuth,
    schema: {
      tags: ['legacy'],
      summary: 'Evaluate a request; always 200, check allowed',
      body: L.EvaluateBody,
      response: { 200: L.EvaluateResponse, ...errorResponses(400, 401, 413, 415, 429) }
    }
  }, (req, reply) => {
    const json = evaluate(agentOf(req), req.body as L.EvaluateBody)
    if (typeof json === 'string') {
      reply.type(JSON_UTF8).send(json)
      return
    }
    return json.then((text) => { reply.type(JSON_UTF8).send(text) })
  })
  // The fast lane answers an agent whose key is cached (shared/fast-lane.ts), with the same steps.
  const evaluatePath = `${app.prefix}/evaluate`
  lane.add<CachedCaller>(app, {
    path: evaluatePath,
    bodySchema: L.EvaluateBody,
    claim: (req) => auth.cachedLegacy(req.headers.authorization),
    admit: (caller) => { auth.admitCached(caller) },
    answer: (caller, body) => evaluate(caller.agent, body as L.EvaluateBody),
    served: (_caller, statusCode, ms) => metrics.observe('POST', evaluatePath, statusCode, ms / 1000)
  })

  app.get('/config', {
    onRequest: legacyAuth,
    schema: { tags: ['legacy'], summary: 'Agent config and effective policies', response: { 200: L.ConfigResponse, ...errorResponses(401, 429) } }
  }, async (req) => {
    const agent = agentOf(req)
    const ap = await directory.forAgent(agent)
    legacyServed.set(agent.id, ap.hash)
    return legacyConfig(agent, ap)
  })

  // Extension for sidecars: the legacy /config answer now and after every change, as server-sent
  // events (what GET /config/{agent_id}/watch is for v1 agents).
  const watching = watchStreams(app)
  app.get('/config/watch', {
    onRequest: legacyAuth,
    schema: {
      tags: ['legacy'],
      summary: 'Server-sent events: the legacy /config answer now and after every change (for sidecars)',
      response: { ...errorResponses(401, 429) }
    }
  }, async (req, reply) => {
    const agent = agentOf(req)
    const render = async (a: AgentRecord): Promise<{ config_hash: string }> => legacyConfig(a, await directory.forAgent(a)) as { config_hash: string }
    serveConfigWatch(services, watching, reply, agent, await render(agent), render, (a, body) => legacyServed.set(a.id, body.config_hash))
  })

  app.post('/events', {
    onRequest: legacyAuth,
    schema: {
      tags: ['legacy'],
      summary: 'Submit buffered events',
      body: L.eventsBody(config.maxEventsPerBatch),
      response: { 202: L.EventsResponse, ...errorResponses(400, 401, 413, 415, 429, 503) }
    }
  }, async (req, reply) => {
    const agent = agentOf(req)
    const body = req.body as L.EventsBody
    await agents.events(agent, body.events.map((e) => {
      const data: Record<string, unknown> = e.data ?? {}
      return {
        clientId: e.id ?? null,
        type: e.type,
        category: categoryOf(e.type),
        timestamp: e.timestamp,
        userId: typeof data.user_id === 'string' ? data.user_id : null,
        payload: data,
        evaluationId: e.evaluation_id ?? null
      }
    }))
    metrics.eventsAccepted('legacy', body.events.length)
    reply.code(202)
    return { accepted: body.events.length, dropped: 0 }
  })

  app.post('/heartbeat', {
    onRequest: legacyAuth,
    schema: {
      tags: ['legacy'],
      summary: 'Report health; config_updated says when to re-fetch /config',
      body: L.HeartbeatBody,
      response: { 200: L.HeartbeatResponse, ...errorResponses(400, 401, 413, 415, 429) }
    }
  }, async (req) => {
    const agent = agentOf(req)
    const body = req.body as L.HeartbeatBody
    const ap = await directory.forAgent(agent)
    await agents.heartbeat(agent, body.status, { metrics: body.metrics ?? null, config_hash: body.config_hash ?? null })
    const known = body.config_hash ?? legacyServed.get(agent.id)
    return { acknowledged: true, config_updated: known !== undefined && known !== ap.hash }
  })

  app.get('/secrets', {
    onRequest: legacyAuth,
    schema: { tags: ['legacy'], summary: 'Secrets granted to the agent', response: { 200: L.SecretsResponse, ...errorResponses(401, 429) } }
  }, async (req) => {
    const agent = agentOf(req)
    return { secrets: await agents.secrets(agent), expires_at: new Date(Date.now() + SECRETS_TTL_MS).toISOString() }
  })
}
