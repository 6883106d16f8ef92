import t from 'tap'
import { IngestWriter } from '../../../control-plane/events/ingest-writer.js'
import type { EvaluationRow, EventRow, Store } from '../../../control-plane/store/store.js'

function event (n: number): EventRow {
  return {
    id: `ev-${n}`,
    tenant_id: 't1',
    agent_uuid: 'a1',
    agent_id: 'agent-1',
    event_type: 'tool.called',
    category: 'telemetry',
    timestamp: '2026-11-22T00:00:00.000Z',
    user_id: null,
    payload: { n },
    evaluation_id: null,
    batch_id: 'b1',
    client_event_id: null,
    cost_usd: null,
    received_at: '2026-11-22T00:00:00.000Z'
  }
}

function evaluation (n: number): EvaluationRow {
  return {
    id: `eval-${n}`,
    tenant_id: 't1',
    agent_uuid: 'a1',
    allowed: true,
    reason: null,
    request: {},
    decision: {},
    created_at: '2026-11-22T00:00:00.000Z'
  }
}

interface Call { events: EventRow[], evaluations: EvaluationRow[] }

/** A Store where only writeBatch exists; each call can be held open, failed, or let through. */
class FakeStore {
  calls: Call[] = []
  /** When set, the next writeBatch waits for this promise. */
  gate: Promise<void> | null = null
  /** When set, writeBatch rejects with this error. */
  failWith: Error | null = null
  private onCall: Array<() => void> = []

  async writeBatch (events: EventRow[], evaluations: EvaluationRow[]): Promise<void> {
    this.calls.push({ events: [...events], evaluations: [...evaluations] })
    for (const f of this.onCall.splice(0)) f()
    if (this.gate !== null) await this.gate
    if (this.failWith !== null) throw this.failWith
  }

  /** Resolves once writeBatch has been called `n` times in all. */
  async called (n: number): Promise<void> {
    while (this.calls.length < n) await new Promise<void>((resolve) => this.onCall.push(resolve))
  }

  asStore (): Store {
    return this as unknown as Store
  }
}

function deferred (): { promise: Promise<void>, resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => { resolve = r })
  return { promise, resolve }
}

interface Tracked { settled: boolean, error: Error | undefined }
function track (p: Promise<void>): Tracked {
  const s: Tracked = { settled: false, error: undefined }
  p.then(() => { s.settled = true }, (e: Error) => { s.settled = true; s.error = e })
  return s
}

/** Lets pending promise callbacks and I/O callbacks run. */
async function ticks (n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

t.test('write: rows of several write() calls within the window are committed in ONE writeBatch, in order', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 20 })
  await Promise.all([
    w.write([event(1), event(2)]),
    w.write([event(3)], [evaluation(1)]),
    w.write([event(4)])
  ])
  t.equal(store.calls.length, 1, 'one transaction')
  t.same(store.calls[0]?.events.map((e) => e.id), ['ev-1', 'ev-2', 'ev-3', 'ev-4'])
  t.same(store.calls[0]?.evaluations.map((e) => e.id), ['eval-1'])
  t.same(w.status(), { queued: 0, committedEvents: 4, committedBatches: 1, failures: 0 })
})

t.test('write: no write resolves before its commit has finished', async (t) => {
  const store = new FakeStore()
  const gate = deferred()
  store.gate = gate.promise
  const w = new IngestWriter(store.asStore(), { windowMs: 1 })
  const a = track(w.write([event(1)]))
  const b = track(w.write([event(2)]))
  await store.called(1)
  await ticks()
  t.equal(a.settled, false, 'first write still pending while the commit runs')
  t.equal(b.settled, false, 'second write still pending while the commit runs')
  t.equal(w.status().committedBatches, 0, 'not counted as committed yet')
  gate.resolve()
  await ticks()
  t.same([a.settled, a.error, b.settled, b.error], [true, undefined, true, undefined], 'both resolve after the commit')
})

t.test('write: a write that arrives during a commit goes into the next batch and waits for that one', async (t) => {
  const store = new FakeStore()
  const gate = deferred()
  store.gate = gate.promise
  const w = new IngestWriter(store.asStore(), { windowMs: 1 })
  const first = track(w.write([event(1)]))
  await store.called(1)
  store.gate = null
  const second = track(w.write([event(2)]))
  await ticks()
  t.equal(store.calls.length, 1, 'no second commit while the first runs')
  t.equal(w.status().queued, 1, 'the late row waits in the queue')
  gate.resolve()
  await store.called(2)
  await ticks()
  t.same(store.calls.map((c) => c.events.map((e) => e.id)), [['ev-1'], ['ev-2']])
  t.same([first.settled, first.error, second.settled, second.error], [true, undefined, true, undefined])
  t.equal(w.status().committedBatches, 2)
})

t.test('write: a failing writeBatch rejects every waiter of that batch with its error; the next batch still works', async (t) => {
  const store = new FakeStore()
  const errors: Error[] = []
  const commits: EventRow[][] = []
  const w = new IngestWriter(store.asStore(), { windowMs: 1, onError: (e) => errors.push(e), onCommit: (ev) => commits.push(ev) })
  const boom = new Error('disk full')
  store.failWith = boom
  const results = await Promise.allSettled([w.write([event(1)]), w.write([event(2)]), w.write([], [evaluation(1)])])
  t.same(results.map((r) => r.status), ['rejected', 'rejected', 'rejected'], 'every waiter of the batch is rejected')
  for (const r of results) if (r.status === 'rejected') t.equal(r.reason, boom, 'with the store error itself')
  t.equal(store.calls.length, 1, 'it was one batch')
  t.same(errors, [boom], 'onError told once')
  t.same(commits, [], 'onCommit not called for a failed batch')
  t.same(w.status(), { queued: 0, committedEvents: 0, committedBatches: 0, failures: 1 })

  store.failWith = null
  await w.write([event(3)])
  t.same(store.calls[1]?.events.map((e) => e.id), ['ev-3'], 'the failed rows are not retried by the writer')
  t.same(commits.map((c) => c.map((e) => e.id)), [['ev-3']])
  t.same(w.status(), { queued: 0, committedEvents: 1, committedBatches: 1, failures: 1 })
})

t.test('writeLater: rows are committed without a waiter, together with waiting rows of the same window', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 5 })
  t.equal(w.writeLater([evaluation(1), evaluation(2)]), undefined, 'returns nothing to wait for')
  await w.write([event(1)])
  t.equal(store.calls.length, 1)
  t.same(store.calls[0]?.evaluations.map((e) => e.id), ['eval-1', 'eval-2'])
  t.same(store.calls[0]?.events.map((e) => e.id), ['ev-1'])
})

t.test('writeLater: alone, it is committed when the window closes', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 1 })
  w.writeLater([evaluation(1)])
  t.equal(store.calls.length, 0, 'not committed synchronously')
  await store.called(1)
  t.same(store.calls[0]?.evaluations.map((e) => e.id), ['eval-1'])
  await ticks()
  t.same(w.status(), { queued: 0, committedEvents: 0, committedBatches: 1, failures: 0 })
})

t.test('writeLater: a failed commit is reported to onError only (no unhandled rejection)', async (t) => {
  const store = new FakeStore()
  store.failWith = new Error('locked')
  const errors: string[] = []
  const w = new IngestWriter(store.asStore(), { windowMs: 1, onError: (e) => errors.push(e.message) })
  w.writeLater([evaluation(1)])
  await store.called(1)
  await ticks()
  t.same(errors, ['locked'])
  t.equal(w.status().failures, 1)
})

t.test('maxRows: reaching it commits at once, without waiting for the window', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 60_000, maxRows: 3 })
  const small = w.write([event(1)])
  t.equal(store.calls.length, 0, 'below maxRows nothing is committed yet')
  t.equal(w.status().queued, 1)
  const big = w.write([event(2)], [evaluation(1)])
  t.equal(store.calls.length, 1, 'the third row (events + evaluations) triggers the commit synchronously')
  t.same(store.calls[0]?.events.map((e) => e.id), ['ev-1', 'ev-2'])
  await Promise.all([small, big])
  t.equal(w.status().queued, 0)
  await w.stop()
})

t.test('maxRows: a writeLater that reaches it commits at once too', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 60_000, maxRows: 2 })
  w.writeLater([evaluation(1), evaluation(2)])
  t.equal(store.calls.length, 1)
  await w.stop()
})

t.test('maxRows: defaults to 5000 rows', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 60_000 })
  const rows = Array.from({ length: 4999 }, (_, i) => event(i))
  const p = w.write(rows)
  t.equal(store.calls.length, 0, '4999 rows wait for the window')
  const q = w.write([event(5000)])
  t.equal(store.calls.length, 1, 'the 5000th row commits at once')
  t.equal(store.calls[0]?.events.length, 5000)
  await Promise.all([p, q])
  await w.stop()
})

t.test('stop: commits what is queued, then write() rejects and writeLater() is ignored', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 60_000 })
  w.start()
  const pending = w.write([event(1)])
  w.writeLater([evaluation(1)])
  await w.stop()
  await pending
  t.equal(store.calls.length, 1, 'the queue was committed by stop()')
  t.same(store.calls[0]?.events.map((e) => e.id), ['ev-1'])
  t.same(store.calls[0]?.evaluations.map((e) => e.id), ['eval-1'])
  await t.rejects(w.write([event(2)]), { message: 'ingest writer is stopped' })
  w.writeLater([evaluation(2)])
  t.equal(w.status().queued, 0, 'rows offered after stop are not queued')
  await w.stop()
  t.equal(store.calls.length, 1, 'nothing more was committed')
})

t.test('stop: waits for a commit in progress before resolving', async (t) => {
  const store = new FakeStore()
  const gate = deferred()
  store.gate = gate.promise
  const w = new IngestWriter(store.asStore(), { windowMs: 1 })
  const write = track(w.write([event(1)]))
  await store.called(1)
  const stopped = track(w.stop())
  await ticks()
  t.equal(stopped.settled, false, 'stop() still waits')
  gate.resolve()
  await ticks()
  t.equal(stopped.settled, true)
  t.equal(write.settled, true)
  t.equal(write.error, undefined)
})

t.test('start: after stop(), start() takes rows again', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 1 })
  await w.stop()
  w.start()
  await w.write([event(1)])
  t.equal(store.calls.length, 1)
})

t.test('flush: an explicit flush commits now; with nothing queued it does not call the store', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 60_000 })
  await w.flush()
  t.equal(store.calls.length, 0, 'empty queue: no empty transaction')
  const p = w.write([event(1)])
  await w.flush()
  await p
  t.equal(store.calls.length, 1)
  await w.stop()
})

t.test('status: counts queued rows, committed events and batches, and failures', async (t) => {
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 60_000 })
  t.same(w.status(), { queued: 0, committedEvents: 0, committedBatches: 0, failures: 0 })
  const a = w.write([event(1), event(2)], [evaluation(1)])
  w.writeLater([evaluation(2)])
  t.equal(w.status().queued, 4, 'events and evaluations are both counted')
  await w.flush()
  await a
  t.same(w.status(), { queued: 0, committedEvents: 2, committedBatches: 1, failures: 0 }, 'evaluations are not counted as events')
  store.failWith = new Error('x')
  const b = w.write([event(3)])
  await w.flush()
  await t.rejects(b)
  t.same(w.status(), { queued: 0, committedEvents: 2, committedBatches: 1, failures: 1 })
  store.failWith = null
  await w.stop()
})

t.test('onCommit: told about exactly the committed events of each batch', async (t) => {
  const store = new FakeStore()
  const seen: string[][] = []
  const w = new IngestWriter(store.asStore(), { windowMs: 1, onCommit: (ev) => seen.push(ev.map((e) => e.id)) })
  await Promise.all([w.write([event(1)]), w.write([event(2)])])
  await w.write([event(3)])
  t.same(seen, [['ev-1', 'ev-2'], ['ev-3']])
})

t.test('onCommit: when it throws after a successful commit, the waiters still resolve (their rows are stored)', async (t) => {
  // BUG: the throw lands in the catch of flush(), which rejects every waiter and counts a failure
  // although writeBatch committed. A client then retries and, without client_event_id, stores twice.
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 1, onCommit: () => { throw new Error('ledger broke') } })
  const r = await Promise.allSettled([w.write([event(1)])])
  t.equal(r[0]?.status, 'fulfilled')
  t.equal(w.status().failures, 0)
})

t.test('write: a write with no rows resolves (nothing to commit) instead of staying pending', async (t) => {
  // BUG (latent; AgentService.events guards against it): write([], []) queues a waiter but flush()
  // returns early on an empty queue, so the promise only settles if some later write brings rows.
  const store = new FakeStore()
  const w = new IngestWriter(store.asStore(), { windowMs: 1 })
  const empty = track(w.write([]))
  await w.flush()
  await ticks()
  t.equal(empty.settled, true)
  await w.stop()
})
