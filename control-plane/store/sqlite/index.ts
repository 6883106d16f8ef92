/**
 * The SQLite store: one better-sqlite3 connection in WAL mode (synchronous=NORMAL: a committed
 * transaction survives a process crash; only a power loss can take the last few), numbered migrations
 * tracked in `PRAGMA user_version`, prepared statements for every query. Other processes (the admin
 * CLI) may write the same file; `busy_timeout` makes them wait for each other instead of failing.
 */
import Database from 'better-sqlite3'
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { MIGRATIONS } from './migrations/index.js'
import type {
  AgentRecord, AgentStatus, ApprovalRecord, ApprovalStatus, Contract, EvaluationQuery, EvaluationRow, EventQuery, EventRow, HealthStatus, HeartbeatWrite, PolicyRecord,
  PolicyWrite, ProviderKeyRecord, SecretRecord, SecretScope, SpendRow, Store, Tenant, TenantKeyRecord
} from '../store.js'
import { NameTakenError } from '../store.js'

type Row = Record<string, unknown>

function agentFromRow (r: Row): AgentRecord {
  return {
    id: r.id as string,
    tenant_id: r.tenant_id as string,
    agent_id: r.agent_id as string,
    name: r.name as string,
    agent_type: r.agent_type as string,
    capabilities: JSON.parse(r.capabilities as string) as string[],
    metadata: JSON.parse(r.metadata as string) as Record<string, unknown>,
    deployment_id: r.deployment_id as string | null,
    key_hash: r.key_hash as string,
    key_prefix: r.key_prefix as string,
    contract: r.contract as AgentRecord['contract'],
    status: r.status as AgentStatus,
    health: r.health as HealthStatus,
    last_heartbeat: r.last_heartbeat as string | null,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string
  }
}

/** A policy write as the statements' named parameters (config as JSON text, is_active as 0/1). */
function policyValues (tenantId: string, p: PolicyWrite, now: string): Record<string, string | number> {
  return {
    tenant_id: tenantId,
    name: p.name,
    type: p.type,
    scope_type: p.scope_type,
    scope_id: p.scope_id,
    config: JSON.stringify(p.config),
    enforcement: p.enforcement,
    priority: p.priority,
    is_active: p.is_active ? 1 : 0,
    now
  }
}

function providerFromRow (r: Row): ProviderKeyRecord {
  return {
    tenant_id: r.tenant_id as string,
    provider: r.provider as string,
    key_sealed: r.key_sealed as string,
    key_prefix: r.key_prefix as string,
    base_url: r.base_url as string | null,
    is_active: r.is_active === 1,
    enabled_for_assistant: r.enabled_for_assistant === 1,
    last_used_at: r.last_used_at as string | null,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string
  }
}

function approvalFromRow (r: Row): ApprovalRecord {
  return {
    id: r.id as string,
    tenant_id: r.tenant_id as string,
    agent_uuid: r.agent_uuid as string,
    agent_id: r.agent_id as string,
    status: r.status as ApprovalStatus,
    subject: r.subject as string,
    request: JSON.parse(r.request as string),
    reason: r.reason as string | null,
    created_at: r.created_at as string,
    decided_at: r.decided_at as string | null,
    decided_by: r.decided_by as string | null
  }
}

function evaluationFromRow (r: Row): EvaluationRow {
  return {
    id: r.id as string,
    tenant_id: r.tenant_id as string,
    agent_uuid: r.agent_uuid as string,
    allowed: r.allowed === 1,
    reason: r.reason as string | null,
    request: JSON.parse(r.request as string),
    decision: JSON.parse(r.decision as string),
    created_at: r.created_at as string
  }
}

function policyFromRow (r: Row): PolicyRecord {
  return {
    id: r.id as string,
    tenant_id: r.tenant_id as string,
    name: r.name as string,
    type: r.type as string,
    scope_type: r.scope_type as string,
    scope_id: r.scope_id as string,
    config: JSON.parse(r.config as string) as Record<string, unknown>,
    enforcement: r.enforcement as string,
    priority: r.priority as number,
    is_active: r.is_active === 1,
    version: r.version as number,
    created_at: r.created_at as string,
    updated_at: r.updated_at as string
  }
}

function eventFromRow (r: Row): EventRow {
  return {
    id: r.id as string,
    tenant_id: r.tenant_id as string,
    agent_uuid: r.agent_uuid as string,
    agent_id: r.agent_id as string,
    event_type: r.event_type as string,
    category: r.category as string,
    timestamp: r.timestamp as string,
    user_id: r.user_id as string | null,
    payload: JSON.parse(r.payload as string),
    evaluation_id: r.evaluation_id as string | null,
    batch_id: r.batch_id as string,
    client_event_id: r.client_event_id as string | null,
    cost_usd: r.cost_usd as number | null,
    received_at: r.received_at as string
  }
}

export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const
  readonly db: Database.Database
  private readonly s: Record<string, Database.Statement>
  private readonly writeTx: (events: EventRow[], evaluations: EvaluationRow[]) => void

  constructor (readonly file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true })
    this.db = new Database(file)
    this.db.pragma('journal_mode = WAL')
    this.db.pragma('synchronous = NORMAL')
    this.db.pragma('busy_timeout = 5000')
    this.db.pragma('foreign_keys = ON')
    try {
      this.migrate()
    } catch (err) {
      this.db.close()
      throw err
    }
    const p = (sql: string): Database.Statement => this.db.prepare(sql)
    this.s = {
      seq: p("SELECT value FROM meta WHERE key = 'config_seq'"),
      bump: p("UPDATE meta SET value = value + 1 WHERE key = 'config_seq'"),
      insTenant: p('INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)'),
      getTenant: p('SELECT * FROM tenants WHERE id = ?'),
      listTenants: p('SELECT * FROM tenants ORDER BY created_at, id'),
      insTenantKey: p('INSERT INTO tenant_keys (key_hash, tenant_id, prefix, created_at) VALUES (?, ?, ?, ?)'),
      tenantByKey: p('SELECT t.* FROM tenant_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.key_hash = ?'),
      listTenantKeys: p('SELECT * FROM tenant_keys WHERE tenant_id = ? ORDER BY created_at, key_hash'),
      delTenantKey: p('DELETE FROM tenant_keys WHERE tenant_id = ? AND key_hash = ?'),
      insApproval: p(`INSERT INTO approvals (id, tenant_id, agent_uuid, agent_id, status, subject, request, reason, created_at, decided_at, decided_by)
        VALUES (@id, @tenant_id, @agent_uuid, @agent_id, @status, @subject, @request, @reason, @created_at, @decided_at, @decided_by)`),
      listApprovals: p('SELECT * FROM approvals WHERE tenant_id = ? ORDER BY created_at DESC, id DESC'),
      listApprovalsByStatus: p('SELECT * FROM approvals WHERE tenant_id = ? AND status = ? ORDER BY created_at DESC, id DESC'),
      getApproval: p('SELECT * FROM approvals WHERE tenant_id = ? AND id = ?'),
      openApprovals: p("SELECT * FROM approvals WHERE status IN ('pending', 'approved')"),
      decideApproval: p("UPDATE approvals SET status = ?, decided_at = ?, decided_by = ? WHERE tenant_id = ? AND id = ? AND status = 'pending'"),
      useApproval: p("UPDATE approvals SET status = 'used' WHERE id = ? AND status = 'approved'"),
      listProviders: p('SELECT * FROM llm_providers WHERE tenant_id = ? ORDER BY provider'),
      getProvider: p('SELECT * FROM llm_providers WHERE tenant_id = ? AND provider = ?'),
      upsertProvider: p(`INSERT INTO llm_providers (tenant_id, provider, key_sealed, key_prefix, base_url, is_active, enabled_for_assistant,
          last_used_at, created_at, updated_at)
        VALUES (@tenant_id, @provider, @key_sealed, @key_prefix, @base_url, @is_active, @enabled_for_assistant, @last_used_at, @created_at, @updated_at)
        ON CONFLICT (tenant_id, provider) DO UPDATE SET key_sealed = excluded.key_sealed, key_prefix = excluded.key_prefix,
          base_url = excluded.base_url, updated_at = excluded.updated_at`),
      providerFlags: p(`UPDATE llm_providers SET is_active = COALESCE(@is_active, is_active),
        enabled_for_assistant = COALESCE(@enabled_for_assistant, enabled_for_assistant), updated_at = @now
        WHERE tenant_id = @tenant_id AND provider = @provider`),
      delProvider: p('DELETE FROM llm_providers WHERE tenant_id = ? AND provider = ?'),
      touchProvider: p('UPDATE llm_providers SET last_used_at = ? WHERE tenant_id = ? AND provider = ?'),
      insAgent: p(`INSERT INTO agents (id, tenant_id, agent_id, name, agent_type, capabilities, metadata,
        deployment_id, key_hash, key_prefix, contract, status, health, last_heartbeat, created_at, updated_at)
        VALUES (@id, @tenant_id, @agent_id, @name, @agent_type, @capabilities, @metadata, @deployment_id,
        @key_hash, @key_prefix, @contract, @status, @health, @last_heartbeat, @created_at, @updated_at)
        ON CONFLICT DO NOTHING`),
      agentByKey: p('SELECT * FROM agents WHERE key_hash = ?'),
      getAgent: p('SELECT * FROM agents WHERE tenant_id = ? AND agent_id = ?'),
      listAgents: p('SELECT * FROM agents WHERE tenant_id = ? ORDER BY created_at, agent_id'),
      setStatus: p('UPDATE agents SET status = ?, health = ?, updated_at = ? WHERE id = ?'),
      updAgent: p(`UPDATE agents SET name = @name, capabilities = @capabilities, metadata = @metadata, deployment_id = @deployment_id,
        updated_at = @now WHERE tenant_id = @tenant_id AND id = @id`),
      setKey: p('UPDATE agents SET key_hash = ?, key_prefix = ?, updated_at = ? WHERE tenant_id = ? AND id = ?'),
      heartbeat: p('UPDATE agents SET health = ?, last_heartbeat = ?, last_report = ?, updated_at = ? WHERE id = ?'),
      markStale: p(`UPDATE agents SET health = 'unhealthy', updated_at = ?
        WHERE status = 'active' AND health <> 'unhealthy' AND contract = ? AND COALESCE(last_heartbeat, created_at) < ?`),
      listPolicies: p('SELECT * FROM policies WHERE tenant_id = ? ORDER BY priority DESC, name'),
      policyByName: p('SELECT * FROM policies WHERE tenant_id = ? AND name = ?'),
      insPolicy: p(`INSERT INTO policies (id, tenant_id, name, type, scope_type, scope_id, config, enforcement,
        priority, is_active, version, created_at, updated_at)
        VALUES (@id, @tenant_id, @name, @type, @scope_type, @scope_id, @config, @enforcement, @priority,
        @is_active, 1, @now, @now)`),
      updPolicy: p(`UPDATE policies SET type = @type, scope_type = @scope_type, scope_id = @scope_id,
        config = @config, enforcement = @enforcement, priority = @priority, is_active = @is_active,
        version = version + 1, updated_at = @now WHERE id = @id`),
      delPolicy: p('DELETE FROM policies WHERE tenant_id = ? AND id = ?'),
      policyById: p('SELECT * FROM policies WHERE tenant_id = ? AND id = ?'),
      updPolicyById: p(`UPDATE policies SET name = @name, type = @type, scope_type = @scope_type, scope_id = @scope_id,
        config = @config, enforcement = @enforcement, priority = @priority, is_active = @is_active,
        version = version + 1, updated_at = @now WHERE tenant_id = @tenant_id AND id = @id`),
      setSecret: p(`INSERT INTO secrets (tenant_id, scope_type, scope_id, name, value_sealed, updated_at)
        VALUES (@tenant_id, @scope_type, @scope_id, @name, @value_sealed, @updated_at)
        ON CONFLICT (tenant_id, scope_type, scope_id, name)
        DO UPDATE SET value_sealed = excluded.value_sealed, updated_at = excluded.updated_at`),
      listSecrets: p('SELECT * FROM secrets WHERE tenant_id = ? ORDER BY scope_type, scope_id, name'),
      delSecret: p('DELETE FROM secrets WHERE tenant_id = ? AND scope_type = ? AND scope_id = ? AND name = ?'),
      insEvent: p(`INSERT INTO events (id, tenant_id, agent_uuid, agent_id, event_type, category, timestamp,
        user_id, payload, evaluation_id, batch_id, client_event_id, cost_usd, received_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT DO NOTHING`),
      insEval: p(`INSERT INTO evaluations (id, tenant_id, agent_uuid, allowed, reason, request, decision, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT DO NOTHING`),
      countEvents: p('SELECT count(*) AS n FROM events WHERE tenant_id = ?'),
      listEvents: p('SELECT * FROM events WHERE tenant_id = ? ORDER BY received_at DESC, rowid DESC LIMIT ?'),
      listAgentEvents: p('SELECT * FROM events WHERE tenant_id = ? AND agent_uuid = ? ORDER BY received_at DESC, rowid DESC LIMIT ?'),
      getEval: p('SELECT * FROM evaluations WHERE tenant_id = ? AND id = ?'),
      eventsPerHour: p(`SELECT substr(received_at, 1, 13) AS hour, COUNT(*) AS n,
        SUM(CASE WHEN event_type = 'policy.blocked' THEN 1 ELSE 0 END) AS blocked
        FROM events WHERE tenant_id = ? AND received_at >= ? GROUP BY hour`),
      blockedEvalsPerHour: p(`SELECT substr(created_at, 1, 13) AS hour, COUNT(*) AS n
        FROM evaluations WHERE tenant_id = ? AND created_at >= ? AND allowed = 0 GROUP BY hour`),
      spend: p(`SELECT agent_id, user_id, cost_usd AS usd, timestamp AS at FROM events
        WHERE tenant_id = ? AND cost_usd IS NOT NULL AND timestamp >= ?`)
    }
    const insEvent = this.s.insEvent as Database.Statement
    const insEval = this.s.insEval as Database.Statement
    this.writeTx = this.db.transaction((events: EventRow[], evaluations: EvaluationRow[]) => {
      for (const e of evaluations) {
        insEval.run(e.id, e.tenant_id, e.agent_uuid, e.allowed ? 1 : 0, e.reason, JSON.stringify(e.request),
          JSON.stringify(e.decision), e.created_at)
      }
      for (const e of events) {
        insEvent.run(e.id, e.tenant_id, e.agent_uuid, e.agent_id, e.event_type, e.category, e.timestamp, e.user_id,
          JSON.stringify(e.payload), e.evaluation_id, e.batch_id, e.client_event_id, e.cost_usd, e.received_at)
      }
    })
  }

  private migrate (): void {
    const current = this.db.pragma('user_version', { simple: true }) as number
    if (current > MIGRATIONS.length) {
      throw new Error(`database schema version ${current} is newer than this agentgov (${MIGRATIONS.length}); upgrade agentgov`)
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v] as string)
        this.db.pragma(`user_version = ${v + 1}`)
      }).immediate()
    }
  }

  private st (name: string): Database.Statement {
    return this.s[name] as Database.Statement
  }

  private bump (): void {
    this.st('bump').run()
  }

  async close (): Promise<void> {
    if (this.db.open) this.db.close()
  }

  async configSeq (): Promise<number> {
    return (this.st('seq').get() as { value: number }).value
  }

  async createTenant (tenant: { id: string, name: string }): Promise<Tenant> {
    const row = { id: tenant.id, name: tenant.name, created_at: new Date().toISOString() }
    this.st('insTenant').run(row.id, row.name, row.created_at)
    return row
  }

  async getTenant (id: string): Promise<Tenant | undefined> {
    return this.st('getTenant').get(id) as Tenant | undefined
  }

  async listTenants (): Promise<Tenant[]> {
    return this.st('listTenants').all() as Tenant[]
  }

  async addTenantKey (tenantId: string, hash: string, prefix: string): Promise<void> {
    this.st('insTenantKey').run(hash, tenantId, prefix, new Date().toISOString())
  }

  async findTenantByKeyHash (hash: string): Promise<Tenant | undefined> {
    return this.st('tenantByKey').get(hash) as Tenant | undefined
  }

  async createAgent (a: AgentRecord): Promise<boolean> {
    const info = this.db.transaction(() => {
      const r = this.st('insAgent').run({
        ...a, capabilities: JSON.stringify(a.capabilities), metadata: JSON.stringify(a.metadata)
      })
      if (r.changes === 1) this.bump()
      return r
    })()
    return info.changes === 1
  }

  async findAgentByKeyHash (hash: string): Promise<AgentRecord | undefined> {
    const r = this.st('agentByKey').get(hash) as Row | undefined
    return r === undefined ? undefined : agentFromRow(r)
  }

  async getAgent (tenantId: string, agentId: string): Promise<AgentRecord | undefined> {
    const r = this.st('getAgent').get(tenantId, agentId) as Row | undefined
    return r === undefined ? undefined : agentFromRow(r)
  }

  async listAgents (tenantId: string): Promise<AgentRecord[]> {
    return (this.st('listAgents').all(tenantId) as Row[]).map(agentFromRow)
  }

  async updateAgent (tenantId: string, id: string, f: Pick<AgentRecord, 'name' | 'capabilities' | 'metadata' | 'deployment_id'>): Promise<boolean> {
    return this.db.transaction(() => {
      const n = this.st('updAgent').run({
        tenant_id: tenantId, id, name: f.name, capabilities: JSON.stringify(f.capabilities), metadata: JSON.stringify(f.metadata),
        deployment_id: f.deployment_id, now: new Date().toISOString()
      }).changes
      if (n > 0) this.bump()
      return n > 0
    })()
  }

  async setAgentKey (tenantId: string, id: string, hash: string, prefix: string): Promise<boolean> {
    return this.db.transaction(() => {
      const n = this.st('setKey').run(hash, prefix, new Date().toISOString(), tenantId, id).changes
      if (n > 0) this.bump()
      return n > 0
    })()
  }

  async setAgentStatus (id: string, status: AgentStatus, health: HealthStatus): Promise<void> {
    this.db.transaction(() => {
      this.st('setStatus').run(status, health, new Date().toISOString(), id)
      this.bump()
    })()
  }

  async recordHeartbeat (id: string, hb: HeartbeatWrite): Promise<void> {
    this.st('heartbeat').run(hb.health, hb.at, JSON.stringify(hb.report), hb.at, id)
  }

  async markStale (contract: Contract, before: string): Promise<number> {
    return this.st('markStale').run(new Date().toISOString(), contract, before).changes
  }

  async listPolicies (tenantId: string): Promise<PolicyRecord[]> {
    return (this.st('listPolicies').all(tenantId) as Row[]).map(policyFromRow)
  }

  async upsertPolicies (tenantId: string, policies: PolicyWrite[]): Promise<PolicyRecord[]> {
    return this.db.transaction(() => {
      const now = new Date().toISOString()
      let changed = false
      for (const p of policies) {
        const existing = this.st('policyByName').get(tenantId, p.name) as Row | undefined
        const values = policyValues(tenantId, p, now)
        if (existing === undefined) {
          this.st('insPolicy').run({ ...values, id: randomUUID() })
          changed = true
        } else if (['type', 'scope_type', 'scope_id', 'config', 'enforcement', 'priority', 'is_active']
          .some((k) => existing[k] !== values[k as keyof typeof values])) {
          this.st('updPolicy').run({ ...values, id: existing.id })
          changed = true
        }
      }
      if (changed) this.bump()
      return policies.map((p) => policyFromRow(this.st('policyByName').get(tenantId, p.name) as Row))
    }).immediate()
  }

  async getPolicy (tenantId: string, id: string): Promise<PolicyRecord | undefined> {
    const row = this.st('policyById').get(tenantId, id) as Row | undefined
    return row === undefined ? undefined : policyFromRow(row)
  }

  async updatePolicy (tenantId: string, id: string, p: PolicyWrite): Promise<PolicyRecord | undefined> {
    return this.db.transaction(() => {
      const existing = this.st('policyById').get(tenantId, id) as Row | undefined
      if (existing === undefined) return undefined
      const other = this.st('policyByName').get(tenantId, p.name) as Row | undefined
      if (other !== undefined && other.id !== id) throw new NameTakenError(p.name)
      const values = { ...policyValues(tenantId, p, new Date().toISOString()), id }
      if (['name', 'type', 'scope_type', 'scope_id', 'config', 'enforcement', 'priority', 'is_active'].some((k) => existing[k] !== values[k as keyof typeof values])) {
        this.st('updPolicyById').run(values)
        this.bump()
      }
      return policyFromRow(this.st('policyById').get(tenantId, id) as Row)
    }).immediate()
  }

  async deletePolicy (tenantId: string, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const n = this.st('delPolicy').run(tenantId, id).changes
      if (n > 0) this.bump()
      return n > 0
    })()
  }

  async setSecret (secret: SecretRecord): Promise<void> {
    this.db.transaction(() => {
      this.st('setSecret').run(secret)
      this.bump()
    })()
  }

  async listSecrets (tenantId: string): Promise<SecretRecord[]> {
    return this.st('listSecrets').all(tenantId) as SecretRecord[]
  }

  async deleteSecret (tenantId: string, scopeType: SecretScope, scopeId: string, name: string): Promise<boolean> {
    return this.db.transaction(() => {
      const n = this.st('delSecret').run(tenantId, scopeType, scopeId, name).changes
      if (n > 0) this.bump()
      return n > 0
    })()
  }

  async writeBatch (events: EventRow[], evaluations: EvaluationRow[]): Promise<void> {
    this.writeTx(events, evaluations)
  }

  async countEvents (tenantId: string): Promise<number> {
    return (this.st('countEvents').get(tenantId) as { n: number }).n
  }

  async listEvents (tenantId: string, opts: { agentUuid?: string, limit: number }): Promise<EventRow[]> {
    const rows = opts.agentUuid === undefined
      ? this.st('listEvents').all(tenantId, opts.limit)
      : this.st('listAgentEvents').all(tenantId, opts.agentUuid, opts.limit)
    return (rows as Row[]).map(eventFromRow)
  }

  async queryEvents (tenantId: string, q: EventQuery): Promise<{ rows: EventRow[], total: number }> {
    const where: string[] = []
    const params: Record<string, string | number> = {}
    if (q.agentUuid !== undefined) { where.push('agent_uuid = @agent_uuid'); params.agent_uuid = q.agentUuid }
    if (q.eventType !== undefined) { where.push('event_type = @event_type'); params.event_type = q.eventType }
    if (q.category !== undefined) { where.push('category = @category'); params.category = q.category }
    if (q.from !== undefined) { where.push('timestamp >= @from'); params.from = q.from }
    if (q.to !== undefined) { where.push('timestamp < @to'); params.to = q.to }
    const { rows, total } = this.keysetPage('events', 'received_at', tenantId, where, params, q)
    return { rows: rows.map(eventFromRow), total }
  }

  async getEvaluation (tenantId: string, id: string): Promise<EvaluationRow | undefined> {
    const r = this.st('getEval').get(tenantId, id) as Row | undefined
    return r === undefined ? undefined : evaluationFromRow(r)
  }

  async queryEvaluations (tenantId: string, q: EvaluationQuery): Promise<{ rows: EvaluationRow[], total: number }> {
    const where: string[] = []
    const params: Record<string, string | number> = {}
    if (q.agentUuid !== undefined) { where.push('agent_uuid = @agent_uuid'); params.agent_uuid = q.agentUuid }
    if (q.allowed !== undefined) { where.push('allowed = @allowed'); params.allowed = q.allowed ? 1 : 0 }
    if (q.from !== undefined) { where.push('created_at >= @from'); params.from = q.from }
    if (q.to !== undefined) { where.push('created_at < @to'); params.to = q.to }
    const { rows, total } = this.keysetPage('evaluations', 'created_at', tenantId, where, params, q)
    return { rows: rows.map(evaluationFromRow), total }
  }

  /**
   * A page of a tenant's rows of `table`, newest first by `timeColumn` then id, after the row `after`
   * (keyset pagination), and the count of every row matching `where`. The clauses are fixed text of
   * the callers; every value is a bound parameter.
   */
  private keysetPage (table: 'events' | 'evaluations', timeColumn: 'received_at' | 'created_at', tenantId: string,
    where: string[], params: Record<string, string | number>, q: { after?: string, limit: number }): { rows: Row[], total: number } {
    const all = { ...params, tenant_id: tenantId, limit: q.limit }
    const filter = ['tenant_id = @tenant_id', ...where].join(' AND ')
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${filter}`).get(all) as { n: number }).n
    let page = filter
    if (q.after !== undefined) {
      const last = this.db.prepare(`SELECT ${timeColumn} AS at FROM ${table} WHERE tenant_id = ? AND id = ?`).get(tenantId, q.after) as { at: string } | undefined
      if (last === undefined) return { rows: [], total }
      page += ` AND (${timeColumn} < @after_at OR (${timeColumn} = @after_at AND id < @after_id))`
      Object.assign(all, { after_at: last.at, after_id: q.after })
    }
    const rows = this.db.prepare(`SELECT * FROM ${table} WHERE ${page} ORDER BY ${timeColumn} DESC, id DESC LIMIT @limit`).all(all) as Row[]
    return { rows, total }
  }

  async hourlyCounts (tenantId: string, since: string): Promise<{ events: Map<string, number>, blocked: Map<string, number> }> {
    const events = new Map<string, number>()
    const blocked = new Map<string, number>()
    for (const r of this.st('eventsPerHour').all(tenantId, since) as Array<{ hour: string, n: number, blocked: number }>) {
      events.set(r.hour, r.n)
      if (r.blocked > 0) blocked.set(r.hour, r.blocked)
    }
    for (const r of this.st('blockedEvalsPerHour').all(tenantId, since) as Array<{ hour: string, n: number }>) {
      blocked.set(r.hour, (blocked.get(r.hour) ?? 0) + r.n)
    }
    return { events, blocked }
  }

  async createApproval (a: ApprovalRecord): Promise<void> {
    this.st('insApproval').run({ ...a, request: JSON.stringify(a.request) })
  }

  async listApprovals (tenantId: string, status?: ApprovalStatus): Promise<ApprovalRecord[]> {
    const rows = status === undefined ? this.st('listApprovals').all(tenantId) : this.st('listApprovalsByStatus').all(tenantId, status)
    return (rows as Row[]).map(approvalFromRow)
  }

  async getApproval (tenantId: string, id: string): Promise<ApprovalRecord | undefined> {
    const r = this.st('getApproval').get(tenantId, id) as Row | undefined
    return r === undefined ? undefined : approvalFromRow(r)
  }

  async openApprovals (): Promise<ApprovalRecord[]> {
    return (this.st('openApprovals').all() as Row[]).map(approvalFromRow)
  }

  async decideApproval (tenantId: string, id: string, status: 'approved' | 'rejected', by: string): Promise<boolean> {
    return this.db.transaction(() => {
      const n = this.st('decideApproval').run(status, new Date().toISOString(), by, tenantId, id).changes
      // Other processes reload the approvals they consult when the change counter moves.
      if (n > 0) this.bump()
      return n > 0
    })()
  }

  async markApprovalUsed (id: string): Promise<void> {
    this.st('useApproval').run(id)
  }

  async listProviderKeys (tenantId: string): Promise<ProviderKeyRecord[]> {
    return (this.st('listProviders').all(tenantId) as Row[]).map(providerFromRow)
  }

  async getProviderKey (tenantId: string, provider: string): Promise<ProviderKeyRecord | undefined> {
    const r = this.st('getProvider').get(tenantId, provider) as Row | undefined
    return r === undefined ? undefined : providerFromRow(r)
  }

  async setProviderKey (p: ProviderKeyRecord): Promise<'created' | 'rotated'> {
    return this.db.transaction(() => {
      const existed = this.st('getProvider').get(p.tenant_id, p.provider) !== undefined
      this.st('upsertProvider').run({ ...p, is_active: p.is_active ? 1 : 0, enabled_for_assistant: p.enabled_for_assistant ? 1 : 0 })
      return existed ? 'rotated' as const : 'created' as const
    }).immediate()
  }

  async setProviderFlags (tenantId: string, provider: string, flags: { is_active?: boolean, enabled_for_assistant?: boolean }): Promise<boolean> {
    const bit = (v: boolean | undefined): number | null => v === undefined ? null : v ? 1 : 0
    return this.st('providerFlags').run({
      tenant_id: tenantId, provider, is_active: bit(flags.is_active), enabled_for_assistant: bit(flags.enabled_for_assistant), now: new Date().toISOString()
    }).changes > 0
  }

  async deleteProviderKey (tenantId: string, provider: string): Promise<boolean> {
    return this.st('delProvider').run(tenantId, provider).changes > 0
  }

  async touchProviderKey (tenantId: string, provider: string, at: string): Promise<void> {
    this.st('touchProvider').run(at, tenantId, provider)
  }

  async listTenantKeys (tenantId: string): Promise<TenantKeyRecord[]> {
    return this.st('listTenantKeys').all(tenantId) as TenantKeyRecord[]
  }

  async deleteTenantKey (tenantId: string, hash: string): Promise<boolean> {
    return this.st('delTenantKey').run(tenantId, hash).changes > 0
  }

  async spendSince (tenantId: string, since: string): Promise<SpendRow[]> {
    return this.st('spend').all(tenantId, since) as SpendRow[]
  }
}
