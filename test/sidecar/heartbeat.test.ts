/**
 * The sidecar's heartbeats (sidecar/heartbeat.ts): per-agent request stats over a 5-minute window,
 * and heartbeats sent when due with those metrics, the config hash and the spool's state; a
 * `config_changed` answer asks for a refresh.
 */
import t, { type Test } from 'tap'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
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

interface Seen { method: string | undefined, url: string | undefined, headers: IncomingHttpHeaders, body: unknown }

/** A fake control plane that records each request and answers with `answer()` as JSON. */
async function fakeControlPlane (t: Test, answer: () => unknown): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => { raw += c.toString() })
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: raw === '' ? undefined : JSON.parse(raw) })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer()))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { await new Promise((resolve) => server.close(resolve)) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

function tempSpool (t: Test): Spool {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-hb-'))
  const spool = new Spool(join(dir, 'spool.db'))
  t.teardown(() => { spool.close(); rmSync(dir, { recursive: true, force: true }) })
  return spool
}

t.test('Heartbeats, legacy agent: tick -> POST /api/<apiName>/heartbeat with a bearer key and {status, metrics, config_hash} only', async (t) => {
  const cp = await fakeControlPlane(t, () => ({ acknowledged: true, config_updated: false }))
  const spool = tempSpool(t)
  spool.append('other', 'v1', 'x', [{ type: 't', category: 'audit' }])
  const upstream = new Upstream(cp.url)
  t.teardown(async () => { await upstream.close() })
  const key = 'zk_live_' + 'L'.repeat(43)
  const agent: HeartbeatAgent = { keyHash: hashKey(key), contract: 'legacy', key, agentId: 'old-bot', configHash: 'sha256:abc', intervalSeconds: 30 }
  const stats = new AgentStats()
  stats.record(4, true)
  const changed: string[] = []
  const hb = new Heartbeats(upstream, spool, () => [agent], () => stats, (a) => changed.push(a.agentId), { apiName: 'acme', now: () => 1_000_000 })
  await hb.tick()
  t.equal(cp.seen.length, 1)
  const req = cp.seen[0] as Seen
  t.equal(req.method, 'POST')
  t.equal(req.url, '/api/acme/heartbeat', 'the legacy path of the API name, without /v1')
  t.equal(req.headers.authorization, `Bearer ${key}`)
  t.equal(req.headers['x-acme-key'], undefined, 'no v1 key header')
  t.strictSame(req.body, {
    status: 'healthy',
    metrics: { requests_processed: 1, errors_last_5min: 1, avg_latency_ms: 4 },
    config_hash: 'sha256:abc'
  }, 'no agent_id, no telemetry')
  t.strictSame(hb.status(), { sent: 1, failed: 0 })
  t.strictSame(changed, [], 'config_updated false asks for nothing')
})

t.test('Heartbeats, legacy agent without a config hash or stats -> body {status, metrics} with zero metrics and no config_hash key', async (t) => {
  const cp = await fakeControlPlane(t, () => ({ acknowledged: true, config_updated: false }))
  const spool = tempSpool(t)
  const upstream = new Upstream(cp.url)
  t.teardown(async () => { await upstream.close() })
  const agent: HeartbeatAgent = { keyHash: 'h', contract: 'legacy', key: 'zk_live_k', agentId: 'a', configHash: undefined, intervalSeconds: 30 }
  const hb = new Heartbeats(upstream, spool, () => [agent], () => undefined, () => {}, { apiName: 'service' })
  await hb.tick()
  t.equal(cp.seen[0]?.url, '/api/service/heartbeat')
  t.strictSame(cp.seen[0]?.body, { status: 'healthy', metrics: { requests_processed: 0, errors_last_5min: 0, avg_latency_ms: 0 } })
})

t.test('Heartbeats: an answer with config_updated: true (legacy) or config_changed: true (v1) -> onConfigChanged(agent); other answers -> not called', async (t) => {
  let answer: unknown = {}
  const cp = await fakeControlPlane(t, () => answer)
  const spool = tempSpool(t)
  const upstream = new Upstream(cp.url)
  t.teardown(async () => { await upstream.close() })
  const legacy: HeartbeatAgent = { keyHash: 'hl', contract: 'legacy', key: 'zk_live_k', agentId: 'legacy-bot', configHash: 'sha256:1', intervalSeconds: 1 }
  const v1: HeartbeatAgent = { keyHash: 'hv', contract: 'v1', key: 'sk_agent_k', agentId: 'v1-bot', configHash: 'sha256:1', intervalSeconds: 1 }
  let agents: HeartbeatAgent[] = []
  let now = 1_000_000
  const changed: HeartbeatAgent[] = []
  const hb = new Heartbeats(upstream, spool, () => agents, () => undefined, (a) => changed.push(a), { apiName: 'service', now: () => now })
  const tickWith = async (a: HeartbeatAgent, body: unknown): Promise<void> => {
    agents = [a]
    answer = body
    now += 1_000
    await hb.tick()
  }

  await tickWith(legacy, { acknowledged: true, config_updated: true })
  t.equal(changed.length, 1, 'legacy config_updated: true')
  t.equal(changed[0], legacy, 'called with the agent itself')
  await tickWith(v1, { acknowledged: true, config_changed: true })
  t.equal(changed.length, 2, 'v1 config_changed: true')
  t.equal(changed[1], v1)
  t.equal(cp.seen[1]?.url, '/api/service/v1/heartbeat', 'the v1 agent went to the v1 path')
  t.equal(cp.seen[1]?.headers['x-service-key'], 'sk_agent_k')

  await tickWith(legacy, { acknowledged: true, config_updated: false })
  await tickWith(legacy, { acknowledged: true, config_updated: 'true' })
  await tickWith(v1, { acknowledged: true, config_changed: false })
  await tickWith(v1, { acknowledged: true, config_changed: 1 })
  await tickWith(legacy, 'not an object')
  t.equal(changed.length, 2, 'false, or a truthy value that is not true, asks for nothing')
  t.equal(cp.seen.length, 7, 'every tick was sent')
  t.strictSame(hb.status(), { sent: 7, failed: 0 })
})

t.test('Heartbeats, legacy agent against the control plane: heartbeat taken; a stale config hash -> config_updated -> onConfigChanged', async (t) => {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  const spool = tempSpool(t)
  const upstream = new Upstream(address)
  t.teardown(async () => {
    await upstream.close()
    await ta.close()
  })
  const { agentId, key } = await ta.registerLegacy({ name: 'legacy beating' })
  const current = (await ta.legacy('GET', '/config', { key })).json() as { config_hash: string }
  const agent: HeartbeatAgent = { keyHash: hashKey(key), contract: 'legacy', key, agentId, configHash: current.config_hash, intervalSeconds: 30 }
  let now = 1_000_000
  const changed: string[] = []
  const hb = new Heartbeats(upstream, spool, () => [agent], () => undefined, (a) => changed.push(a.agentId), { apiName: 'service', now: () => now })
  await hb.tick()
  const stored = await ta.app.services.store.findAgentByKeyHash(hashKey(key))
  t.equal(stored?.health, 'healthy', 'the control plane took the legacy heartbeat')
  t.ok(stored?.last_heartbeat != null)
  t.strictSame(hb.status(), { sent: 1, failed: 0 }, 'accepted: the body fits the legacy schema')
  t.strictSame(changed, [], 'the hash was current')
  now += 30_000
  agent.configHash = 'sha256:' + '0'.repeat(64)
  await hb.tick()
  t.strictSame(changed, [agentId], 'a stale hash: config_updated asks for a refresh')
  t.strictSame(hb.status(), { sent: 2, failed: 0 })
})
