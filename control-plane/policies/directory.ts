/**
 * What the request path reads, cached in memory: agents by key hash, each agent's compiled effective
 * policy set and config, each tenant's budget ledger. Everything is dropped when the database's change
 * counter moves (a write by this process, or by another one such as `agentgov admin`, seen within
 * `pollMs`), so a change reaches the next request.
 */
import type { FastifyBaseLogger } from 'fastify'
import {
  MemoryBudgetLedger, MemoryRateCounters, agentInfoOf, compilePolicySet, effectivePolicies, periodStart,
  type AgentInfo, type PolicySet
} from '../../shared/policy/index.js'
import { contentHash } from '../../shared/canonical-json.js'
import type { AgentSettings } from '../../shared/contracts/common.js'
import type { ConfigResponse, PolicyV1 } from '../../shared/contracts/v1.js'
import type { PolicyLegacy } from '../../shared/contracts/legacy.js'
import type { AgentRecord, EventRow, PolicyRecord, Store } from '../store/store.js'
import { Approvals } from './approvals.js'

export interface AgentPolicies {
  info: AgentInfo
  set: PolicySet
  v1: PolicyV1[]
  legacy: PolicyLegacy[]
  settings: AgentSettings
  /** sha256 of the canonical JSON of {config, policies} (v1 form). */
  hash: string
  /** Latest update time of the agent's policies (or of the agent, when it has none). */
  updatedAt: string
}

export function agentInfo (a: AgentRecord): AgentInfo {
  return agentInfoOf(a)
}

export function legacyPolicyId (uuid: string): string {
  return `pol_${uuid.replace(/-/g, '')}`
}

/** The body of v1 GET /config/{agent_id} (and of the config watch's events). */
export function configResponse (agent: AgentRecord, ap: AgentPolicies): ConfigResponse {
  return {
    agent_id: agent.agent_id,
    config: ap.settings,
    policies: ap.v1,
    config_hash: ap.hash,
    updated_at: ap.updatedAt,
    agent: {
      agent_id: agent.agent_id,
      agent_type: agent.agent_type,
      capabilities: agent.capabilities,
      metadata: agent.metadata,
      deployment_id: agent.deployment_id
    }
  }
}

const MAX_KEY_CACHE = 50_000

export class Directory {
  private seq = -1
  private timer: NodeJS.Timeout | null = null
  private polling = false
  private keys = new Map<string, AgentRecord | null>()
  private tenantPolicies = new Map<string, Promise<PolicyRecord[]>>()
  private agents = new Map<string, Promise<AgentPolicies>>()
  /** The same, once compiled: read without awaiting on the hot path. */
  private ready = new Map<string, AgentPolicies>()
  private readonly ledgers = new Map<string, Promise<MemoryBudgetLedger>>()
  /** Sliding-window counters of rate_limit policies; they survive recompiles. */
  readonly rates = new MemoryRateCounters()
  /** The approvals human_oversight policies consult (a mirror of the open ones in the store). */
  readonly approvals: Approvals
  /** Told after any change to agents, policies or secrets (from this process or another one). */
  private readonly listeners = new Set<() => void>()

  constructor (
    private readonly store: Store,
    private readonly opts: { pollMs: number, heartbeatIntervalSeconds: number, log: FastifyBaseLogger }
  ) {
    this.approvals = new Approvals(store, (err) => opts.log.error({ err }, 'an approval could not be written'))
  }

  async start (): Promise<void> {
    this.seq = await this.store.configSeq()
    await this.approvals.reload()
    this.timer = setInterval(() => { void this.poll() }, this.opts.pollMs)
    this.timer.unref()
  }

  stop (): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  status (): { seq: number, cachedAgents: number, cachedKeys: number } {
    return { seq: this.seq, cachedAgents: this.agents.size, cachedKeys: this.keys.size }
  }

  private async poll (): Promise<void> {
    if (this.polling) return
    this.polling = true
    try {
      const seq = await this.store.configSeq()
      if (seq !== this.seq) {
        this.seq = seq
        this.clear()
        this.notify()
        this.approvals.reload().catch((err: unknown) => this.opts.log.error({ err }, 'cannot read the approvals'))
      }
    } catch (err) {
      this.opts.log.error({ err }, 'cannot read the change counter')
    } finally {
      this.polling = false
    }
  }

  private clear (): void {
    this.keys = new Map()
    this.tenantPolicies = new Map()
    this.agents = new Map()
    this.ready = new Map()
  }

  /** Call after this process wrote agents, policies or secrets. */
  async changed (): Promise<void> {
    this.clear()
    this.seq = await this.store.configSeq()
    this.notify()
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  subscribe (listener: () => void): () => void {
    this.listeners.add(listener)
    return () => { this.listeners.delete(listener) }
  }

  private notify (): void {
    for (const listener of [...this.listeners]) {
      try {
        listener()
      } catch (err) {
        this.opts.log.error({ err }, 'a change listener failed')
      }
    }
  }

  /** The cached answer of agentByKeyHash: an agent, null (unknown key), or undefined (not cached). */
  cachedAgent (hash: string): AgentRecord | null | undefined {
    return this.keys.get(hash)
  }

  /** The agent holding a key (by hash), or undefined. Unknown hashes are cached too, until a change. */
  async agentByKeyHash (hash: string): Promise<AgentRecord | undefined> {
    const cached = this.keys.get(hash)
    if (cached !== undefined) return cached ?? undefined
    const keys = this.keys
    const agent = await this.store.findAgentByKeyHash(hash)
    // A change that cleared the cache meanwhile makes this answer stale: do not cache it.
    if (keys === this.keys) {
      if (this.keys.size >= MAX_KEY_CACHE) this.keys = new Map()
      this.keys.set(hash, agent ?? null)
    }
    return agent
  }

  /** The agent's compiled policies when they are ready, without waiting; else undefined. */
  compiledFor (agent: AgentRecord): AgentPolicies | undefined {
    return this.ready.get(agent.id)
  }

  settings (): AgentSettings {
    return {
      heartbeat_interval_seconds: this.opts.heartbeatIntervalSeconds,
      event_batch_size: 100,
      event_flush_interval_seconds: 5,
      config_refresh_interval_seconds: 300
    }
  }

  private policiesOf (tenantId: string): Promise<PolicyRecord[]> {
    let p = this.tenantPolicies.get(tenantId)
    if (p === undefined) {
      p = this.store.listPolicies(tenantId)
      p.catch(() => this.tenantPolicies.delete(tenantId))
      this.tenantPolicies.set(tenantId, p)
    }
    return p
  }

  /** The agent's compiled effective policies and config, compiled once per change. */
  forAgent (agent: AgentRecord): Promise<AgentPolicies> {
    let p = this.agents.get(agent.id)
    if (p === undefined) {
      const agents = this.agents
      const ready = this.ready
      p = this.build(agent)
      p.then((ap) => { if (ready === this.ready) ready.set(agent.id, ap) }, () => agents.delete(agent.id))
      agents.set(agent.id, p)
    }
    return p
  }

  private async build (agent: AgentRecord): Promise<AgentPolicies> {
    const [all, budget] = await Promise.all([this.policiesOf(agent.tenant_id), this.ledger(agent.tenant_id)])
    const info = agentInfo(agent)
    const effective = effectivePolicies(all, info)
    const log = this.opts.log
    const set = compilePolicySet(effective, {
      rates: this.rates,
      budget,
      approvals: this.approvals,
      onError: (policy, err) => log.error({ policy: policy.name, err: err.message }, 'policy failed; it counts as fail')
    })
    const shown = effective.filter((p) => p.enforcement !== 'disabled')
    const v1: PolicyV1[] = shown.map((p) => ({
      id: p.id, name: p.name, type: p.type, enforcement: p.enforcement, config: p.config,
      priority: p.priority, scope_type: p.scope_type, scope_id: p.scope_id === '' ? null : p.scope_id
    }))
    const legacy: PolicyLegacy[] = shown.map((p) => ({ id: legacyPolicyId(p.id), type: p.type, config: p.config, scope: p.scope_type.toLowerCase() }))
    const settings = this.settings()
    const updatedAt = effective.reduce((max, p) => p.updated_at > max ? p.updated_at : max, agent.created_at)
    return { info, set, v1, legacy, settings, hash: contentHash({ config: settings, policies: v1 }), updatedAt }
  }

  /** The tenant's spend ledger, rebuilt from stored events on first use. */
  ledger (tenantId: string): Promise<MemoryBudgetLedger> {
    let p = this.ledgers.get(tenantId)
    if (p === undefined) {
      p = (async () => {
        const ledger = new MemoryBudgetLedger()
        const since = new Date(Math.min(periodStart('month', Date.now()), periodStart('day', Date.now()))).toISOString()
        for (const row of await this.store.spendSince(tenantId, since)) {
          ledger.record({ agentId: row.agent_id, userId: row.user_id, usd: row.usd, at: Date.parse(row.at) })
        }
        return ledger
      })()
      p.catch(() => this.ledgers.delete(tenantId))
      this.ledgers.set(tenantId, p)
    }
    return p
  }

  /** Adds committed costs to the ledgers already loaded (others load them from the database). */
  recordCosts (events: EventRow[]): void {
    for (const e of events) {
      if (e.cost_usd === null) continue
      const p = this.ledgers.get(e.tenant_id)
      if (p === undefined) continue
      void p.then((ledger) => ledger.record({ agentId: e.agent_id, userId: e.user_id, usd: e.cost_usd as number, at: Date.parse(e.timestamp) }), () => {})
    }
  }
}
