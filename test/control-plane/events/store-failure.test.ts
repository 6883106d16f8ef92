import t from 'tap'
import { testApp } from '../helpers.js'

t.test('events: when the commit fails the batch is answered 503 with Retry-After, never 202', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1()
  const store = ta.app.services.store
  const original = store.writeBatch.bind(store)
  let fail = true
  store.writeBatch = async (events, evaluations) => {
    if (fail) throw new Error('disk full')
    return await original(events, evaluations)
  }
  const body = { agent_id: agentId, events: [{ type: 'x', category: 'telemetry', timestamp: '2026-11-22T00:00:00Z' }] }
  const res = await ta.v1('POST', '/events', { key, body })
  t.equal(res.statusCode, 503)
  t.match(res.json(), { statusCode: 503, error: 'service_unavailable' })
  t.notMatch(res.body, /disk full/, 'the cause is logged, not sent')
  t.equal(res.headers['retry-after'], '1')
  fail = false
  const retry = await ta.v1('POST', '/events', { key, body })
  t.equal(retry.statusCode, 202, 'a retry after recovery is stored')
  const legacy = await ta.registerLegacy()
  fail = true
  const lres = await ta.legacy('POST', '/events', { key: legacy.key, body: { events: [{ type: 'agent.started', timestamp: '2026-11-22T00:00:00Z' }] } })
  t.equal(lres.statusCode, 503, 'the legacy contract answers the same')
  fail = false
})

t.test('health monitor: agents silent for 3 intervals become unhealthy; legacy agents after 90 s', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const v1 = await ta.registerV1({ agent_type: 'custom', agent_id: 'v1-agent' })
  const legacy = await ta.registerLegacy({ name: 'old', agent_id: 'legacy-agent' })
  await ta.v1('POST', '/heartbeat', { key: v1.key, body: { agent_id: v1.agentId, status: 'healthy' } })
  await ta.legacy('POST', '/heartbeat', { key: legacy.key, body: { status: 'healthy' } })
  const { monitor, store } = ta.app.services
  const now = Date.now()
  t.equal(await monitor.check(now + 60_000), 0, 'one minute later nobody is stale')
  t.equal(await monitor.check(now + 100_000), 1, 'after 90 s of silence the legacy agent is marked')
  t.equal((await store.getAgent('00000000-0000-0000-0000-000000000001', 'legacy-agent'))?.health, 'unhealthy')
  t.equal((await store.getAgent('00000000-0000-0000-0000-000000000001', 'v1-agent'))?.health, 'healthy')
  t.equal(await monitor.check(now + 181_000), 1, 'after 3 x 60 s the v1 agent is marked')
  t.equal((await store.getAgent('00000000-0000-0000-0000-000000000001', 'v1-agent'))?.health, 'unhealthy')
  await ta.v1('POST', '/heartbeat', { key: v1.key, body: { agent_id: v1.agentId, status: 'healthy' } })
  t.equal((await store.getAgent('00000000-0000-0000-0000-000000000001', 'v1-agent'))?.health, 'healthy', 'a heartbeat brings it back')
  t.same(monitor.status(), { runs: 3, marked: 2 })
})
