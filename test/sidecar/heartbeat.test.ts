/**
 * The sidecar's heartbeats (sidecar/heartbeat.ts): per-agent request stats over a 5-minute window,
 * and heartbeats sent when due with those metrics, the config hash and the spool's state; a
 * `config_changed` answer asks for a refresh.
 */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { testApp } from '../control-plane/helpers.js'
import { hashKey } from '../../shared/keys.js'
import { Spool } from '../../sidecar/spool.js'
import { Upstream } from '../../sidecar/upstream.js'
import { AgentStats, Heartbeats, type HeartbeatAgent } from '../../sidecar/heartbeat.js'

t.test('AgentStats: requests, average latency, and errors of the last 5 minutes only', async (t) => {
  let now = 10 * 60_000
  const s = new AgentStats(() => now)
  t.strictSame(s.metrics(), { requests_processed: 0, errors_last_5min: 0, avg_latency_ms: 0 })
  s.record(2, false)
  s.record(4, true)
  now += 60_000
  s.record(6, true)
  t.strictSame(s.metrics(), { requests_processed: 3, errors_last_5min: 2, avg_latency_ms: 4 })
  now += 4 * 60_000
  t.equal(s.metrics().errors_last_5min, 1, 'the first minute has left the window')
  now += 60_000
  t.equal(s.metrics().errors_last_5min, 0)
  now += 60 * 60_000
  s.record(1, true)
  t.equal(s.metrics().errors_last_5min, 1, 'after a long gap the window starts afresh')
  t.equal(s.metrics().requests_processed, 4, 'totals are kept')
})

t.test('Heartbeats: sent when due with metrics, config hash and spool state; config_changed asks for a refresh', async (t) => {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-hb-'))
  const spool = new Spool(join(dir, 'spool.db'))
  const upstream = new Upstream(address)
  t.teardown(async () => {
    await upstream.close()
    spool.close()
    await ta.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const { agentId, key } = await ta.registerV1({ agent_type: 'custom', agent_id: 'beating' })
  const current = (await ta.v1('GET', `/config/${agentId}`, { key })).json() as { config_hash: string }
  const agent: HeartbeatAgent = { keyHash: hashKey(key), contract: 'v1', key, agentId, configHash: current.config_hash, intervalSeconds: 60 }
  const stats = new AgentStats()
  stats.record(3, false)
  spool.append('other', 'v1', 'x', [{ type: 't', category: 'audit' }])
  let now = 1_000_000
  const changed: string[] = []
  const hb = new Heartbeats(upstream, spool, () => [agent], () => stats, (a) => changed.push(a.agentId), { apiName: 'service', now: () => now })
  await hb.tick()
  const stored = await ta.app.services.store.findAgentByKeyHash(hashKey(key))
  t.equal(stored?.health, 'healthy', 'the control plane took the heartbeat')
  t.ok(stored?.last_heartbeat !== null)
  t.strictSame(hb.status(), { sent: 1, failed: 0 })
  t.strictSame(changed, [], 'the hash was current')
  now += 30_000
  await hb.tick()
  t.equal(hb.status().sent, 1, 'not due again before the interval')
  now += 30_000
  agent.configHash = 'sha256:' + '0'.repeat(64)
  await hb.tick()
  t.equal(hb.status().sent, 2)
  t.strictSame(changed, ['beating'], 'a stale hash: config_changed asks for a refresh')
  agent.key = 'sk_agent_' + 'N'.repeat(43)
  now += 60_000
  await hb.tick()
  t.strictSame(hb.status(), { sent: 2, failed: 1 }, 'a refused heartbeat counts as failed')
  hb.start()
  hb.start()
  hb.stop()
  hb.stop()
})

t.test('Heartbeats: an unreachable control plane counts a failure and throws nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-hb-'))
  const spool = new Spool(join(dir, 'spool.db'))
  const upstream = new Upstream('http://127.0.0.1:9', { connectTimeoutMs: 300 })
  t.teardown(async () => { await upstream.close(); spool.close(); rmSync(dir, { recursive: true, force: true }) })
  const agent: HeartbeatAgent = { keyHash: 'h', contract: 'v1', key: 'k', agentId: 'a', configHash: undefined, intervalSeconds: 1 }
  const hb = new Heartbeats(upstream, spool, () => [agent], () => undefined, () => {}, { apiName: 'service' })
  await hb.tick()
  t.strictSame(hb.status(), { sent: 0, failed: 1 })
})
