import t, { type Test } from 'tap'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { SqliteStore } from '../../../control-plane/store/sqlite/index.js'
import { MIGRATIONS } from '../../../control-plane/store/sqlite/migrations/index.js'
import type { AgentRecord, EventRow } from '../../../control-plane/store/store.js'

const T = '00000000-0000-0000-0000-0000000000aa'
const T2 = '00000000-0000-0000-0000-0000000000bb'

function agent (over: Partial<AgentRecord> = {}): AgentRecord {
  const now = new Date().toISOString()
  return {
    id: crypto.randomUUID(), tenant_id: T, agent_id: 'bot', name: 'Bot', agent_type: 'custom', capabilities: ['chat'], metadata: { team: 'x' },
    deployment_id: null, key_hash: crypto.randomUUID().replace(/-/g, '').padEnd(64, '0'), key_prefix: 'sk_agent_abc', contract: 'v1',
    status: 'active', health: 'unknown', last_heartbeat: null, created_at: now, updated_at: now, ...over
  }
}

function event (over: Partial<EventRow> = {}): EventRow {
  const now = new Date().toISOString()
  return {
    id: crypto.randomUUID(), tenant_id: T, agent_uuid: 'a-uuid', agent_id: 'bot', event_type: 'x', category: 'telemetry', timestamp: now,
    user_id: null, payload: { k: 1 }, evaluation_id: null, batch_id: 'batch_1', client_event_id: null, cost_usd: null, received_at: now, ...over
  }
}

async function open (t: Test): Promise<{ store: SqliteStore, file: string }> {
  const file = join(t.testdir(), 'db.sqlite')
  const store = new SqliteStore(file)
  await store.createTenant({ id: T, name: 'a' })
  await store.createTenant({ id: T2, name: 'b' })
  return { store, file }
}

t.test('migrations: applied once, kept on reopen; a newer schema is refused', async (t) => {
  const { store, file } = await open(t)
  t.equal(store.db.pragma('user_version', { simple: true }), MIGRATIONS.length)
  t.equal(store.db.pragma('journal_mode', { simple: true }), 'wal')
  await store.close()
  const again = new SqliteStore(file)
  t.equal((await again.listTenants()).length, 2, 'data kept')
  await again.close()
  const raw = new Database(file)
  raw.pragma(`user_version = ${MIGRATIONS.length + 1}`)
  raw.close()
  t.throws(() => new SqliteStore(file), /newer than this agentgov/)
})

t.test('agents: unique agent_id per tenant, lookup by key hash, status, heartbeat, stale marking', async (t) => {
  const { store } = await open(t)
  t.teardown(() => store.close())
  const seq0 = await store.configSeq()
  const a = agent()
  t.equal(await store.createAgent(a), true)
  t.equal(await store.createAgent(agent()), false, 'same agent_id in the tenant')
  t.equal(await store.createAgent(agent({ tenant_id: T2 })), true, 'same agent_id in another tenant')
  t.ok(await store.configSeq() > seq0, 'the change counter moved')
  t.same((await store.findAgentByKeyHash(a.key_hash))?.capabilities, ['chat'])
  t.equal(await store.findAgentByKeyHash('0'.repeat(64)), undefined)
  await store.setAgentStatus(a.id, 'terminated', 'unknown')
  t.equal((await store.getAgent(T, 'bot'))?.status, 'terminated')
  const b = agent({ agent_id: 'old', created_at: '2020-01-01T00:00:00.000Z' })
  await store.createAgent(b)
  await store.recordHeartbeat(b.id, { health: 'healthy', at: '2020-01-01T00:00:00.000Z', report: { v: 1 } })
  t.equal(await store.markStale('legacy', '2021-01-01T00:00:00.000Z'), 0, 'other contract untouched')
  t.equal(await store.markStale('v1', '2021-01-01T00:00:00.000Z'), 1)
  t.equal((await store.getAgent(T, 'old'))?.health, 'unhealthy')
  t.equal(await store.markStale('v1', '2021-01-01T00:00:00.000Z'), 0, 'already unhealthy, terminated agents are left')
  t.same((await store.listAgents(T)).map((x) => x.agent_id).sort(), ['bot', 'old'])
})

t.test('policies: insert at version 1, unchanged keeps it, change bumps it, delete; the change counter follows', async (t) => {
  const { store } = await open(t)
  t.teardown(() => store.close())
  const p = { name: 'p', type: 'custom', scope_type: 'ORG', scope_id: T, config: { deny_if: false }, enforcement: 'enforce', priority: 0, is_active: true }
  const [first] = await store.upsertPolicies(T, [p])
  t.equal(first?.version, 1)
  const seq = await store.configSeq()
  t.equal((await store.upsertPolicies(T, [p]))[0]?.version, 1, 'unchanged')
  t.equal(await store.configSeq(), seq, 'no change, no bump')
  t.equal((await store.upsertPolicies(T, [{ ...p, is_active: false }]))[0]?.version, 2)
  t.equal((await store.upsertPolicies(T, [{ ...p, is_active: false, config: { deny_if: true } }]))[0]?.version, 3)
  t.ok(await store.configSeq() > seq)
  t.same(await store.listPolicies(T2), [], 'tenants are apart')
  t.equal(await store.deletePolicy(T2, first?.id as string), false, 'another tenant cannot delete it')
  t.equal(await store.deletePolicy(T, first?.id as string), true)
  t.same(await store.listPolicies(T), [])
})

t.test('secrets: upsert by tenant, scope and name; the change counter moves', async (t) => {
  const { store } = await open(t)
  t.teardown(() => store.close())
  const seq = await store.configSeq()
  const s = { tenant_id: T, scope_type: 'tenant' as const, scope_id: '', name: 'A', value_sealed: 'v1:x', updated_at: 'now' }
  await store.setSecret(s)
  await store.setSecret({ ...s, value_sealed: 'v1:y' })
  const rows = await store.listSecrets(T)
  t.equal(rows.length, 1)
  t.equal(rows[0]?.value_sealed, 'v1:y')
  t.ok(await store.configSeq() > seq)
  t.same(await store.listSecrets(T2), [])
})

t.test('events and evaluations: one transaction, a repeated sender id stored once, spend since a time', async (t) => {
  const { store } = await open(t)
  t.teardown(() => store.close())
  const seq = await store.configSeq()
  await store.writeBatch([
    event({ client_event_id: 'c1', cost_usd: 0.5, user_id: 'u1' }),
    event({ client_event_id: 'c1' }),
    event({ payload: { text: "'; DROP TABLE agents; --" } }),
    event({ tenant_id: T2 })
  ], [{ id: 'eval_1', tenant_id: T, agent_uuid: 'a-uuid', allowed: false, reason: 'r', request: { q: 1 }, decision: { allowed: false }, created_at: 'now' }])
  t.equal(await store.configSeq(), seq, 'events do not move the change counter')
  t.equal(await store.countEvents(T), 2, 'the repeated client id is stored once')
  t.equal(await store.countEvents(T2), 1)
  const events = await store.listEvents(T, { limit: 10 })
  t.ok(events.some((e) => (e.payload as { text?: string }).text === "'; DROP TABLE agents; --"), 'stored verbatim')
  t.same((await store.listEvents(T, { agentUuid: 'nobody', limit: 10 })), [])
  t.match(await store.getEvaluation(T, 'eval_1'), { allowed: false, reason: 'r', request: { q: 1 } })
  t.equal(await store.getEvaluation(T2, 'eval_1'), undefined, 'another tenant cannot read it')
  const spend = await store.spendSince(T, '2000-01-01T00:00:00.000Z')
  t.same(spend.map((s) => [s.agent_id, s.user_id, s.usd]), [['bot', 'u1', 0.5]])
  t.same(store.db.prepare('SELECT count(*) AS n FROM agents').get(), { n: 0 }, 'the agents table is still there')
})
