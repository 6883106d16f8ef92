/**
 * What the agent-facing routes of both contracts do, once: register, secrets, events, heartbeats,
 * deregistration. Routes only translate between their wire shapes and these calls.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { conflict, unavailable } from '../../shared/errors.js'
import { mintKey, type KeyKind, type MintedKey } from '../../shared/keys.js'
import type { SecretBox } from '../../shared/secret-box.js'
import { blockedPayload } from '../../shared/contracts/v1.js'
import type { Decision } from '../../shared/policy/index.js'
import type { AgentRecord, Contract, EventRow, HealthStatus, ProviderKeyRecord, SecretRecord, Store } from '../store/store.js'
import type { Directory } from '../policies/directory.js'
import type { IngestWriter } from '../events/ingest-writer.js'

export const DEFAULT_TENANT_ID = '00000000-0000-0000-0000-000000000001'

export interface NewAgent {
  tenantId: string
  /** An explicit agent_id (409 when taken), or undefined to generate one from `slugBase`. */
  agentId: string | undefined
  slugBase: string
  name: string | undefined
  agentType: string
  capabilities: string[]
  metadata: Record<string, unknown>
  deploymentId: string | null
  contract: Contract
}

/** `My Agent!` -> `my-agent`; '' when nothing usable is left. */
export function slugify (text: string): string {
  return text.toLowerCase().normalize('NFKD').replace(/[^a-z0-9_-]+/g, '-').replace(/^[-_]+|-+$/g, '').slice(0, 80)
}

export interface IncomingEvent {
  clientId: string | null
  type: string
  category: string
  timestamp: string
  userId: string | null
  payload: unknown
  evaluationId: string | null
}

function costOf (payload: unknown): number | null {
  if (payload === null || typeof payload !== 'object') return null
  const c = (payload as Record<string, unknown>).cost_usd
  return typeof c === 'number' && Number.isFinite(c) && c > 0 ? c : null
}

/** What a provider key is sealed with besides the master key: its tenant and provider. */
export function providerAad (tenantId: string, provider: string): string {
  return `llm-provider:${tenantId}:${provider}`
}

/** A stored provider key in plaintext (it stays in memory, for the call that needs it). */
export function openProviderKey (box: SecretBox, p: Pick<ProviderKeyRecord, 'tenant_id' | 'provider' | 'key_sealed'>): string {
  return box.open(p.key_sealed, providerAad(p.tenant_id, p.provider))
}

export function secretAad (s: { tenant_id: string, scope_type: string, scope_id: string, name: string }): string {
  return `secret:${s.tenant_id}:${s.scope_type}:${s.scope_id}:${s.name}`
}

export class AgentService {
  constructor (
    private readonly store: Store,
    private readonly directory: Directory,
    private readonly ingest: IngestWriter,
    private readonly box: SecretBox,
    private readonly log: FastifyBaseLogger
  ) {}

  /** Creates the tenant of a valid bootstrap token on first use. */
  async ensureTenant (tenantId: string): Promise<void> {
    if (await this.store.getTenant(tenantId) !== undefined) return
    try {
      await this.store.createTenant({ id: tenantId, name: tenantId === DEFAULT_TENANT_ID ? 'default' : `tenant-${tenantId.slice(0, 8)}` })
    } catch (err) {
      // Created meanwhile by a concurrent request: fine.
      if (await this.store.getTenant(tenantId) === undefined) throw err
    }
  }

  async register (n: NewAgent): Promise<{ agent: AgentRecord, key: MintedKey }> {
    const kind: KeyKind = n.contract === 'v1' ? 'agentV1' : 'agentLegacy'
    const base = slugify(n.slugBase) || 'agent'
    for (let attempt = 0; attempt < 5; attempt++) {
      const agentId = n.agentId ?? (n.contract === 'v1' || attempt > 0
        ? `${base.slice(0, 90)}-${randomBytes(4).toString('hex')}`
        : base)
      const key = mintKey(kind)
      const now = new Date().toISOString()
      const agent: AgentRecord = {
        id: randomUUID(),
        tenant_id: n.tenantId,
        agent_id: agentId,
        name: n.name ?? agentId,
        agent_type: n.agentType,
        capabilities: n.capabilities,
        metadata: n.metadata,
        deployment_id: n.deploymentId,
        key_hash: key.hash,
        key_prefix: key.prefix,
        contract: n.contract,
        status: 'active',
        health: 'unknown',
        last_heartbeat: null,
        created_at: now,
        updated_at: now
      }
      if (await this.store.createAgent(agent)) {
        await this.directory.changed()
        await this.audit(agent, 'agent.registered', { agent_type: agent.agent_type, contract: n.contract })
        return { agent, key }
      }
      if (n.agentId !== undefined) throw conflict(`agent_id "${n.agentId}" already exists in this tenant`)
    }
    throw conflict('could not generate a free agent_id; send one')
  }

  /**
   * The LLM providers granted to the agent: the tenant's active provider keys (settings), opened
   * from their seal. A key that does not open under the master key is left out and logged.
   */
  async providers (agent: AgentRecord): Promise<Record<string, { api_key: string, base_url: string | null }>> {
    const out: Record<string, { api_key: string, base_url: string | null }> = {}
    for (const p of await this.store.listProviderKeys(agent.tenant_id)) {
      if (!p.is_active) continue
      try {
        out[p.provider] = { api_key: openProviderKey(this.box, p), base_url: p.base_url }
      } catch {
        this.log.error({ provider: p.provider }, 'a stored provider key does not open with the master key')
      }
    }
    return out
  }

  /** The secrets granted to the agent: tenant, then deployment, then agent scope (narrower wins). */
  async secrets (agent: AgentRecord): Promise<Record<string, string>> {
    const deployment = agent.deployment_id ?? (typeof agent.metadata.deployment === 'string' ? agent.metadata.deployment : null)
    const rank = (s: SecretRecord): number => {
      if (s.scope_type === 'tenant') return 1
      if (s.scope_type === 'deployment' && deployment !== null && s.scope_id === deployment) return 2
      if (s.scope_type === 'agent' && s.scope_id === agent.agent_id) return 3
      return 0
    }
    const granted = (await this.store.listSecrets(agent.tenant_id)).filter((s) => rank(s) > 0).sort((a, b) => rank(a) - rank(b))
    const out: Record<string, string> = {}
    for (const s of granted) {
      try {
        out[s.name] = this.box.open(s.value_sealed, secretAad(s))
      } catch {
        this.log.error({ secret: s.name, scope: s.scope_type }, 'a stored secret does not decrypt with the master key')
      }
    }
    return out
  }

  /** Stores a batch; resolves once committed. */
  async events (agent: AgentRecord, incoming: IncomingEvent[]): Promise<string> {
    const batchId = `batch_${randomBytes(12).toString('base64url')}`
    const receivedAt = new Date().toISOString()
    const rows: EventRow[] = incoming.map((e) => ({
      id: randomUUID(),
      tenant_id: agent.tenant_id,
      agent_uuid: agent.id,
      agent_id: agent.agent_id,
      event_type: e.type,
      category: e.category,
      timestamp: new Date(e.timestamp).toISOString(),
      user_id: e.userId,
      payload: e.payload ?? {},
      evaluation_id: e.evaluationId,
      batch_id: batchId,
      client_event_id: e.clientId,
      cost_usd: costOf(e.payload),
      received_at: receivedAt
    }))
    if (rows.length === 0) return batchId
    try {
      await this.ingest.write(rows)
    } catch (err) {
      this.log.error({ err }, 'event batch not committed')
      throw unavailable('events could not be stored; retry', 1)
    }
    return batchId
  }

  async heartbeat (agent: AgentRecord, health: HealthStatus, report: unknown): Promise<void> {
    await this.store.recordHeartbeat(agent.id, { health, at: new Date().toISOString(), report })
  }

  /**
   * A blocked v1 decision, kept as a `policy.blocked` audit event (what the portal's overview counts
   * and the audit trail shows). Not awaited by the decision path: a failure is logged.
   */
  recordBlock (agent: AgentRecord, body: { action?: unknown, user_id?: unknown, context?: unknown }, d: Pick<Decision, 'reason' | 'policies_evaluated'>): void {
    const context = (body.context !== null && typeof body.context === 'object' ? body.context : {}) as Record<string, unknown>
    this.events(agent, [{
      clientId: null,
      type: 'policy.blocked',
      category: 'audit',
      timestamp: new Date().toISOString(),
      userId: typeof body.user_id === 'string' ? body.user_id : null,
      payload: blockedPayload(body.action, context.tool ?? context.tool_name, context.model, d, 'control-plane'),
      evaluationId: null
    }]).catch(() => {}) // logged by events()
  }

  async deregister (agent: AgentRecord): Promise<void> {
    await this.store.setAgentStatus(agent.id, 'terminated', 'unknown')
    await this.directory.changed()
    await this.audit(agent, 'agent.deregistered', { agent_id: agent.agent_id })
  }

  private async audit (agent: AgentRecord, type: string, payload: Record<string, unknown>): Promise<void> {
    await this.events(agent, [{
      clientId: null, type, category: 'audit', timestamp: new Date().toISOString(), userId: null, payload, evaluationId: null
    }])
  }
}
