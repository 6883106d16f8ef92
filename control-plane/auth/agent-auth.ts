/**
 * Who is calling: an agent's runtime key (v1 `X-Service-Key`, legacy `Authorization: Bearer`), a
 * bootstrap token (v1 register) or a tenant API key (legacy register). Keys are looked up by their
 * SHA-256 hash (an equality lookup on a hash leaks nothing useful about the key) and the found hash is
 * compared again in constant time. Only `active` and `provisioning` agents authenticate.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ensureOwnAgentId, forbidden, rateLimited, unauthorized } from '../../shared/errors.js'
import { bearerToken } from '../../shared/http.js'
import { hashKey, keyKind, safeEqual, verifyBootstrapToken, type KeyKind } from '../../shared/keys.js'
import type { AgentRecord, Store, Tenant } from '../store/store.js'
import type { Directory } from '../policies/directory.js'
import { WindowLimiter } from './rate-limit.js'

export interface AuthNames {
  /** `x-service-key` (lower case, as node gives headers). */
  keyHeader: string
  bootstrapHeader: string
}

export function authNames (apiName: string): AuthNames {
  return { keyHeader: `x-${apiName}-key`, bootstrapHeader: `x-${apiName}-bootstrap` }
}

const bearer = (req: FastifyRequest): string | undefined => bearerToken(req.headers.authorization)

const ACTIVE = new Set(['active', 'provisioning'])

/** A key found in the directory's cache: its hash and the agent holding it (not admitted yet). */
export interface CachedCaller {
  hash: string
  agent: AgentRecord
}

export class Authenticator {
  private readonly agentLimiter: WindowLimiter
  private readonly registerLimiter: WindowLimiter

  constructor (
    private readonly store: Store,
    private readonly directory: Directory,
    private readonly names: AuthNames,
    private readonly bootstrapSecret: string,
    limits: { agentRequestsPerSecond: number, registrationsPerMinute: number }
  ) {
    this.agentLimiter = new WindowLimiter(limits.agentRequestsPerSecond, 1000)
    this.registerLimiter = new WindowLimiter(limits.registrationsPerMinute, 60_000)
  }

  private admit (agent: AgentRecord | null | undefined, hash: string): AgentRecord {
    if (agent == null || !safeEqual(agent.key_hash, hash)) throw unauthorized('unknown API key')
    if (!ACTIVE.has(agent.status)) throw unauthorized(`agent is ${agent.status}`)
    const wait = this.agentLimiter.hit(hash)
    if (wait > 0) throw rateLimited(wait)
    return agent
  }

  /**
   * The agent of a runtime key. Answers synchronously when the key is cached (the hot path: no
   * promise, no microtask), else returns a promise; throws (or rejects) 401 / 429.
   */
  agentForKey (key: string | undefined, kind: KeyKind): AgentRecord | Promise<AgentRecord> {
    if (key === undefined || key === '') throw unauthorized('missing API key')
    if (keyKind(key) !== kind) throw unauthorized('malformed API key')
    const hash = hashKey(key)
    const cached = this.directory.cachedAgent(hash)
    if (cached !== undefined) return this.admit(cached, hash)
    return this.directory.agentByKeyHash(hash).then((agent) => this.admit(agent, hash))
  }

  /**
   * The fast lane's claim on a v1 request: a well-formed key whose agent is cached, with no side
   * effect (nothing counted, nothing fetched); else undefined, and fastify's route takes the request.
   */
  cachedV1 (header: unknown): CachedCaller | undefined {
    return this.cached(typeof header === 'string' ? header.trim() : undefined, 'agentV1')
  }

  /** cachedV1 for a legacy request (`Authorization: Bearer zk_live_...`). */
  cachedLegacy (authorization: unknown): CachedCaller | undefined {
    return this.cached(bearerToken(authorization), 'agentLegacy')
  }

  private cached (key: string | undefined, kind: KeyKind): CachedCaller | undefined {
    if (key === undefined || keyKind(key) !== kind) return undefined
    const hash = hashKey(key)
    const agent = this.directory.cachedAgent(hash)
    return agent == null ? undefined : { hash, agent }
  }

  /** What agentForKey does with a cached agent (401 if no longer active, 429 over the rate limit). */
  admitCached (caller: CachedCaller): AgentRecord {
    return this.admit(caller.agent, caller.hash)
  }

  /** The v1 key header's name (lower case). */
  get keyHeader (): string {
    return this.names.keyHeader
  }

  /** v1: the agent of the `X-Service-Key` header. */
  v1Agent (req: FastifyRequest): AgentRecord | Promise<AgentRecord> {
    const h = req.headers[this.names.keyHeader]
    return this.agentForKey(typeof h === 'string' ? h.trim() : undefined, 'agentV1')
  }

  /** Legacy: the agent of the bearer key. */
  legacyAgent (req: FastifyRequest): AgentRecord | Promise<AgentRecord> {
    return this.agentForKey(bearer(req), 'agentLegacy')
  }

  /** v1 register: the tenant id of a valid bootstrap token. */
  bootstrapTenant (req: FastifyRequest): string {
    const h = req.headers[this.names.bootstrapHeader]
    const token = typeof h === 'string' ? h.trim() : ''
    if (token === '') throw unauthorized('missing bootstrap token')
    const tenantId = verifyBootstrapToken(this.bootstrapSecret, token)
    if (tenantId === undefined) throw unauthorized('invalid bootstrap token')
    const wait = this.registerLimiter.hit(token)
    if (wait > 0) throw rateLimited(wait)
    return tenantId
  }

  /** Legacy register: the tenant of a tenant API key (`tk_live_`). */
  async tenantForKey (req: FastifyRequest): Promise<Tenant> {
    const key = bearer(req)
    if (key === undefined) throw unauthorized('missing tenant API key')
    if (keyKind(key) !== 'tenant') {
      throw keyKind(key) === undefined ? unauthorized('malformed tenant API key') : forbidden('registration needs a tenant API key, not an agent key')
    }
    const tenant = await this.store.findTenantByKeyHash(hashKey(key))
    if (tenant === undefined) throw unauthorized('unknown tenant API key')
    const wait = this.registerLimiter.hit(hashKey(key))
    if (wait > 0) throw rateLimited(wait)
    return tenant
  }
}

/** 403 unless `agentId` (path or body) names the authenticated agent. */
export function ensureOwnAgent (agent: AgentRecord, agentId: string | undefined): void {
  ensureOwnAgentId(agent.agent_id, agentId)
}

/**
 * An onRequest hook that authenticates the agent before the body is read or validated (so a request
 * without a valid key is 401 whatever its body, and costs no parsing); the agent lands on req.agent.
 */
export function agentHook (resolve: (req: FastifyRequest) => AgentRecord | Promise<AgentRecord>) {
  return (req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    let found: AgentRecord | Promise<AgentRecord>
    try {
      found = resolve(req)
    } catch (err) {
      done(err as Error)
      return
    }
    if (found instanceof Promise) {
      found.then((agent) => { req.agent = agent; done() }, (err: Error) => done(err))
    } else {
      req.agent = found
      done()
    }
  }
}

/** The agent authenticated by agentHook. */
export function agentOf (req: FastifyRequest): AgentRecord {
  if (req.agent === null) throw unauthorized('missing API key')
  return req.agent
}

declare module 'fastify' {
  interface FastifyRequest {
    agent: AgentRecord | null
  }
}
