/**
 * The event flusher (sidecar/event-flusher.ts) against a real control plane: spooled events of both
 * contracts are stored once (even when a batch is sent twice), wait while their key is unknown, are
 * kept and retried with backoff while the control plane is down, and are dropped and counted when the
 * control plane refuses them for good.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:net'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from '../control-plane/helpers.js'
import { hashKey } from '../../shared/keys.js'
import { Spool } from '../../sidecar/spool.js'
import { Upstream } from '../../sidecar/upstream.js'
import { EventFlusher } from '../../sidecar/event-flusher.js'

interface Setup {
  ta: TestApp
  spool: Spool
  upstream: Upstream
  keys: Map<string, string>
}

async function setup (t: Test, upstreamUrl?: string): Promise<Setup> {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-flush-'))
  const spool = new Spool(join(dir, 'spool.db'))
  const upstream = new Upstream(upstreamUrl ?? address, { requestTimeoutMs: 2_000, failureThreshold: 100 })
  t.teardown(async () => {
    await upstream.close()
    spool.close()
    await ta.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { ta, spool, upstream, keys: new Map() }
}

const v1Event = (n: number): Record<string, unknown> =>
  ({ type: 'tool.invoked', category: 'telemetry', timestamp: new Date().toISOString(), payload: { n } })
const legacyEvent = (n: number): Record<string, unknown> =>
  ({ type: 'tool.invoked', timestamp: new Date().toISOString(), data: { n } })

async function storedIds (ta: TestApp): Promise<string[]> {
  return (await ta.app.services.store.listEvents(DEFAULT_TENANT_ID, { limit: 1000 }))
    .filter((e) => e.client_event_id !== null)
    .map((e) => e.client_event_id as string)
    .sort()
}

t.test('v1 and legacy events are delivered with the agent\'s key, stored with their ids, and leave the spool', async (t) => {
  const { ta, spool, upstream, keys } = await setup(t)
  const v1 = await ta.registerV1({ agent_type: 'custom', agent_id: 'flush-v1' })
  const legacy = await ta.registerLegacy({ name: 'flush legacy' })
  keys.set(hashKey(v1.key), v1.key)
  keys.set(hashKey(legacy.key), legacy.key)
  spool.append(hashKey(v1.key), 'v1', v1.agentId, [v1Event(1), v1Event(2), { ...v1Event(3), id: 'mine-3' }])
  spool.append(hashKey(legacy.key), 'legacy', legacy.agentId, [legacyEvent(4)])
  const spooledIds = spool.agents().flatMap((a) => spool.eventsOf(a.keyHash, a.contract, 10)).map((e) => e.id).sort()
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h), { apiName: 'service', batchSize: 2 })
  t.equal(await flusher.flush(), 5_000, 'all sent: the next pass after the interval')
  t.strictSame(await storedIds(ta), spooledIds, 'every event stored, under the id the spool gave it')
  t.equal(spool.status().depth, 0)
  t.strictSame(flusher.status(), { sent: 4, rejected: 0, failures: 0, retryAt: null })
})

t.test('a batch sent twice (its 202 lost) is stored once', async (t) => {
  const { ta, spool, upstream, keys } = await setup(t)
  const a = await ta.registerV1({ agent_type: 'custom', agent_id: 'twice' })
  keys.set(hashKey(a.key), a.key)
  spool.append(hashKey(a.key), 'v1', a.agentId, [v1Event(1), v1Event(2)])
  const ack = spool.ack.bind(spool)
  let lost = true
  spool.ack = (seqs) => { if (lost) { lost = false; return 0 } return ack(seqs) }
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h), { apiName: 'service' })
  await flusher.flush()
  t.equal(spool.status().depth, 2, 'the acknowledgement was lost: still spooled')
  await flusher.flush()
  t.equal(spool.status().depth, 0)
  t.equal((await storedIds(ta)).length, 2, 'two events, not four')
})

t.test('events of an agent whose key is not known wait; the other agents\' events go', async (t) => {
  const { ta, spool, upstream, keys } = await setup(t)
  const a = await ta.registerV1({ agent_type: 'custom', agent_id: 'unknown-key' })
  const b = await ta.registerV1({ agent_type: 'custom', agent_id: 'known-key' })
  keys.set(hashKey(b.key), b.key)
  spool.append(hashKey(a.key), 'v1', a.agentId, [v1Event(1)])
  spool.append(hashKey(b.key), 'v1', b.agentId, [v1Event(2)])
  spool.append(hashKey(a.key), 'v1', a.agentId, [v1Event(3)])
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h), { apiName: 'service' })
  await flusher.flush()
  t.equal(spool.status().depth, 2, 'the unknown agent\'s two events wait')
  t.equal((await storedIds(ta)).length, 1)
  keys.set(hashKey(a.key), a.key)
  await flusher.flush()
  t.equal(spool.status().depth, 0, 'delivered once the key is known')
  t.equal((await storedIds(ta)).length, 3)
})

t.test('with the control plane down, events stay spooled and the retry delay grows with jitter, capped', async (t) => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  const { spool, upstream, keys } = await setup(t, `http://127.0.0.1:${port}`)
  keys.set('h', 'sk_agent_x')
  spool.append('h', 'v1', 'a', [v1Event(1)])
  const problems: string[] = []
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h), {
    apiName: 'service', baseBackoffMs: 100, maxBackoffMs: 1_000, random: () => 0.999, onProblem: (m) => problems.push(m)
  })
  const delays: number[] = []
  for (let i = 0; i < 6; i++) delays.push(await flusher.flush())
  t.strictSame(delays, [100, 200, 400, 800, 1000, 1000], 'doubling from the base, capped at the maximum')
  t.equal(spool.status().depth, 1, 'nothing lost')
  t.equal(flusher.status().failures, 6)
  t.ok(flusher.status().retryAt !== null)
  t.match(problems[0], /ECONNREFUSED/)
  const low = new EventFlusher(spool, upstream, (h) => keys.get(h), { apiName: 'service', baseBackoffMs: 100, random: () => 0 })
  t.equal(await low.flush(), 1, 'full jitter: as little as 1 ms')
})

t.test('a revoked key: the control plane\'s 401 drops the batch and counts it as rejected', async (t) => {
  const { ta, spool, upstream, keys } = await setup(t)
  const a = await ta.registerV1({ agent_type: 'custom', agent_id: 'revoked' })
  keys.set(hashKey(a.key), a.key)
  t.equal((await ta.v1('POST', '/deregister', { key: a.key, body: {} })).statusCode, 204)
  spool.append(hashKey(a.key), 'v1', a.agentId, [v1Event(1), v1Event(2)])
  const problems: string[] = []
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h), { apiName: 'service', onProblem: (m) => problems.push(m) })
  await flusher.flush()
  t.equal(spool.status().depth, 0, 'dropped, so they cannot block the spool')
  t.equal(flusher.status().rejected, 2)
  t.match(problems[0], /refused 2 events of agent revoked with 401/)
})

t.test('start sends spooled events on its own; nudge sends at once; stop waits for a pass under way', async (t) => {
  const { ta, spool, upstream, keys } = await setup(t)
  const a = await ta.registerV1({ agent_type: 'custom', agent_id: 'timed' })
  keys.set(hashKey(a.key), a.key)
  const flusher = new EventFlusher(spool, upstream, (h) => keys.get(h), { apiName: 'service', intervalMs: 60_000 })
  flusher.nudge()
  flusher.start()
  flusher.start()
  spool.append(hashKey(a.key), 'v1', a.agentId, [v1Event(1)])
  flusher.nudge()
  for (let i = 0; i < 100 && spool.status().depth > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(spool.status().depth, 0, 'sent long before the 60 s interval')
  await flusher.stop()
  spool.append(hashKey(a.key), 'v1', a.agentId, [v1Event(2)])
  flusher.nudge()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(spool.status().depth, 1, 'stopped: nothing more is sent')
  t.equal((await storedIds(ta)).length, 1)
})
