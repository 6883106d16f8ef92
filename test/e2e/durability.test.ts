import t from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { request } from 'undici'
import { BIN, startControlPlane } from './helpers.js'
import { SqliteStore } from '../../control-plane/store/sqlite/index.js'

const DEFAULT_TENANT = '00000000-0000-0000-0000-000000000001'

t.test('durability: every event acknowledged with 202 is in the database after SIGKILL and restart', async (t) => {
  const dir = t.testdir()
  const cp = await startControlPlane(['--data-dir', dir])
  t.teardown(() => { cp.child.kill('SIGKILL') })
  const reg = await request(`${cp.url}/api/service/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-bootstrap': cp.token },
    body: JSON.stringify({ agent_type: 'custom', agent_id: 'durable' })
  })
  t.equal(reg.statusCode, 201)
  const { api_key: key } = await reg.body.json() as { api_key: string }

  const batches = 40
  const perBatch = 50
  let acknowledged = 0
  await Promise.all(Array.from({ length: batches }, async (_, b) => {
    const events = Array.from({ length: perBatch }, (_, i) => ({
      id: `b${b}-e${i}`, type: 'tool.invoked', category: 'telemetry', timestamp: new Date().toISOString(), payload: { i, b }
    }))
    const res = await request(`${cp.url}/api/service/v1/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-key': key },
      body: JSON.stringify({ agent_id: 'durable', events })
    })
    const body = await res.body.json() as { accepted: number }
    if (res.statusCode === 202) acknowledged += body.accepted
  }))
  t.equal(acknowledged, batches * perBatch, 'every batch was acknowledged')
  cp.child.kill('SIGKILL')
  await cp.exited

  // Restart on the same data folder, then count what is stored.
  const again = await startControlPlane(['--data-dir', dir])
  again.child.kill('SIGTERM')
  t.equal(await again.exited, 0, 'the restarted process shuts down cleanly on SIGTERM')
  const store = new SqliteStore(join(dir, 'agentgov.db'))
  t.teardown(() => store.close())
  const rows = await store.listEvents(DEFAULT_TENANT, { limit: 100_000 })
  const telemetry = rows.filter((e) => e.event_type === 'tool.invoked')
  t.equal(telemetry.length, acknowledged, 'all acknowledged events are stored, none twice')
  t.equal(new Set(telemetry.map((e) => e.client_event_id)).size, acknowledged)
})

t.test('start-up: an invalid variable stops the process with a message naming it', async (t) => {
  const dir = t.testdir()
  const res = spawnSync(process.execPath, [BIN, 'control-plane', '--data-dir', dir], { env: { ...process.env, PORT: 'eighty' }, encoding: 'utf8' })
  t.equal(res.status, 2)
  t.match(res.stderr, /PORT: must be an integer/)
  const res2 = spawnSync(process.execPath, [BIN, 'control-plane', '--data-dir', dir, '--port', '0'], { env: { ...process.env, SERVICE_MASTER_KEY: 'short' }, encoding: 'utf8' })
  t.equal(res2.status, 2)
  t.match(res2.stderr, /SERVICE_MASTER_KEY: must be 32 bytes/)
})

t.test('start-up: the generated bootstrap secret is reused, so the printed token stays valid across restarts', async (t) => {
  const dir = t.testdir()
  const a = await startControlPlane(['--data-dir', dir])
  a.child.kill('SIGTERM')
  t.equal(await a.exited, 0)
  const b = await startControlPlane(['--data-dir', dir])
  t.teardown(() => { b.child.kill('SIGKILL') })
  t.equal(b.token, a.token)
  const res = await request(`${b.url}/healthz`)
  t.equal(res.statusCode, 200)
  t.same(await res.body.json(), { status: 'ok' })
  const ready = await request(`${b.url}/readyz`)
  t.equal(ready.statusCode, 200)
  await ready.body.dump()
  const metrics = await request(`${b.url}/metrics`)
  t.match(await metrics.body.text(), /agentgov_http_requests_total/)
  const docs = await request(`${b.url}/api/service/v1/openapi.json`)
  const doc = await docs.body.json() as { paths: Record<string, unknown> }
  t.ok(doc.paths['/api/service/v1/evaluate'], 'the OpenAPI document lists v1 evaluate')
  t.ok(doc.paths['/api/service/evaluate'], 'and legacy evaluate')
  b.child.kill('SIGTERM')
  t.equal(await b.exited, 0)
})
