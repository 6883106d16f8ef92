/**
 * The control plane's storage, backend-neutral and async. SQLite (store/sqlite) is the default;
 * PostgreSQL implements the same interface. Every method is one statement or one transaction; every
 * query is parameterised.
 */

export const AGENT_STATUSES = ['provisioning', 'active', 'suspended', 'offline', 'terminated'] as const
export type AgentStatus = typeof AGENT_STATUSES[number]
export const HEALTH_STATUSES = ['healthy', 'degraded', 'unhealthy', 'unknown'] as const
export type HealthStatus = typeof HEALTH_STATUSES[number]
export type Contract = 'v1' | 'legacy'

export interface Tenant {
  id: string
  name: string
  created_at: string
}

export interface AgentRecord {
  /** UUID of the endpoint. */
  id: string
  tenant_id: string
  /** The slug, unique within the tenant. */
  agent_id: string
  name: string
  agent_type: string
  capabilities: string[]
  metadata: Record<string, unknown>
  deployment_id: string | null
  key_hash: string
  key_prefix: string
  contract: Contract
  status: AgentStatus
  health: HealthStatus
  last_heartbeat: string | null
  created_at: string
  updated_at: string
}

export interface PolicyRecord {
  id: string
  tenant_id: string
  name: string
  type: string
  scope_type: string
  scope_id: string
  config: Record<string, unknown>
  enforcement: string
  priority: number
  is_active: boolean
  version: number
  created_at: string
  updated_at: string
}

/** A policy as written by `policy apply` / GraphQL (validated before it reaches the store). */
export type PolicyWrite = Omit<PolicyRecord, 'id' | 'tenant_id' | 'version' | 'created_at' | 'updated_at'>

export type SecretScope = 'tenant' | 'deployment' | 'agent'

export interface SecretRecord {
  tenant_id: string
  scope_type: SecretScope
  scope_id: string
  name: string
  /** Sealed with the master key (SecretBox); never plaintext. */
  value_sealed: string
  updated_at: string
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'used'

/** A human_oversight approval: requested by a blocked decision, decided by an admin, used once. */
export interface ApprovalRecord {
  /** `apr_` + random; the agent sends it back as context.approval_id. */
  id: string
  tenant_id: string
  agent_uuid: string
  /** The agent's slug (what the engine's approval check compares). */
  agent_id: string
  status: ApprovalStatus
  /** What needs approval: `tool <name>` or `action <name>`. */
  subject: string
  /** The request that was blocked. */
  request: unknown
  /** The policy's message. */
  reason: string | null
  created_at: string
  decided_at: string | null
  decided_by: string | null
}

/** A tenant's key for one LLM provider; the key is sealed (AES-256-GCM), never stored in plaintext. */
export interface ProviderKeyRecord {
  tenant_id: string
  /** `openai`, `anthropic`, or the id of an OpenAI-compatible endpoint. */
  provider: string
  key_sealed: string
  /** The key's first characters, to tell keys apart. */
  key_prefix: string
  base_url: string | null
  is_active: boolean
  enabled_for_assistant: boolean
  last_used_at: string | null
  created_at: string
  updated_at: string
}

export interface TenantKeyRecord {
  key_hash: string
  tenant_id: string
  prefix: string
  created_at: string
}

export interface EvaluationQuery {
  agentUuid?: string
  allowed?: boolean
  from?: string
  to?: string
  after?: string
  limit: number
}

export interface EventQuery {
  agentUuid?: string
  eventType?: string
  category?: string
  /** ISO timestamps: events whose timestamp is at or after `from`, before `to`. */
  from?: string
  to?: string
  /** The id of the last event of the previous page. */
  after?: string
  limit: number
}

export interface EventRow {
  id: string
  tenant_id: string
  /** UUID of the agent endpoint. */
  agent_uuid: string
  agent_id: string
  event_type: string
  category: string
  timestamp: string
  user_id: string | null
  payload: unknown
  evaluation_id: string | null
  batch_id: string
  /** An id chosen by the sender (the sidecar's spool); a second event with the same id is ignored. */
  client_event_id: string | null
  cost_usd: number | null
  received_at: string
}

export interface EvaluationRow {
  id: string
  tenant_id: string
  agent_uuid: string
  allowed: boolean
  reason: string | null
  request: unknown
  decision: unknown
  created_at: string
}

export interface SpendRow {
  agent_id: string
  user_id: string | null
  usd: number
  at: string
}

export interface HeartbeatWrite {
  health: HealthStatus
  at: string
  report: unknown
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres'
  close (): Promise<void>
  /** A number that changes whenever tenants' agents, policies or secrets change (any process). */
  configSeq (): Promise<number>

  createTenant (tenant: { id: string, name: string }): Promise<Tenant>
  getTenant (id: string): Promise<Tenant | undefined>
  listTenants (): Promise<Tenant[]>
  addTenantKey (tenantId: string, hash: string, prefix: string): Promise<void>
  findTenantByKeyHash (hash: string): Promise<Tenant | undefined>
  listTenantKeys (tenantId: string): Promise<TenantKeyRecord[]>
  /** Deletes a tenant API key (it stops working); false when the tenant has none with that hash. */
  deleteTenantKey (tenantId: string, hash: string): Promise<boolean>

  /** Inserts a new agent; resolves false when the agent_id exists in the tenant. */
  createAgent (agent: AgentRecord): Promise<boolean>
  findAgentByKeyHash (hash: string): Promise<AgentRecord | undefined>
  getAgent (tenantId: string, agentId: string): Promise<AgentRecord | undefined>
  listAgents (tenantId: string): Promise<AgentRecord[]>
  setAgentStatus (id: string, status: AgentStatus, health: HealthStatus): Promise<void>
  /** Changes an agent's descriptive fields (by its UUID, within the tenant); false when there is none. */
  updateAgent (tenantId: string, id: string, fields: Pick<AgentRecord, 'name' | 'capabilities' | 'metadata' | 'deployment_id'>): Promise<boolean>
  /** Replaces an agent's key (hash and prefix): the old key stops working. */
  setAgentKey (tenantId: string, id: string, hash: string, prefix: string): Promise<boolean>
  recordHeartbeat (id: string, hb: HeartbeatWrite): Promise<void>
  /** Active agents of `contract` whose last heartbeat (or creation) is before `before`: marks them unhealthy. */
  markStale (contract: Contract, before: string): Promise<number>

  listPolicies (tenantId: string): Promise<PolicyRecord[]>
  /** Upserts by name in one transaction; a changed policy gets version + 1. Returns the stored rows. */
  upsertPolicies (tenantId: string, policies: PolicyWrite[]): Promise<PolicyRecord[]>
  deletePolicy (tenantId: string, id: string): Promise<boolean>
  getPolicy (tenantId: string, id: string): Promise<PolicyRecord | undefined>
  /**
   * Replaces a policy's fields by id (version + 1 when anything changed); undefined when the tenant
   * has no such policy. Throws NameTakenError when another policy of the tenant has the name.
   */
  updatePolicy (tenantId: string, id: string, policy: PolicyWrite): Promise<PolicyRecord | undefined>

  setSecret (secret: SecretRecord): Promise<void>
  listSecrets (tenantId: string): Promise<SecretRecord[]>
  deleteSecret (tenantId: string, scopeType: SecretScope, scopeId: string, name: string): Promise<boolean>

  /** Writes events and evaluations in one transaction (the ingest writer's group commit). */
  writeBatch (events: EventRow[], evaluations: EvaluationRow[]): Promise<void>
  countEvents (tenantId: string): Promise<number>
  listEvents (tenantId: string, opts: { agentUuid?: string, limit: number }): Promise<EventRow[]>
  /**
   * A page of the tenant's events, newest first (by received_at, then id), matching every filter given;
   * `after` is the id of the last event of the previous page. `total` counts every match.
   */
  queryEvents (tenantId: string, q: EventQuery): Promise<{ rows: EventRow[], total: number }>
  getEvaluation (tenantId: string, id: string): Promise<EvaluationRow | undefined>
  /** A page of evaluations, newest first (created_at, then id); `after` is the last id of the previous page. */
  queryEvaluations (tenantId: string, q: EvaluationQuery): Promise<{ rows: EvaluationRow[], total: number }>
  /**
   * Per hour (`YYYY-MM-DDTHH`, UTC, by arrival) since `since`: the events received, and the blocked
   * decisions (policy.blocked events and blocked legacy evaluations).
   */
  hourlyCounts (tenantId: string, since: string): Promise<{ events: Map<string, number>, blocked: Map<string, number> }>
  createApproval (approval: ApprovalRecord): Promise<void>
  listApprovals (tenantId: string, status?: ApprovalStatus): Promise<ApprovalRecord[]>
  getApproval (tenantId: string, id: string): Promise<ApprovalRecord | undefined>
  /** The approvals still in play (pending or approved), of every tenant: what decisions consult. */
  openApprovals (): Promise<ApprovalRecord[]>
  /** Approves or rejects a pending approval; false when it is not pending (or not the tenant's). */
  decideApproval (tenantId: string, id: string, status: 'approved' | 'rejected', by: string): Promise<boolean>
  /** An approved approval was used by a decision it allowed. */
  markApprovalUsed (id: string): Promise<void>
  listProviderKeys (tenantId: string): Promise<ProviderKeyRecord[]>
  getProviderKey (tenantId: string, provider: string): Promise<ProviderKeyRecord | undefined>
  /** Stores a provider's key (a new record, or a new key for an existing one: 'rotated'). */
  setProviderKey (record: ProviderKeyRecord): Promise<'created' | 'rotated'>
  /** Changes a provider's switches; false when the tenant has no key for it. */
  setProviderFlags (tenantId: string, provider: string, flags: { is_active?: boolean, enabled_for_assistant?: boolean }): Promise<boolean>
  deleteProviderKey (tenantId: string, provider: string): Promise<boolean>
  /** Notes that the assistant used a provider's key. */
  touchProviderKey (tenantId: string, provider: string, at: string): Promise<void>
  /** Costs recorded at or after `since` (to rebuild the budget ledger at start-up). */
  spendSince (tenantId: string, since: string): Promise<SpendRow[]>
}

/** A policy name already used by another policy of the tenant. */
export class NameTakenError extends Error {
  constructor (readonly policyName: string) {
    super(`a policy named "${policyName}" exists already`)
  }
}

