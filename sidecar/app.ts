/**
 * buildSidecar(config): the sidecar's fastify instance (not listening; main.ts listens). It serves the
 * v1 agent surface on localhost (design.md, "The sidecar's promises"):
 * - POST /register, GET /secrets, POST /deregister: forwarded to the control plane as they are; the
 *   sidecar learns a registered agent's key (in memory only) and fetches its config; a /secrets
 *   answer is kept in memory until its `expires_at` and served while the control plane is away;
 * - GET /config/{agent_id}: from the config cache (refreshed when stale, the last good one kept);
 * - POST /evaluate: decided here, with the policy set compiled from the cached config; with no config
 *   and no control plane it fails open (or closed, with SERVICE_FAIL_OPEN=false);
 * - POST /events: written to the spool before the 202; the flusher sends them on;
 * - POST /heartbeat: forwarded; a `config_changed` answer refreshes the config at once.
 * A key the sidecar has not seen is verified once against the control plane (GET /config with it)
 * and then remembered by hash. The legacy surface (`/api/service/...`, bearer keys) is served the
 * same way: its config comes from the legacy GET /config, whose `v1_config` extension is compiled;
 * /evaluate answers locally in the legacy shape with an `eval_` id of its own.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'
import { randomBytes, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { SidecarConfig } from './config.js'
import { ConfigCache, type CachedConfig } from './config-cache.js'
import { Spool } from './spool.js'
import { Upstream, type UpstreamRequest, type UpstreamResponse } from './upstream.js'
import { DEFAULT_FLUSHER_OPTIONS, EventFlusher } from './event-flusher.js'
import { DecisionLog } from './decision-log.js'
import { SecretsCache } from './secrets-cache.js'
import { fastifyLogging, processLogger } from '../shared/logging.js'
import { AgentStats, Heartbeats, type HeartbeatAgent } from './heartbeat.js'
import { SidecarMetrics } from './metrics.js'
import { ConfigWatch } from './config-watch.js'
import { bearerToken, errorReply, renderError, useJsonBodies } from '../shared/http.js'
import { FastLane } from '../shared/fast-lane.js'
import { ServiceError, ensureOwnAgentId, unauthorized, unavailable } from '../shared/errors.js'
import { hashKey, keyKind } from '../shared/keys.js'
import { MemoryRateCounters, type Decision } from '../shared/policy/index.js'
import * as L from '../shared/contracts/legacy.js'
import { EvaluateBody, HeartbeatBody, evaluateResponseBytes, evaluateResponseJson, eventsBody, type ConfigResponse } from '../shared/contracts/v1.js'

/** Request bodies at most, as on the control plane (413 above). */
const BODY_LIMIT = 1024 * 1024 // 1 MiB

const JSON_UTF8 = 'application/json; charset=utf-8'
/** Legacy agents heartbeat every 30 s (interface.md: the legacy default). */
const LEGACY_HEARTBEAT_SECONDS = 30


/** The agent of a request: its key (and hash), its agent id, and its cached config if any. */
interface Caller {
  keyHash: string
  key: string
  agentId: string
  entry: CachedConfig | undefined
}

interface KnownKey {
  key: string
  agentId: string
}

export interface SidecarState {
  cache: ConfigCache
  spool: Spool
  upstream: Upstream
  flusher: EventFlusher
  /** Keys seen and verified, by hash (memory only). */
  keys: Map<string, KnownKey>
  decisions: DecisionLog
  /** The last /secrets answers, in memory until they expire. */
  secrets: SecretsCache
  heartbeats: Heartbeats
  /** Requests served per agent (by key hash), for the heartbeats' metrics. */
  stats: Map<string, AgentStats>
  /** The fast lane answering /evaluate for agents whose key and config are here. */
  lane: FastLane
}

export async function buildSidecar (config: SidecarConfig): Promise<FastifyInstance> {
  const names = { key: `x-${config.apiName}-key`, bootstrap: `x-${config.apiName}-bootstrap` }
  const legacyBase = `/api/${config.apiName}`
  const cpBase = `${legacyBase}/v1`
  const log = processLogger(config.logLevel, [names.key, names.bootstrap, 'authorization'])
  // /evaluate of an agent whose key and config are here is answered by the fast lane (shared/fast-lane.ts).
  const lane = new FastLane(!log.isLevelEnabled('debug'))
  const app = Fastify({ ...fastifyLogging(log), bodyLimit: BODY_LIMIT, forceCloseConnections: 'idle', serverFactory: lane.serverFactory })
  app.decorate('logger', log)
  const upstream = new Upstream(config.controlPlaneUrl, {
    connectTimeoutMs: config.connectTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    failureThreshold: config.breakerFailures,
    openMs: config.breakerOpenMs
  })
  const rates = new MemoryRateCounters()
  const cache = new ConfigCache(join(config.dataDir, 'configs'), {
    policySet: { rates },
    onBadFile: (file, err) => log.warn({ file, err: err.message }, 'a saved config cannot be read; skipped')
  })
  const spool = new Spool(join(config.dataDir, 'spool.db'), { maxEvents: config.spoolMaxEvents, maxBytes: config.spoolMaxBytes })
  const keys = new Map<string, KnownKey>()
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h)?.key, {
    apiName: config.apiName,
    onProblem: (message) => log.warn(message)
  })
  const decisions = new DecisionLog(spool)
  const stats = new Map<string, AgentStats>()
  const heartbeatAgents = (): HeartbeatAgent[] => [...keys].map(([keyHash, k]) => {
    const entry = cache.get(keyHash)
    const contract = keyKind(k.key) === 'agentLegacy' ? 'legacy' as const : 'v1' as const
    // Legacy agents beat every 30 s (interface.md's legacy default); v1 at their config's interval.
    const intervalSeconds = contract === 'legacy' ? LEGACY_HEARTBEAT_SECONDS : entry?.config.config.heartbeat_interval_seconds ?? 60
    return { keyHash, contract, key: k.key, agentId: k.agentId, configHash: entry?.config.config_hash, intervalSeconds }
  })
  const heartbeats = new Heartbeats(upstream, spool, heartbeatAgents, (h) => stats.get(h), (a) => refreshSoon(a.keyHash, a.key, a.agentId), { apiName: config.apiName })
  const metrics = new SidecarMetrics({ spool, flusher, upstream, heartbeats })
  const secrets = new SecretsCache()
  const forgetKey = (keyHash: string): void => {
    secrets.forget(keyHash)
    keys.delete(keyHash)
    cache.delete(keyHash)
    watch.forget(keyHash)
  }
  const watch = new ConfigWatch(config.controlPlaneUrl, {
    apiName: config.apiName,
    baseMs: 1_000,
    maxMs: 30_000,
    connectTimeoutMs: config.connectTimeoutMs,
    onConfig: (target, pushed) => {
      try {
        if (target.contract === 'v1') cache.put(target.keyHash, pushed as ConfigResponse)
        else {
          const answer = pushed as Record<string, unknown> & { v1_config?: ConfigResponse }
          if (answer.v1_config === undefined) throw new Error('a pushed legacy config has no v1_config')
          cache.put(target.keyHash, answer.v1_config, answer)
        }
      } catch (err) {
        log.warn({ err, agent: target.agentId }, 'a pushed config cannot be compiled; the cached one stays')
      }
    },
    onRevoked: (target) => forgetKey(target.keyHash),
    onProblem: (message) => log.debug(message)
  })
  /** A verified key: remembered, and its config watched. */
  const remember = (keyHash: string, key: string, agentId: string): void => {
    keys.set(keyHash, { key, agentId })
    watch.ensure({ keyHash, contract: keyKind(key) === 'agentLegacy' ? 'legacy' : 'v1', key, agentId })
  }
  const state: SidecarState = { cache, spool, upstream, flusher, keys, decisions, secrets, heartbeats, stats, lane }
  app.decorate('sidecar', state)
  cache.loadPersisted()

  app.setErrorHandler((err: FastifyError, req, reply) => {
    const { body, retryAfter } = errorReply(err)
    if (body.statusCode >= 500) log.error({ err }, 'request failed')
    if (retryAfter !== undefined) reply.header('retry-after', retryAfter)
    reply.code(body.statusCode).send(body)
  })
  const parse = useJsonBodies(app, BODY_LIMIT)
  lane.attach(app, {
    bodyLimit: BODY_LIMIT,
    parse,
    renderError: (err) => renderError(err, log)
  })

  /** Relays a control-plane answer as it is. */
  const relay = (reply: FastifyReply, res: UpstreamResponse): FastifyReply => {
    reply.code(res.status)
    const retry = res.headers['retry-after']
    if (typeof retry === 'string') reply.header('retry-after', retry)
    return res.json === undefined ? reply.send() : reply.send(res.json)
  }
  const unreachable = (err: unknown): ServiceError =>
    unavailable(`control plane unreachable: ${err instanceof Error ? err.message : String(err)}`, 5)

  /** Fetches and caches an agent's config with its key; returns the cache entry, or the control plane's refusal. */
  const fetchConfig = async (key: string, agentId: string): Promise<CachedConfig | UpstreamResponse> => {
    const res = await upstream.request({ method: 'GET', path: `${cpBase}/config/${encodeURIComponent(agentId)}`, headers: { [names.key]: key } })
    if (res.status !== 200) return res
    const keyHash = hashKey(key)
    const entry = cache.put(keyHash, res.json as ConfigResponse)
    remember(keyHash, key, agentId)
    return entry
  }

  /**
   * Fetches and caches a legacy key's config (GET /config with the bearer key): the legacy answer is
   * served as it came, and its `v1_config` extension is what the sidecar compiles and enforces.
   */
  const fetchLegacyConfig = async (key: string): Promise<CachedConfig | UpstreamResponse> => {
    const res = await upstream.request({ method: 'GET', path: `${legacyBase}/config`, headers: { authorization: `Bearer ${key}` } })
    if (res.status !== 200) return res
    const answer = res.json as Record<string, unknown> & { v1_config?: ConfigResponse }
    if (answer.v1_config === undefined) throw new Error('the control plane\'s legacy config has no v1_config: it is too old for local enforcement')
    const keyHash = hashKey(key)
    const entry = cache.put(keyHash, answer.v1_config, answer)
    remember(keyHash, key, answer.v1_config.agent_id)
    return entry
  }

  /** A refused config fetch as the error the agent gets (the control plane's status and message). */
  const refusal = (fetched: UpstreamResponse): ServiceError => {
    const message = (fetched.json as { message?: unknown } | undefined)?.message
    return new ServiceError(fetched.status === 403 ? 'forbidden' : 'unauthorized', typeof message === 'string' ? message : 'refused by the control plane')
  }

  /**
   * The calling agent (see `identify`), noted on the request for its stats. Synchronous when the key
   * is known here (every request but an agent's first): no promise on the decision path.
   */
  const agentOf = (req: FastifyRequest, agentId: string | undefined): Caller | Promise<Caller> => {
    const a = identify(req, agentId)
    if (a instanceof Promise) {
      return a.then((c) => {
        req.callerKeyHash = c.keyHash
        return c
      })
    }
    req.callerKeyHash = a.keyHash
    return a
  }
  /** One answered request of an agent, for its heartbeats' metrics. */
  const served = (keyHash: string, ms: number, statusCode: number): void => {
    let s = stats.get(keyHash)
    if (s === undefined) {
      s = new AgentStats()
      stats.set(keyHash, s)
    }
    s.record(ms, statusCode >= 500)
  }
  app.decorateRequest('callerKeyHash', null)
  app.addHook('onResponse', (req, reply, done) => {
    if (req.callerKeyHash !== null) served(req.callerKeyHash, reply.elapsedTime, reply.statusCode)
    done()
  })

  /**
   * The fast lane's claim on an agent's request: its key (from the header, `kind`) known here and its
   * config cached; else undefined, and fastify's route answers (verification, fail-open).
   */
  const knownCaller = (raw: unknown, kind: 'agentV1' | 'agentLegacy'): Caller | undefined => {
    const key = kind === 'agentV1' ? (typeof raw === 'string' ? raw.trim() : '') : bearerToken(raw)
    if (key === undefined || keyKind(key) !== kind) return undefined
    const keyHash = hashKey(key)
    const known = keys.get(keyHash)
    const entry = known === undefined ? undefined : cache.get(keyHash)
    return entry === undefined ? undefined : { keyHash, key, agentId: (known as KnownKey).agentId, entry }
  }

  /** The calling agent: its key checked (here if seen, else by the control plane), and its config. */
  const identify = (req: FastifyRequest, agentId: string | undefined): Caller | Promise<Caller> => {
    const raw = req.headers[names.key]
    const key = typeof raw === 'string' ? raw.trim() : ''
    if (key === '') throw unauthorized('missing API key')
    if (keyKind(key) !== 'agentV1') throw unauthorized('malformed API key')
    const keyHash = hashKey(key)
    const known = keys.get(keyHash)
    if (known !== undefined) {
      ensureOwnAgentId(known.agentId, agentId)
      return { keyHash, key, agentId: known.agentId, entry: cache.get(keyHash) }
    }
    return verify(key, keyHash, agentId)
  }

  /** A key not seen yet: checked by the control plane (its config fetched with it). */
  const verify = async (key: string, keyHash: string, agentId: string | undefined): Promise<Caller> => {
    const entry = cache.get(keyHash)
    const claimed = agentId ?? entry?.config.agent_id
    if (claimed === undefined) throw unauthorized('unknown API key')
    try {
      const fetched = await fetchConfig(key, claimed)
      if ('enforcer' in fetched) return { keyHash, key, agentId: claimed, entry: fetched }
      throw refusal(fetched)
    } catch (err) {
      if (err instanceof ServiceError) throw err
      // The control plane is unreachable: a key whose config was saved before is taken as it was.
      if (entry !== undefined && (agentId === undefined || agentId === entry.config.agent_id)) {
        remember(keyHash, key, entry.config.agent_id)
        return { keyHash, key, agentId: entry.config.agent_id, entry }
      }
      return { keyHash, key, agentId: claimed, entry: undefined }
    }
  }

  /** The calling legacy agent (bearer `zk_live_` key): known here, or checked by the control plane. */
  const legacyCaller = (req: FastifyRequest): Caller | Promise<Caller> => {
    const key = bearerToken(req.headers.authorization)
    if (key === undefined) throw unauthorized('missing API key')
    if (keyKind(key) !== 'agentLegacy') throw unauthorized('malformed API key')
    const keyHash = hashKey(key)
    req.callerKeyHash = keyHash
    const known = keys.get(keyHash)
    if (known !== undefined) return { keyHash, key, agentId: known.agentId, entry: cache.get(keyHash) }
    return verifyLegacy(key, keyHash)
  }

  const verifyLegacy = async (key: string, keyHash: string): Promise<Caller> => {
    const entry = cache.get(keyHash)
    try {
      const fetched = await fetchLegacyConfig(key)
      if ('enforcer' in fetched) return { keyHash, key, agentId: fetched.config.agent_id, entry: fetched }
      throw refusal(fetched)
    } catch (err) {
      if (err instanceof ServiceError) throw err
      // The control plane is unreachable: a key whose config was saved before is taken as it was;
      // an unknown one has no config (so /evaluate fails open or closed, /config is 503).
      if (entry !== undefined) {
        remember(keyHash, key, entry.config.agent_id)
        return { keyHash, key, agentId: entry.config.agent_id, entry }
      }
      return { keyHash, key, agentId: '', entry: undefined }
    }
  }

  /** Refreshes a stale config in the background (the stale one is enforced meanwhile). */
  const refreshing = new Set<string>()
  const refreshSoon = (keyHash: string, key: string, agentId: string): void => {
    if (refreshing.has(keyHash)) return
    refreshing.add(keyHash)
    const fetching = keyKind(key) === 'agentLegacy' ? fetchLegacyConfig(key) : fetchConfig(key, agentId)
    fetching.then((r) => {
      if (!('enforcer' in r) && (r.status === 401 || r.status === 403)) forgetKey(keyHash)
    }, (err: unknown) => log.debug({ err }, 'config refresh failed; the cached config stays'))
      .finally(() => refreshing.delete(keyHash))
  }

  /**
   * Forwards an agent's call with its key and relays the answer. A /secrets answer is kept in memory
   * until it expires and served while the control plane is away; a 204 to /deregister forgets the key.
   */
  const forwardAs = async (a: Caller, reply: FastifyReply, request: UpstreamRequest): Promise<FastifyReply> => {
    const isSecrets = request.method === 'GET' && /\/secrets(\/|$)/.test(request.path)
    let res: UpstreamResponse
    try {
      res = await upstream.request(request)
    } catch (err) {
      // Secrets fetched before, and not expired, are served while the control plane is away.
      const kept = isSecrets ? secrets.get(a.keyHash, request.path) : undefined
      if (kept !== undefined) return reply.send(kept)
      throw unreachable(err)
    }
    if (request.path.endsWith('/deregister') && res.status === 204) forgetKey(a.keyHash)
    if (isSecrets) {
      if (res.status === 200) secrets.put(a.keyHash, request.path, res.json)
      else if (res.status === 401 || res.status === 403) secrets.forget(a.keyHash)
      else if (res.status >= 500) {
        const kept = secrets.get(a.keyHash, request.path)
        if (kept !== undefined) return reply.send(kept)
      }
    }
    return relay(reply, res)
  }

  await app.register(async (v1) => {
    v1.post('/register', async (req, reply) => {
      const bootstrap = req.headers[names.bootstrap]
      let res: UpstreamResponse
      try {
        res = await upstream.request({ method: 'POST', path: `${cpBase}/register`, headers: typeof bootstrap === 'string' ? { [names.bootstrap]: bootstrap } : {}, body: req.body ?? {} })
      } catch (err) {
        throw unreachable(err)
      }
      const body = res.json as { agent_id?: string, api_key?: string } | undefined
      if (res.status === 201 && typeof body?.api_key === 'string' && typeof body.agent_id === 'string') {
        try {
          await fetchConfig(body.api_key, body.agent_id)
        } catch (err) {
          log.warn({ err }, 'registered, but the config could not be fetched yet')
          remember(hashKey(body.api_key), body.api_key, body.agent_id)
        }
      }
      return relay(reply, res)
    })

    v1.get('/config/:agent_id', async (req) => {
      const a = await agentOf(req, (req.params as { agent_id: string }).agent_id)
      if (a.entry === undefined) throw unreachable('no config is cached for this agent')
      if (cache.isStale(a.entry)) refreshSoon(a.keyHash, a.key, a.agentId)
      return a.entry.config
    })

    /** A v1 decision with the agent's cached config. */
    const decideV1 = (body: Record<string, unknown>, a: Caller, entry: CachedConfig): Decision => {
      if (cache.isStale(entry)) refreshSoon(a.keyHash, a.key, a.agentId)
      const decision = entry.enforcer.decideV1(body)
      decisions.record(a.keyHash, a.agentId, body, decision)
      metrics.decision(decision.allowed ? 'allowed' : 'blocked')
      return decision
    }
    lane.add<Caller>(v1, {
      path: `${cpBase}/evaluate`,
      bodySchema: EvaluateBody,
      claim: (req) => knownCaller(req.headers[names.key], 'agentV1'),
      admit: () => {},
      answer: (a, body) => {
        ensureOwnAgentId(a.agentId, typeof body.agent_id === 'string' ? body.agent_id : undefined)
        return evaluateResponseBytes(decideV1(body, a, a.entry as CachedConfig), body.context)
      },
      served: (a, statusCode, ms) => served(a.keyHash, ms, statusCode)
    })
    const decide = (reply: FastifyReply, body: Record<string, unknown>, a: Caller): void => {
      if (a.entry === undefined) {
        const cause = 'no policy config: the control plane is unreachable and none was saved'
        metrics.decision(config.failOpen ? 'fail_open' : 'fail_closed')
        reply.send(config.failOpen
          ? { allowed: true, reason: null, policies_evaluated: [], warnings: [`fail-open: ${cause}`], restrictions: {}, context: body.context ?? {} }
          : { allowed: false, reason: `fail-closed: ${cause}`, policies_evaluated: [], warnings: [], restrictions: {}, context: body.context ?? {} })
        return
      }
      // Serialised by hand, as on the control plane (the same text): a JSON string is sent as it is.
      reply.type(JSON_UTF8).send(evaluateResponseJson(decideV1(body, a, a.entry), body.context))
    }
    // Not async: with the key known and the config cached, the decision is made and sent synchronously.
    v1.post('/evaluate', { schema: { body: EvaluateBody } }, (req, reply) => {
      const body = (req.body ?? {}) as Record<string, unknown>
      const a = agentOf(req, typeof body.agent_id === 'string' ? body.agent_id : undefined)
      if (a instanceof Promise) return a.then((c) => decide(reply, body, c))
      decide(reply, body, a)
    })

    v1.post('/events', { schema: { body: eventsBody(1000) } }, async (req, reply) => {
      const body = req.body as { agent_id: string, events: Array<Record<string, unknown>> }
      const a = await agentOf(req, body.agent_id)
      const result = spool.append(a.keyHash, 'v1', a.agentId, body.events)
      if (spool.status().depth >= DEFAULT_FLUSHER_OPTIONS.batchSize) flusher.nudge()
      return reply.code(202).send({ accepted: result.accepted, batch_id: `batch_${randomUUID()}` })
    })

    v1.post('/heartbeat', { schema: { body: HeartbeatBody } }, async (req, reply) => {
      const body = (req.body ?? {}) as Record<string, unknown>
      const a = await agentOf(req, typeof body.agent_id === 'string' ? body.agent_id : undefined)
      try {
        const res = await upstream.request({ method: 'POST', path: `${cpBase}/heartbeat`, headers: { [names.key]: a.key }, body })
        if ((res.json as { config_changed?: unknown } | undefined)?.config_changed === true) refreshSoon(a.keyHash, a.key, a.agentId)
        return relay(reply, res)
      } catch {
        // The control plane is away: the agent's heartbeat is acknowledged here.
        return reply.code(202).send({ acknowledged: true, config_changed: false, next_heartbeat_seconds: a.entry?.config.config.heartbeat_interval_seconds ?? 60 })
      }
    })

    const forward = async (req: FastifyRequest, reply: FastifyReply, method: 'GET' | 'POST', path: string, agentId: string | undefined): Promise<FastifyReply> => {
      const a = await agentOf(req, agentId)
      return await forwardAs(a, reply, { method, path: `${cpBase}${path}`, headers: { [names.key]: a.key }, ...(method === 'POST' ? { body: req.body ?? {} } : {}) })
    }
    v1.get('/secrets', async (req, reply) => await forward(req, reply, 'GET', '/secrets', undefined))
    v1.get('/secrets/:agent_id', async (req, reply) => {
      const id = (req.params as { agent_id: string }).agent_id
      return await forward(req, reply, 'GET', `/secrets/${encodeURIComponent(id)}`, id)
    })
    v1.post('/deregister', async (req, reply) => await forward(req, reply, 'POST', '/deregister', undefined))
  }, { prefix: cpBase })

  // The legacy contract (interface.md 4.2): bearer keys, the same local decisions, legacy shapes.
  await app.register(async (legacy) => {
    legacy.post('/register', async (req, reply) => {
      const authorization = req.headers.authorization
      let res: UpstreamResponse
      try {
        res = await upstream.request({ method: 'POST', path: `${legacyBase}/register`, headers: typeof authorization === 'string' ? { authorization } : {}, body: req.body ?? {} })
      } catch (err) {
        throw unreachable(err)
      }
      const body = res.json as { agent_id?: string, api_key?: string } | undefined
      if (res.status === 201 && typeof body?.api_key === 'string' && typeof body.agent_id === 'string') {
        try {
          await fetchLegacyConfig(body.api_key)
        } catch (err) {
          log.warn({ err }, 'registered, but the config could not be fetched yet')
          remember(hashKey(body.api_key), body.api_key, body.agent_id)
        }
      }
      return relay(reply, res)
    })

    legacy.get('/config', async (req) => {
      const a = await legacyCaller(req)
      if (a.entry?.legacy === undefined) throw unreachable('no config is cached for this agent')
      if (cache.isStale(a.entry)) refreshSoon(a.keyHash, a.key, a.agentId)
      return a.entry.legacy
    })

    /** A legacy decision with the agent's cached config, as the answer's JSON text. */
    const legacyDecisionJson = (body: Record<string, unknown>, a: Caller, entry: CachedConfig, evaluationId: string): string => {
      if (cache.isStale(entry)) refreshSoon(a.keyHash, a.key, a.agentId)
      const d = entry.enforcer.decideLegacy(body)
      decisions.recordLegacy(a.keyHash, a.agentId, body, d, evaluationId)
      metrics.decision(d.allowed ? 'allowed' : 'blocked')
      return L.evaluateResponseJson(d, evaluationId)
    }
    lane.add<Caller>(legacy, {
      path: `${legacyBase}/evaluate`,
      bodySchema: L.EvaluateBody,
      claim: (req) => knownCaller(req.headers.authorization, 'agentLegacy'),
      admit: () => {},
      answer: (a, body) => legacyDecisionJson(body, a, a.entry as CachedConfig, `eval_${randomBytes(12).toString('base64url')}`),
      served: (a, statusCode, ms) => served(a.keyHash, ms, statusCode)
    })
    const decideLegacy = (reply: FastifyReply, body: Record<string, unknown>, a: Caller): void => {
      const evaluationId = `eval_${randomBytes(12).toString('base64url')}`
      if (a.entry === undefined) {
        const cause = 'no policy config: the control plane is unreachable and none was saved'
        metrics.decision(config.failOpen ? 'fail_open' : 'fail_closed')
        reply.send(config.failOpen
          ? { allowed: true, reason: null, policies_evaluated: 0, restrictions: {}, warnings: [`fail-open: ${cause}`], evaluation_id: evaluationId }
          : { allowed: false, reason: `fail-closed: ${cause}`, policies_evaluated: 0, restrictions: {}, warnings: [], evaluation_id: evaluationId })
        return
      }
      reply.type(JSON_UTF8).send(legacyDecisionJson(body, a, a.entry, evaluationId))
    }
    legacy.post('/evaluate', { schema: { body: L.EvaluateBody } }, (req, reply) => {
      const body = (req.body ?? {}) as Record<string, unknown>
      const a = legacyCaller(req)
      if (a instanceof Promise) return a.then((c) => decideLegacy(reply, body, c))
      decideLegacy(reply, body, a)
    })

    legacy.post('/events', { schema: { body: L.eventsBody(1000) } }, async (req, reply) => {
      const a = await legacyCaller(req)
      const body = req.body as L.EventsBody
      const result = spool.append(a.keyHash, 'legacy', a.agentId, body.events as Array<Record<string, unknown>>)
      if (spool.status().depth >= DEFAULT_FLUSHER_OPTIONS.batchSize) flusher.nudge()
      return reply.code(202).send({ accepted: result.accepted, dropped: result.dropped })
    })

    legacy.post('/heartbeat', { schema: { body: L.HeartbeatBody } }, async (req, reply) => {
      const a = await legacyCaller(req)
      try {
        const res = await upstream.request({ method: 'POST', path: `${legacyBase}/heartbeat`, headers: { authorization: `Bearer ${a.key}` }, body: req.body ?? {} })
        if ((res.json as { config_updated?: unknown } | undefined)?.config_updated === true) refreshSoon(a.keyHash, a.key, a.agentId)
        return relay(reply, res)
      } catch {
        // The control plane is away: the agent's heartbeat is acknowledged here.
        return reply.send({ acknowledged: true, config_updated: false })
      }
    })

    legacy.get('/secrets', async (req, reply) => {
      const a = await legacyCaller(req)
      return await forwardAs(a, reply, { method: 'GET', path: `${legacyBase}/secrets`, headers: { authorization: `Bearer ${a.key}` } })
    })
  }, { prefix: legacyBase })

  app.get('/healthz', async () => ({ status: 'ok' }))
  app.get('/metrics', async (_req, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(metrics.render()))
  app.get('/readyz', async (_req, reply) => {
    const missing = [...keys.keys()].filter((h) => cache.get(h) === undefined).length
    const body = { ready: missing === 0, agents: keys.size, without_config: missing, spool: spool.status(), upstream: upstream.status() }
    return reply.code(missing === 0 ? 200 : 503).send(body)
  })

  app.addHook('onReady', async () => {
    if (config.agentKey !== null) {
      // An injected key. A legacy key names its agent itself (legacy GET /config). A v1 key's agent id
      // is SERVICE_AGENT_ID, or a saved config's, or (with neither) the one its agent's first request
      // names. The config is fetched now, in the background; a saved one is enforced meanwhile.
      const key = config.agentKey
      const keyHash = hashKey(key)
      const saved = cache.get(keyHash)
      const legacyKey = keyKind(key) === 'agentLegacy'
      const agentId = config.agentId ?? saved?.config.agent_id
      if (saved !== undefined) remember(keyHash, key, saved.config.agent_id)
      if (legacyKey || agentId !== undefined) {
        const fetching = legacyKey ? fetchLegacyConfig(key) : fetchConfig(key, agentId as string)
        fetching.then((r) => {
          if ('enforcer' in r) return
          log.error({ status: r.status }, 'SERVICE_AGENT_KEY was refused by the control plane')
          if (r.status === 401 || r.status === 403) forgetKey(keyHash)
        }, (err: unknown) => log.warn({ err }, 'the config of SERVICE_AGENT_KEY could not be fetched at start; a saved one (if any) is enforced'))
      }
    }
    flusher.start()
    heartbeats.start()
  })
  app.addHook('onClose', async () => {
    heartbeats.stop()
    watch.stop()
    secrets.clear()
    decisions.flush()
    await flusher.stop()
    await upstream.close()
    spool.close()
  })
  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    sidecar: SidecarState
  }
  interface FastifyRequest {
    /** The key hash of the request's agent, once known (for its stats); null before. */
    callerKeyHash: string | null
  }
}
