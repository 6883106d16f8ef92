import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import { HealthMonitor, LEGACY_HEARTBEAT_SECONDS, MISSED_HEARTBEATS } from '../../../control-plane/health/monitor.js'
import { SqliteStore } from '../../../control-plane/store/sqlite/index.js'
import type { AgentRecord, Contract, Store } from '../../../control-plane/store/store.js'


const TENANT = '00000000-0000-0000-0000-000000000001'
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)
const iso = (ms: number): string => new Date(ms).toISOString()

interface LogCall { level: string, obj: unknown, msg: unknown }

/** A logger that records calls; enough of pino's surface for the monitor. */
function recordingLogger (): { log: FastifyBaseLogger, calls: LogCall[] } {
  const calls: LogCall[] = []
  const at = (level: string) => (obj: unknown, msg?: unknown): void => { calls.push({ level, obj, msg }) }
  const log = {
    level: 'info',
    info: at('info'),
    error: at('error'),
    warn: at('warn'),
    debug: at('debug'),
    trace: at('trace'),
    fatal: at('fatal'),
    silent: () => {},
    child: () => log
  }
  return { log: log as unknown as FastifyBaseLogger, calls }
}

async function openStore (t: Test): Promise<SqliteStore> {
  const store = new SqliteStore(join(t.testdir(), 'agentgov.db'))
  t.teardown(() => store.close())
  await store.createTenant({ id: TENANT, name: 'default' })
  return store
}

let n = 0
async function addAgent (store: Store, agentId: string, contract: Contract, lastHeartbeat: number | null, over: Partial<AgentRecord> = {}): Promise<void> {
  n++
  const ok = await store.createAgent({
    id: randomUUID(),
    tenant_id: TENANT,
    agent_id: agentId,
    name: agentId,
    agent_type: 'custom',
    capabilities: [],
    metadata: {},
    deployment_id: null,
    key_hash: `hash-${n}-${randomUUID()}`,
    key_prefix: 'sk_agent_abc',
    contract,
    status: 'active',
    health: lastHeartbeat === null ? 'unknown' : 'healthy',
    last_heartbeat: lastHeartbeat === null ? null : iso(lastHeartbeat),
    created_at: iso(NOW - 24 * 3_600_000),
    updated_at: iso(NOW - 24 * 3_600_000),
    ...over
  })
  if (!ok) throw new Error(`agent ${agentId} not created`)
}

async function health (store: Store, agentId: string): Promise<string | undefined> {
  return (await store.getAgent(TENANT, agentId))?.health
}

t.test('constants: 3 missed heartbeats; legacy agents at 30 s', async (t) => {
  t.equal(MISSED_HEARTBEATS, 3)
  t.equal(LEGACY_HEARTBEAT_SECONDS, 30)
})

t.test('check: v1 agents silent for more than 3 intervals (60 s) become unhealthy; fresher ones stay', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'silent-181s', 'v1', NOW - 181_000)
  await addAgent(store, 'silent-180s', 'v1', NOW - 180_000)
  await addAgent(store, 'silent-179s', 'v1', NOW - 179_000)
  await addAgent(store, 'just-now', 'v1', NOW)
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  t.equal(await m.check(NOW), 1)
  t.equal(await health(store, 'silent-181s'), 'unhealthy')
  t.equal(await health(store, 'silent-180s'), 'healthy', 'exactly 3 intervals is not yet stale')
  t.equal(await health(store, 'silent-179s'), 'healthy')
  t.equal(await health(store, 'just-now'), 'healthy')
})

t.test('check: legacy agents use the 30 s default (stale after 90 s) whatever the v1 interval', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'legacy-91s', 'legacy', NOW - 91_000)
  await addAgent(store, 'legacy-89s', 'legacy', NOW - 89_000)
  await addAgent(store, 'v1-91s', 'v1', NOW - 91_000)
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 300, log })
  t.equal(await m.check(NOW), 1)
  t.equal(await health(store, 'legacy-91s'), 'unhealthy')
  t.equal(await health(store, 'legacy-89s'), 'healthy')
  t.equal(await health(store, 'v1-91s'), 'healthy', 'v1 at 300 s is stale only after 900 s')
  t.equal(await m.check(NOW + 900_001 - 91_000), 2, 'later: the v1 agent and the 89 s legacy agent')
  t.equal(await health(store, 'v1-91s'), 'unhealthy')
  t.equal(await health(store, 'legacy-89s'), 'unhealthy')
})

t.test('check: the configured interval sets the v1 cut-off (10 s interval: stale after 30 s)', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'v1-31s', 'v1', NOW - 31_000)
  await addAgent(store, 'v1-29s', 'v1', NOW - 29_000)
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 10, log })
  t.equal(await m.check(NOW), 1)
  t.equal(await health(store, 'v1-31s'), 'unhealthy')
  t.equal(await health(store, 'v1-29s'), 'healthy')
})

t.test('check: an agent that never sent a heartbeat is judged by its creation time', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'never-old', 'v1', null, { created_at: iso(NOW - 200_000) })
  await addAgent(store, 'never-new', 'v1', null, { created_at: iso(NOW - 10_000) })
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  t.equal(await m.check(NOW), 1)
  t.equal(await health(store, 'never-old'), 'unhealthy')
  t.equal(await health(store, 'never-new'), 'unknown')
})

t.test('check: terminated and suspended agents are left alone; already unhealthy agents are not counted again', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'terminated', 'v1', NOW - 3_600_000, { status: 'terminated', health: 'unknown' })
  await addAgent(store, 'suspended', 'v1', NOW - 3_600_000, { status: 'suspended' })
  await addAgent(store, 'stale', 'v1', NOW - 3_600_000)
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  t.equal(await m.check(NOW), 1)
  t.equal(await health(store, 'terminated'), 'unknown')
  t.equal(await health(store, 'suspended'), 'healthy')
  t.equal(await m.check(NOW + 1000), 0, 'second pass: nobody new')
  t.same(m.status(), { runs: 2, marked: 1 })
})

t.test('check: a heartbeat after being marked brings the agent back until it goes silent again', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'a', 'v1', NOW - 200_000)
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  t.equal(await m.check(NOW), 1)
  const agent = await store.getAgent(TENANT, 'a')
  await store.recordHeartbeat(agent?.id as string, { health: 'healthy', at: iso(NOW), report: {} })
  t.equal(await m.check(NOW + 60_000), 0)
  t.equal(await health(store, 'a'), 'healthy')
  t.equal(await m.check(NOW + 181_000), 1)
  t.equal(await health(store, 'a'), 'unhealthy')
})

t.test('check: logs one info line with the count when agents were marked, nothing when none were', async (t) => {
  const store = await openStore(t)
  await addAgent(store, 'x', 'v1', NOW - 200_000)
  await addAgent(store, 'y', 'legacy', NOW - 200_000)
  const { log, calls } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  await m.check(NOW)
  t.same(calls, [{ level: 'info', obj: { agents: 2 }, msg: 'agents marked unhealthy after missed heartbeats' }])
  await m.check(NOW)
  t.equal(calls.length, 1, 'no log for a pass that marked nobody')
})

t.test('status: counts passes and marked agents', async (t) => {
  const store = await openStore(t)
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  t.same(m.status(), { runs: 0, marked: 0 })
  await m.check(NOW)
  t.same(m.status(), { runs: 1, marked: 0 })
  await addAgent(store, 'a', 'v1', NOW - 200_000)
  await addAgent(store, 'b', 'legacy', NOW - 200_000)
  await m.check(NOW)
  t.same(m.status(), { runs: 2, marked: 2 })
})

t.test('check: asks the store with the right cut-offs (fake store)', async (t) => {
  const asked: Array<[Contract, string]> = []
  const store = { markStale: async (c: Contract, before: string) => { asked.push([c, before]); return 0 } } as unknown as Store
  const { log } = recordingLogger()
  await new HealthMonitor(store, { heartbeatIntervalSeconds: 45, log }).check(NOW)
  t.same(asked, [['v1', iso(NOW - 135_000)], ['legacy', iso(NOW - 90_000)]])
})

t.test('check: a store failure rejects the pass and is not counted as a run', async (t) => {
  const store = { markStale: async () => { throw new Error('database is locked') } } as unknown as Store
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, log })
  await t.rejects(m.check(NOW), { message: 'database is locked' })
  t.same(m.status(), { runs: 0, marked: 0 })
})

/** Waits (bounded) until `cond` holds; the bound only stops a broken test from hanging. */
async function until (cond: () => boolean, limitMs = 5000): Promise<boolean> {
  const end = Date.now() + limitMs
  while (!cond()) {
    if (Date.now() > end) return false
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
  return true
}

t.test('start/stop: start() runs passes on its own timer (unref\'d); stop() ends them', async (t) => {
  let calls = 0
  const store = { markStale: async () => { calls++; return 0 } } as unknown as Store
  const { log } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, checkEveryMs: 1, log })
  m.start()
  const timer = (m as unknown as { timer: NodeJS.Timeout | null }).timer
  t.equal(timer?.hasRef(), false, 'the timer does not keep the process alive')
  t.ok(await until(() => m.status().runs >= 2), 'passes run')
  m.stop()
  t.equal((m as unknown as { timer: NodeJS.Timeout | null }).timer, null)
  await new Promise((resolve) => setImmediate(resolve))
  const runs = m.status().runs
  const storeCalls = calls
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(m.status().runs, runs, 'no pass after stop()')
  t.equal(calls, storeCalls, 'the store is not asked after stop()')
  m.stop()
  t.pass('a second stop() is harmless')
})

t.test('start: a failing pass is logged as an error and the timer keeps going', async (t) => {
  let fail = true
  let calls = 0
  const boom = new Error('disk I/O error')
  const store = { markStale: async () => { calls++; if (fail) throw boom; return 0 } } as unknown as Store
  const { log, calls: logs } = recordingLogger()
  const m = new HealthMonitor(store, { heartbeatIntervalSeconds: 60, checkEveryMs: 1, log })
  t.teardown(() => m.stop())
  m.start()
  t.ok(await until(() => logs.some((c) => c.level === 'error')), 'an error was logged')
  const err = logs.find((c) => c.level === 'error')
  t.same(err, { level: 'error', obj: { err: boom }, msg: 'health monitor pass failed' })
  fail = false
  t.ok(await until(() => m.status().runs >= 1), 'later passes succeed')
  t.ok(calls > 1)
})

t.test('stop: before start() is harmless', async (t) => {
  const { log } = recordingLogger()
  const m = new HealthMonitor({} as Store, { heartbeatIntervalSeconds: 60, log })
  m.stop()
  t.same(m.status(), { runs: 0, marked: 0 })
})
