import t, { type Test } from 'tap'
import Database from 'better-sqlite3'
import { createHash, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { SqliteStore } from '../../../control-plane/store/sqlite/index.js'
import { MIGRATIONS } from '../../../control-plane/store/sqlite/migrations/index.js'
import type { AgentRecord, EvaluationRow, EventRow, PolicyWrite, SecretRecord } from '../../../control-plane/store/store.js'


const T1 = '00000000-0000-0000-0000-000000000001'
const T2 = '00000000-0000-0000-0000-000000000002'
const EVIL = "'; DROP TABLE agents; --"

let seq = 0
function hashOf (s: string): string {
  return createHash('sha256').update(s).digest('hex')
}

function agent (over: Partial<AgentRecord> = {}): AgentRecord {
  const n = ++seq
  return {
    id: randomUUID(),
    tenant_id: T1,
    agent_id: `agent-${n}`,
    name: `Agent ${n}`,
    agent_type: 'custom',
    capabilities: ['search'],
    metadata: { team: 'blue' },
    deployment_id: null,
    key_hash: hashOf(`key-${n}-${randomUUID()}`),
    key_prefix: 'sk_agent_abc',
    contract: 'v1',
    status: 'active',
    health: 'unknown',
    last_heartbeat: null,
    created_at: '2026-11-22T00:00:00.000Z',
    updated_at: '2026-11-22T00:00:00.000Z',
    ...over
  }
}

function policy (name: string, over: Partial<PolicyWrite> = {}): PolicyWrite {
  return {
    name,
    type: 'rate_limit',
    scope_type: 'ORG',
    scope_id: T1,
    config: { requests_per_minute: 10 },
    enforcement: 'enforce',
    priority: 0,
    is_active: true,
    ...over
  }
}

function event (over: Partial<EventRow> = {}): EventRow {
  return {
    id: randomUUID(),
    tenant_id: T1,
    agent_uuid: 'uuid-a',
    agent_id: 'agent-a',
    event_type: 'tool.called',
    category: 'telemetry',
    timestamp: '2026-11-22T10:00:00.000Z',
    user_id: null,
    payload: { tool: 'search' },
    evaluation_id: null,
    batch_id: 'batch_1',
    client_event_id: null,
    cost_usd: null,
    received_at: '2026-11-22T10:00:00.000Z',
    ...over
  }
}

function evaluation (over: Partial<EvaluationRow> = {}): EvaluationRow {
  return {
    id: `eval_${randomUUID()}`,
    tenant_id: T1,
    agent_uuid: 'uuid-a',
    allowed: false,
    reason: 'blocked by p',
    request: { action: 'tool_call', tool: 'rm' },
    decision: { allowed: false, warnings: ['w'] },
    created_at: '2026-11-22T10:00:00.000Z',
    ...over
  }
}

function secret (over: Partial<SecretRecord> = {}): SecretRecord {
  return { tenant_id: T1, scope_type: 'tenant', scope_id: '', name: 'OPENAI_API_KEY', value_sealed: 'v1:a:b:c', updated_at: '2026-11-22T00:00:00.000Z', ...over }
}

/** A store on a new file in the test's folder, closed at teardown; with tenants T1 and T2. */
async function open (t: Test, opts: { tenants?: boolean } = {}): Promise<{ store: SqliteStore, file: string }> {
  const file = join(t.testdir(), 'agentgov.db')
  const store = new SqliteStore(file)
  t.teardown(() => store.close())
  if (opts.tenants !== false) {
    await store.createTenant({ id: T1, name: 'one' })
    await store.createTenant({ id: T2, name: 'two' })
  }
  return { store, file }
}

t.test('migrations: a new file gets every migration, user_version = their count, WAL and foreign keys on', async (t) => {
  const { store } = await open(t, { tenants: false })
  t.equal(MIGRATIONS.length >= 1, true)
  t.equal(store.db.pragma('user_version', { simple: true }), MIGRATIONS.length)
  t.equal(store.db.pragma('journal_mode', { simple: true }), 'wal')
  t.equal(store.db.pragma('foreign_keys', { simple: true }), 1)
  t.equal(store.kind, 'sqlite')
  t.equal(await store.configSeq(), 0, 'config_seq starts at 0')
  t.same(await store.listTenants(), [])
})

t.test('migrations: reopening applies nothing again and keeps the data and config_seq', async (t) => {
  const file = join(t.testdir(), 'agentgov.db')
  const first = new SqliteStore(file)
  await first.createTenant({ id: T1, name: 'one' })
  t.equal(await first.createAgent(agent({ agent_id: 'kept' })), true)
  const seqBefore = await first.configSeq()
  await first.close()
  const second = new SqliteStore(file)
  t.teardown(() => second.close())
  t.equal(second.db.pragma('user_version', { simple: true }), MIGRATIONS.length, 'still the same version')
  t.equal((await second.getTenant(T1))?.name, 'one', 'tenant kept')
  t.equal((await second.getAgent(T1, 'kept'))?.agent_id, 'kept', 'agent kept')
  t.equal(await second.configSeq(), seqBefore, 'config_seq not reset')
  t.equal(seqBefore > 0, true)
})

t.test('migrations: a database of a newer schema version is refused with a message saying so', async (t) => {
  const file = join(t.testdir(), 'agentgov.db')
  const raw = new Database(file)
  raw.pragma(`user_version = ${MIGRATIONS.length + 1}`)
  raw.close()
  t.throws(() => new SqliteStore(file), { message: new RegExp(`schema version ${MIGRATIONS.length + 1} is newer`) })
  const check = new Database(file)
  t.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length + 1, 'the file is left as it was')
  t.same(check.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get(), { n: 0 }, 'no table was created')
  check.close()
})

t.test('SqliteStore: a missing parent folder of the file is created', async (t) => {
  const file = join(t.testdir(), 'deep', 'er', 'agentgov.db')
  const store = new SqliteStore(file)
  t.teardown(() => store.close())
  t.equal(store.db.pragma('user_version', { simple: true }), MIGRATIONS.length)
})

t.test('SqliteStore: close() twice is harmless', async (t) => {
  const store = new SqliteStore(join(t.testdir(), 'x.db'))
  await store.close()
  await t.resolves(store.close())
})

t.test('tenants: create, get, list in creation order; a duplicate id is refused; unknown ids give undefined', async (t) => {
  const { store } = await open(t, { tenants: false })
  const a = await store.createTenant({ id: T1, name: 'one' })
  t.match(a, { id: T1, name: 'one', created_at: /^\d{4}-\d\d-\d\dT/ })
  await store.createTenant({ id: T2, name: 'two' })
  t.same(await store.getTenant(T1), a)
  t.same((await store.listTenants()).map((x) => x.id), [T1, T2])
  await t.rejects(store.createTenant({ id: T1, name: 'again' }), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })
  t.equal(await store.getTenant('00000000-0000-0000-0000-000000000009'), undefined)
})

t.test('tenant keys: a key hash finds its tenant; unknown hashes and keys of unknown tenants do not', async (t) => {
  const { store } = await open(t)
  await store.addTenantKey(T1, hashOf('tk1'), 'tk_live_abcd')
  await store.addTenantKey(T2, hashOf('tk2'), 'tk_live_efgh')
  t.equal((await store.findTenantByKeyHash(hashOf('tk1')))?.id, T1)
  t.equal((await store.findTenantByKeyHash(hashOf('tk2')))?.id, T2)
  t.equal(await store.findTenantByKeyHash(hashOf('nope')), undefined)
  await t.rejects(store.addTenantKey('00000000-0000-0000-0000-000000000009', hashOf('tk3'), 'tk_live_x'), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' },
    'a key of a tenant that does not exist is refused')
  await t.rejects(store.addTenantKey(T2, hashOf('tk1'), 'tk_live_abcd'), { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' }, 'a hash is stored once')
})

t.test('createAgent: stores every field and reads it back by key hash, by agent_id and in the tenant list', async (t) => {
  const { store } = await open(t)
  const a = agent({
    agent_id: 'reader',
    capabilities: ['a', 'b'],
    metadata: { team: 'red', nested: { x: [1, 2] } },
    deployment_id: 'dep-1',
    contract: 'legacy',
    last_heartbeat: '2026-11-22T01:00:00.000Z'
  })
  t.equal(await store.createAgent(a), true)
  t.same(await store.findAgentByKeyHash(a.key_hash), a)
  t.same(await store.getAgent(T1, 'reader'), a)
  t.same(await store.listAgents(T1), [a])
  t.equal(await store.findAgentByKeyHash(hashOf('unknown')), undefined)
  t.equal(await store.getAgent(T1, 'nobody'), undefined)
})

t.test('createAgent: false for an agent_id that exists in the tenant, true for the same agent_id in another tenant', async (t) => {
  const { store } = await open(t)
  t.equal(await store.createAgent(agent({ agent_id: 'dup', name: 'first' })), true)
  const before = await store.configSeq()
  t.equal(await store.createAgent(agent({ agent_id: 'dup', name: 'second' })), false, 'duplicate in T1')
  t.equal(await store.configSeq(), before, 'a refused insert does not bump config_seq')
  t.equal((await store.getAgent(T1, 'dup'))?.name, 'first', 'the first agent is untouched')
  t.equal(await store.createAgent(agent({ tenant_id: T2, agent_id: 'dup', name: 'other tenant' })), true, 'same agent_id in T2')
  t.equal((await store.getAgent(T2, 'dup'))?.name, 'other tenant')
  t.equal((await store.listAgents(T1)).length, 1)
  t.equal((await store.listAgents(T2)).length, 1)
})

t.test('createAgent: an agent of a tenant that does not exist is refused', async (t) => {
  const { store } = await open(t)
  await t.rejects(store.createAgent(agent({ tenant_id: '00000000-0000-0000-0000-000000000009' })), { code: 'SQLITE_CONSTRAINT_FOREIGNKEY' })
})

t.test('getAgent/listAgents: an agent of one tenant is invisible from another', async (t) => {
  const { store } = await open(t)
  await store.createAgent(agent({ agent_id: 'only-t1' }))
  t.equal(await store.getAgent(T2, 'only-t1'), undefined)
  t.same(await store.listAgents(T2), [])
})

t.test('setAgentStatus: changes status, health and updated_at, and bumps config_seq', async (t) => {
  const { store } = await open(t)
  const a = agent({ agent_id: 'x' })
  await store.createAgent(a)
  const before = await store.configSeq()
  await store.setAgentStatus(a.id, 'terminated', 'unknown')
  const after = await store.getAgent(T1, 'x')
  t.match(after, { status: 'terminated', health: 'unknown' })
  t.not(after?.updated_at, a.updated_at, 'updated_at moved')
  t.equal(await store.configSeq(), before + 1)
})

t.test('recordHeartbeat: sets health, last_heartbeat and the report; does not bump config_seq', async (t) => {
  const { store } = await open(t)
  const a = agent({ agent_id: 'hb' })
  await store.createAgent(a)
  const before = await store.configSeq()
  await store.recordHeartbeat(a.id, { health: 'degraded', at: '2026-11-22T05:00:00.000Z', report: { queue: 3 } })
  t.match(await store.getAgent(T1, 'hb'), { health: 'degraded', last_heartbeat: '2026-11-22T05:00:00.000Z', updated_at: '2026-11-22T05:00:00.000Z' })
  t.same(store.db.prepare('SELECT last_report FROM agents WHERE id = ?').get(a.id), { last_report: '{"queue":3}' })
  t.equal(await store.configSeq(), before)
})

t.test('markStale: marks active agents of the contract whose last heartbeat (or creation) is before the cut-off', async (t) => {
  const { store } = await open(t)
  const cut = '2026-11-22T12:00:00.000Z'
  const rows = {
    oldBeat: agent({ agent_id: 'old-beat', last_heartbeat: '2026-11-22T11:59:59.999Z', health: 'healthy' }),
    freshBeat: agent({ agent_id: 'fresh-beat', last_heartbeat: cut, health: 'healthy' }),
    neverOld: agent({ agent_id: 'never-old', created_at: '2026-11-22T11:00:00.000Z' }),
    neverNew: agent({ agent_id: 'never-new', created_at: '2026-11-22T12:30:00.000Z' }),
    legacy: agent({ agent_id: 'legacy-old', contract: 'legacy', last_heartbeat: '2026-11-22T00:00:00.000Z', health: 'healthy' }),
    terminated: agent({ agent_id: 'gone', status: 'terminated', last_heartbeat: '2026-11-22T00:00:00.000Z' }),
    suspended: agent({ agent_id: 'suspended', status: 'suspended', last_heartbeat: '2026-11-22T00:00:00.000Z' }),
    already: agent({ agent_id: 'already', health: 'unhealthy', last_heartbeat: '2026-11-22T00:00:00.000Z' }),
    otherTenant: agent({ tenant_id: T2, agent_id: 'other', last_heartbeat: '2026-11-22T00:00:00.000Z', health: 'healthy' })
  }
  for (const a of Object.values(rows)) await store.createAgent(a)
  const before = await store.configSeq()
  t.equal(await store.markStale('v1', cut), 3, 'old-beat, never-old and the other tenant\'s agent')
  const health = async (tenant: string, id: string): Promise<string | undefined> => (await store.getAgent(tenant, id))?.health
  t.equal(await health(T1, 'old-beat'), 'unhealthy')
  t.equal(await health(T1, 'never-old'), 'unhealthy', 'no heartbeat: creation time counts')
  t.equal(await health(T2, 'other'), 'unhealthy', 'every tenant')
  t.equal(await health(T1, 'fresh-beat'), 'healthy', 'a heartbeat exactly at the cut-off is not stale')
  t.equal(await health(T1, 'never-new'), 'unknown', 'created after the cut-off')
  t.equal(await health(T1, 'legacy-old'), 'healthy', 'other contract untouched')
  t.equal(await health(T1, 'gone'), 'unknown', 'terminated agents are not marked')
  t.equal(await health(T1, 'suspended'), 'unknown', 'suspended agents are not marked')
  t.equal(await store.markStale('v1', cut), 0, 'a second pass marks nobody (and does not count the already unhealthy)')
  t.equal(await store.markStale('legacy', cut), 1)
  t.equal(await health(T1, 'legacy-old'), 'unhealthy')
  t.equal(await store.configSeq(), before, 'health changes do not bump config_seq')
})

t.test('upsertPolicies: a new policy is inserted with version 1 and returned as stored', async (t) => {
  const { store } = await open(t)
  const before = await store.configSeq()
  const [p] = await store.upsertPolicies(T1, [policy('limit', { config: { requests_per_minute: 5, nested: { a: [1] } }, priority: 7, is_active: false })])
  t.match(p, {
    id: /^[0-9a-f-]{36}$/, tenant_id: T1, name: 'limit', type: 'rate_limit', scope_type: 'ORG', scope_id: T1,
    config: { requests_per_minute: 5, nested: { a: [1] } }, enforcement: 'enforce', priority: 7, is_active: false, version: 1
  })
  t.equal(p?.created_at, p?.updated_at)
  t.same(await store.listPolicies(T1), [p])
  t.equal(await store.configSeq(), before + 1)
})

t.test('upsertPolicies: applying an unchanged policy keeps its version, updated_at and config_seq', async (t) => {
  const { store } = await open(t)
  const [first] = await store.upsertPolicies(T1, [policy('p')])
  const seqBefore = await store.configSeq()
  const [again] = await store.upsertPolicies(T1, [policy('p')])
  t.same(again, first, 'the same row, version 1')
  t.equal(await store.configSeq(), seqBefore, 'no bump')
})

t.test('upsertPolicies: a change of any field bumps the version by one and config_seq', async (t) => {
  const { store } = await open(t)
  const [first] = await store.upsertPolicies(T1, [policy('p')])
  const changes: Array<[string, Partial<PolicyWrite>]> = [
    ['type', { type: 'budget_limit' }],
    ['scope_type', { scope_type: 'TEAM' }],
    ['scope_id', { scope_id: 'blue' }],
    ['config', { config: { requests_per_minute: 11 } }],
    ['enforcement', { enforcement: 'audit' }],
    ['priority', { priority: 3 }],
    ['is_active', { is_active: false }]
  ]
  let version = 1
  let current: Partial<PolicyWrite> = {}
  for (const [field, change] of changes) {
    current = { ...current, ...change }
    const seqBefore = await store.configSeq()
    const [p] = await store.upsertPolicies(T1, [policy('p', current)])
    version++
    t.equal(p?.version, version, `${field} change gives version ${version}`)
    t.equal(p?.id, first?.id, 'same id')
    t.equal(p?.created_at, first?.created_at, 'created_at kept')
    t.equal(await store.configSeq(), seqBefore + 1, `${field} change bumps config_seq`)
  }
  t.match((await store.listPolicies(T1))[0], { ...current, version })
})

t.test('upsertPolicies: several policies are one transaction; a failing one leaves nothing behind', async (t) => {
  const { store } = await open(t)
  await store.upsertPolicies(T1, [policy('existing')])
  const seqBefore = await store.configSeq()
  const bad = policy('bad', { type: null as unknown as string }) // NOT NULL violation inside the transaction
  await t.rejects(store.upsertPolicies(T1, [policy('new-one'), policy('existing', { priority: 9 }), bad]), { code: 'SQLITE_CONSTRAINT_NOTNULL' })
  const list = await store.listPolicies(T1)
  t.same(list.map((p) => p.name), ['existing'], 'the insert before the failure was rolled back')
  t.match(list[0], { priority: 0, version: 1 }, 'the update before the failure was rolled back')
  t.equal(await store.configSeq(), seqBefore, 'config_seq not bumped')
})

t.test('upsertPolicies: one call bumps config_seq once, returns rows in input order; names are per tenant', async (t) => {
  const { store } = await open(t)
  const seqBefore = await store.configSeq()
  const rows = await store.upsertPolicies(T1, [policy('b', { priority: 1 }), policy('a', { priority: 1 }), policy('c', { priority: 5 })])
  t.same(rows.map((p) => p.name), ['b', 'a', 'c'], 'input order')
  t.equal(await store.configSeq(), seqBefore + 1, 'one bump for the whole batch')
  t.same((await store.listPolicies(T1)).map((p) => p.name), ['c', 'a', 'b'], 'listPolicies: priority descending, then name')
  const [other] = await store.upsertPolicies(T2, [policy('a', { priority: 2 })])
  t.equal(other?.version, 1, 'same name in another tenant is another policy')
  t.not(other?.id, rows[1]?.id)
  t.equal((await store.listPolicies(T1)).find((p) => p.name === 'a')?.priority, 1, 'T1\'s policy untouched')
  t.same(await store.upsertPolicies(T1, []), [], 'an empty list is a no-op')
})

t.test('deletePolicy: removes the tenant\'s policy once; another tenant\'s id or an unknown id is false', async (t) => {
  const { store } = await open(t)
  const [p] = await store.upsertPolicies(T1, [policy('p')])
  const id = p?.id as string
  const seqBefore = await store.configSeq()
  t.equal(await store.deletePolicy(T2, id), false, 'another tenant cannot delete it')
  t.equal((await store.listPolicies(T1)).length, 1)
  t.equal(await store.configSeq(), seqBefore, 'no bump for a refused delete')
  t.equal(await store.deletePolicy(T1, id), true)
  t.same(await store.listPolicies(T1), [])
  t.equal(await store.configSeq(), seqBefore + 1)
  t.equal(await store.deletePolicy(T1, id), false, 'second delete')
  t.equal(await store.deletePolicy(T1, randomUUID()), false, 'unknown id')
  t.equal(await store.configSeq(), seqBefore + 1)
})

t.test('setSecret: inserts, then updates the same (tenant, scope, scope id, name) in place; bumps config_seq each time', async (t) => {
  const { store } = await open(t)
  const s0 = await store.configSeq()
  await store.setSecret(secret({ value_sealed: 'v1:first' }))
  t.equal(await store.configSeq(), s0 + 1)
  await store.setSecret(secret({ value_sealed: 'v1:second', updated_at: '2026-11-23T00:00:00.000Z' }))
  t.equal(await store.configSeq(), s0 + 2)
  t.same(await store.listSecrets(T1), [secret({ value_sealed: 'v1:second', updated_at: '2026-11-23T00:00:00.000Z' })], 'one row, new value')
  await store.setSecret(secret({ scope_type: 'agent', scope_id: 'agent-1', value_sealed: 'v1:agent' }))
  await store.setSecret(secret({ scope_type: 'deployment', scope_id: 'dep', value_sealed: 'v1:dep' }))
  await store.setSecret(secret({ tenant_id: T2, value_sealed: 'v1:t2' }))
  t.same((await store.listSecrets(T1)).map((s) => `${s.scope_type}/${s.scope_id}/${s.value_sealed}`),
    ['agent/agent-1/v1:agent', 'deployment/dep/v1:dep', 'tenant//v1:second'], 'ordered by scope type, scope id, name')
  t.same((await store.listSecrets(T2)).map((s) => s.value_sealed), ['v1:t2'], 'tenants apart')
})

t.test('configSeq: agent, policy and secret changes bump it; tenants, heartbeats and events do not', async (t) => {
  const { store, file } = await open(t)
  const a = agent()
  let s = await store.configSeq()
  await store.createAgent(a)
  t.equal(await store.configSeq(), ++s, 'createAgent')
  await store.setAgentStatus(a.id, 'suspended', 'unknown')
  t.equal(await store.configSeq(), ++s, 'setAgentStatus')
  await store.upsertPolicies(T1, [policy('p')])
  t.equal(await store.configSeq(), ++s, 'upsertPolicies')
  await store.setSecret(secret())
  t.equal(await store.configSeq(), ++s, 'setSecret')
  await store.createTenant({ id: '00000000-0000-0000-0000-000000000003', name: 'three' })
  await store.addTenantKey(T1, hashOf('k'), 'tk_live_k')
  await store.recordHeartbeat(a.id, { health: 'healthy', at: '2026-11-22T00:00:00.000Z', report: {} })
  await store.writeBatch([event(), event({ cost_usd: 0.5 })], [evaluation()])
  await store.markStale('v1', '2030-01-01T00:00:00.000Z')
  t.equal(await store.configSeq(), s, 'unchanged by tenants, tenant keys, heartbeats, events, evaluations and markStale')
  const other = new SqliteStore(file)
  t.teardown(() => other.close())
  await other.upsertPolicies(T1, [policy('from-another-process')])
  t.equal(await store.configSeq(), s + 1, 'a change through another connection is seen')
})

t.test('writeBatch: events and evaluations are stored and read back with their JSON intact', async (t) => {
  const { store } = await open(t)
  const e = event({ payload: { text: 'ünï 🔑', list: [1, null, { x: true }] }, user_id: 'u1', evaluation_id: 'eval_1', cost_usd: 0.25, client_event_id: 'c-1' })
  const ev = evaluation({ id: 'eval_1', allowed: true, reason: null })
  await store.writeBatch([e], [ev])
  t.same(await store.listEvents(T1, { limit: 10 }), [e])
  t.same(await store.getEvaluation(T1, 'eval_1'), ev)
  t.equal(await store.countEvents(T1), 1)
  await store.writeBatch([], [])
  t.equal(await store.countEvents(T1), 1, 'an empty batch is a no-op')
})

t.test('writeBatch: an event whose client_event_id was stored for the agent is stored once (same batch or later batch)', async (t) => {
  const { store } = await open(t)
  await store.writeBatch([event({ client_event_id: 'c-1', payload: { v: 1 } }), event({ client_event_id: 'c-1', payload: { v: 2 } })], [])
  t.equal(await store.countEvents(T1), 1, 'duplicate within one batch')
  t.same((await store.listEvents(T1, { limit: 10 }))[0]?.payload, { v: 1 }, 'the first one wins')
  await store.writeBatch([event({ client_event_id: 'c-1', payload: { v: 3 } }), event({ client_event_id: 'c-2' })], [])
  t.equal(await store.countEvents(T1), 2, 'a retried event is ignored, the new one stored')
  await store.writeBatch([event({ agent_uuid: 'uuid-b', client_event_id: 'c-1' })], [])
  t.equal(await store.countEvents(T1), 3, 'the same client id from another agent is another event')
  await store.writeBatch([event({ client_event_id: null }), event({ client_event_id: null })], [])
  t.equal(await store.countEvents(T1), 5, 'events without a client id are never deduplicated')
  const dupId = event()
  await store.writeBatch([dupId], [])
  await store.writeBatch([{ ...dupId, payload: { changed: true } }], [])
  t.equal(await store.countEvents(T1), 6, 'an event id is stored once')
  const ev = evaluation()
  await store.writeBatch([], [ev])
  await store.writeBatch([], [{ ...ev, reason: 'other' }])
  t.equal((await store.getEvaluation(T1, ev.id))?.reason, ev.reason, 'an evaluation id is stored once, the first wins')
})

t.test('writeBatch: one transaction; a row that cannot be written leaves the whole batch out', async (t) => {
  const { store } = await open(t)
  const unserialisable = event({ payload: { n: 10n } })
  await t.rejects(store.writeBatch([event(), unserialisable], [evaluation({ id: 'eval_x' })]), TypeError)
  t.equal(await store.countEvents(T1), 0, 'the first event was rolled back')
  t.equal(await store.getEvaluation(T1, 'eval_x'), undefined, 'the evaluation was rolled back')
})

t.test('listEvents: newest received first, limited, filtered by agent, tenants apart', async (t) => {
  const { store } = await open(t)
  await store.writeBatch([
    event({ id: 'e1', received_at: '2026-11-22T10:00:01.000Z' }),
    event({ id: 'e2', received_at: '2026-11-22T10:00:03.000Z', agent_uuid: 'uuid-b' }),
    event({ id: 'e3', received_at: '2026-11-22T10:00:02.000Z' })
  ], [])
  await store.writeBatch([event({ id: 'e4', received_at: '2026-11-22T10:00:02.000Z' })], [])
  await store.writeBatch([event({ id: 'e5', tenant_id: T2, received_at: '2026-11-22T10:00:09.000Z' })], [])
  t.same((await store.listEvents(T1, { limit: 10 })).map((e) => e.id), ['e2', 'e4', 'e3', 'e1'], 'equal times: later insert first')
  t.same((await store.listEvents(T1, { limit: 2 })).map((e) => e.id), ['e2', 'e4'])
  t.same((await store.listEvents(T1, { agentUuid: 'uuid-a', limit: 10 })).map((e) => e.id), ['e4', 'e3', 'e1'])
  t.same((await store.listEvents(T1, { agentUuid: 'uuid-none', limit: 10 })), [])
  t.same((await store.listEvents(T2, { limit: 10 })).map((e) => e.id), ['e5'])
  t.equal(await store.countEvents(T1), 4)
  t.equal(await store.countEvents(T2), 1)
})

t.test('getEvaluation: only within its tenant; unknown ids give undefined', async (t) => {
  const { store } = await open(t)
  const ev = evaluation({ id: 'eval_t1' })
  await store.writeBatch([], [ev])
  t.same(await store.getEvaluation(T1, 'eval_t1'), ev)
  t.equal(await store.getEvaluation(T2, 'eval_t1'), undefined, 'another tenant')
  t.equal(await store.getEvaluation(T1, 'eval_nope'), undefined)
})

t.test('spendSince: costs of the tenant at or after the cut-off, without cost-less events', async (t) => {
  const { store } = await open(t)
  await store.writeBatch([
    event({ agent_id: 'a', user_id: 'u1', cost_usd: 1.5, timestamp: '2026-11-22T09:59:59.999Z' }),
    event({ agent_id: 'a', user_id: 'u1', cost_usd: 2, timestamp: '2026-11-22T10:00:00.000Z' }),
    event({ agent_id: 'b', user_id: null, cost_usd: 0.25, timestamp: '2026-11-22T11:00:00.000Z' }),
    event({ agent_id: 'b', cost_usd: null, timestamp: '2026-11-22T11:00:00.000Z' }),
    event({ tenant_id: T2, agent_id: 'c', cost_usd: 9, timestamp: '2026-11-22T11:00:00.000Z' })
  ], [])
  const rows = await store.spendSince(T1, '2026-11-22T10:00:00.000Z')
  t.same(rows.sort((x, y) => x.at.localeCompare(y.at)), [
    { agent_id: 'a', user_id: 'u1', usd: 2, at: '2026-11-22T10:00:00.000Z' },
    { agent_id: 'b', user_id: null, usd: 0.25, at: '2026-11-22T11:00:00.000Z' }
  ])
  t.same(await store.spendSince(T2, '2026-11-22T00:00:00.000Z'), [{ agent_id: 'c', user_id: null, usd: 9, at: '2026-11-22T11:00:00.000Z' }])
  t.same(await store.spendSince(T1, '2026-11-23T00:00:00.000Z'), [])
})

t.test('SQL-looking values are stored verbatim and do nothing', async (t) => {
  const { store } = await open(t)
  const evilTenant = '00000000-0000-0000-0000-0000000000ee'
  await store.createTenant({ id: evilTenant, name: EVIL })
  t.equal((await store.getTenant(evilTenant))?.name, EVIL)
  const a = agent({ agent_id: EVIL, name: EVIL, metadata: { team: EVIL }, capabilities: [EVIL], deployment_id: EVIL })
  t.equal(await store.createAgent(a), true)
  t.same(await store.getAgent(T1, EVIL), a)
  t.equal(await store.getAgent(T1, "' OR '1'='1"), undefined, 'a tautology does not match anything')
  t.equal(await store.findAgentByKeyHash("' OR 1=1 --"), undefined)
  const [p] = await store.upsertPolicies(T1, [policy(EVIL, { scope_id: EVIL, config: { pattern: EVIL } })])
  t.match(p, { name: EVIL, scope_id: EVIL, config: { pattern: EVIL } })
  await store.setSecret(secret({ name: EVIL, scope_id: EVIL, value_sealed: EVIL }))
  t.equal((await store.listSecrets(T1))[0]?.name, EVIL)
  await store.writeBatch([event({ event_type: EVIL, user_id: EVIL, payload: { q: EVIL }, client_event_id: EVIL })], [evaluation({ id: EVIL, reason: EVIL })])
  t.match((await store.listEvents(T1, { limit: 1 }))[0], { event_type: EVIL, user_id: EVIL, payload: { q: EVIL }, client_event_id: EVIL })
  t.equal((await store.getEvaluation(T1, EVIL))?.reason, EVIL)
  t.equal(await store.deletePolicy(T1, "' OR '1'='1"), false, 'delete with a tautology id deletes nothing')
  t.equal((await store.listPolicies(T1)).length, 1)
  const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>
  t.same(tables.map((r) => r.name), ['agents', 'approvals', 'evaluations', 'events', 'llm_providers', 'meta', 'policies', 'secrets', 'tenant_keys', 'tenants'], 'every table is still there')
  t.equal((await store.listAgents(T1)).length, 1)
})

t.test('writeBatch: a row that breaks a NOT NULL column fails the batch instead of being silently dropped', async (t) => {
  // BUG (latent): INSERT OR IGNORE also ignores NOT NULL violations, so writeBatch resolves (the ingest
  // writer acknowledges 202) while the event is not stored. Upstream validation keeps nulls out today.
  const { store } = await open(t)
  await t.rejects(store.writeBatch([event(), event({ event_type: null as unknown as string })], []))
  t.equal(await store.countEvents(T1), 0)
})

t.test('createAgent: a row that breaks a NOT NULL column throws instead of reporting a duplicate agent_id', async (t) => {
  // BUG (latent): INSERT OR IGNORE turns a NOT NULL violation into changes = 0, which createAgent
  // reports as "agent_id exists" (409 conflict).
  const { store } = await open(t)
  await t.rejects(store.createAgent(agent({ name: null as unknown as string })))
})
