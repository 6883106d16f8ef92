/**
 * The sidecar's event spool (sidecar/spool.ts): durable appends, ids kept across retries, batches per
 * agent, acknowledgement, bounds that drop the oldest and count them, and reopening after a crash.
 */
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Spool, type SpoolBatch } from '../../sidecar/spool.js'

/** The events of the agent with the oldest spooled event (what a flush sends first). */
function first (spool: Spool, limit: number): SpoolBatch | undefined {
  const agent = spool.agents()[0]
  return agent === undefined ? undefined : { ...agent, events: spool.eventsOf(agent.keyHash, agent.contract, limit) }
}

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-spool-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const ev = (n: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ type: 'tool.invoked', category: 'telemetry', payload: { n }, ...extra })

t.test('append then eventsOf: the events come back oldest first, each with an id, its own kept', async (t) => {
  const spool = new Spool(join(tempDir(t), 'spool.db'))
  t.teardown(() => spool.close())
  t.strictSame(spool.append('h1', 'v1', 'bot', [ev(1), ev(2, { id: 'own-id' }), ev(3)]), { accepted: 3, dropped: 0 })
  const batch = first(spool, 10)
  t.ok(batch !== undefined)
  if (batch === undefined) return
  t.equal(batch.keyHash, 'h1')
  t.equal(batch.contract, 'v1')
  t.equal(batch.agentId, 'bot')
  t.strictSame(batch.events.map((e) => (e.event.payload as { n: number }).n), [1, 2, 3], 'in the order spooled')
  t.equal(batch.events[1]?.id, 'own-id', 'an event\'s own id is kept')
  t.match(batch.events[0]?.id, /^[0-9a-f-]{36}$/, 'others get a UUID')
  for (const e of batch.events) t.equal(e.event.id, e.id, 'the id is in the event too')
  t.strictSame(first(spool, 10)?.events.map((e) => e.id), batch.events.map((e) => e.id), 'read again (a retry): the same ids')
  t.strictSame(spool.status(), { depth: 3, bytes: spool.status().bytes, dropped: 0 })
  t.ok(spool.status().bytes > 0)
})

t.test('ack deletes what the control plane accepted, and only that; acking twice is harmless', async (t) => {
  const spool = new Spool(join(tempDir(t), 'spool.db'))
  t.teardown(() => spool.close())
  spool.append('h1', 'v1', 'bot', [ev(1), ev(2), ev(3)])
  const batch = first(spool, 2)
  t.equal(batch?.events.length, 2, 'limit respected')
  const seqs = batch?.events.map((e) => e.seq) ?? []
  t.equal(spool.ack(seqs), 2)
  t.equal(spool.ack(seqs), 0, 'already gone')
  t.equal(spool.ack([]), 0)
  t.strictSame(first(spool, 10)?.events.map((e) => (e.event.payload as { n: number }).n), [3])
  t.equal(spool.status().depth, 1)
  spool.ack(first(spool, 10)?.events.map((e) => e.seq) ?? [])
  t.equal(first(spool, 10), undefined, 'empty')
  t.strictSame(spool.status(), { depth: 0, bytes: 0, dropped: 0 })
})

t.test('agents come by their oldest event; events are per agent and contract, and can be read past a seq', async (t) => {
  const spool = new Spool(join(tempDir(t), 'spool.db'))
  t.teardown(() => spool.close())
  spool.append('h1', 'v1', 'a', [ev(1)])
  spool.append('h2', 'legacy', 'b', [ev(2)])
  spool.append('h1', 'v1', 'a', [ev(3)])
  spool.append('h1', 'legacy', 'a', [ev(4)])
  t.strictSame(spool.agents(), [
    { keyHash: 'h1', contract: 'v1', agentId: 'a' },
    { keyHash: 'h2', contract: 'legacy', agentId: 'b' },
    { keyHash: 'h1', contract: 'legacy', agentId: 'a' }
  ])
  const h1 = spool.eventsOf('h1', 'v1', 10)
  t.strictSame(h1.map((e) => (e.event.payload as { n: number }).n), [1, 3], 'all of h1/v1, nothing of other agents or contracts')
  t.strictSame(spool.eventsOf('h1', 'v1', 10, h1[0]?.seq).map((e) => (e.event.payload as { n: number }).n), [3], 'past the first')
  t.strictSame(spool.eventsOf('h1', 'v1', 1).length, 1, 'limit')
  t.strictSame(spool.eventsOf('nobody', 'v1', 10), [])
})

t.test('bounds: an append past maxEvents drops the oldest events (of any agent) and counts them', async (t) => {
  const spool = new Spool(join(tempDir(t), 'spool.db'), { maxEvents: 3, maxBytes: 1_000_000 })
  t.teardown(() => spool.close())
  spool.append('h1', 'v1', 'a', [ev(1), ev(2)])
  t.strictSame(spool.append('h2', 'v1', 'b', [ev(3), ev(4)]), { accepted: 2, dropped: 1 })
  t.strictSame(first(spool, 10)?.events.map((e) => (e.event.payload as { n: number }).n), [2], 'event 1 was the oldest')
  t.strictSame(spool.append('h2', 'v1', 'b', [ev(5), ev(6), ev(7), ev(8)]), { accepted: 4, dropped: 4 })
  t.strictSame(first(spool, 10)?.events.map((e) => (e.event.payload as { n: number }).n), [6, 7, 8], 'an append larger than the spool keeps its newest')
  t.equal(spool.status().depth, 3)
  t.equal(spool.status().dropped, 5)
})

t.test('bounds: maxBytes drops the oldest until the events fit', async (t) => {
  const one = Buffer.byteLength(JSON.stringify({ ...ev(1), id: '00000000-0000-4000-8000-000000000000' }))
  const spool = new Spool(join(tempDir(t), 'spool.db'), { maxEvents: 1000, maxBytes: one * 2 + 5 })
  t.teardown(() => spool.close())
  spool.append('h1', 'v1', 'a', [ev(1), ev(2)])
  t.equal(spool.status().dropped, 0, 'two fit')
  spool.append('h1', 'v1', 'a', [ev(3)])
  t.equal(spool.status().dropped, 1, 'the third pushes out the first')
  t.ok(spool.status().bytes <= one * 2 + 5)
  t.strictSame(first(spool, 10)?.events.map((e) => (e.event.payload as { n: number }).n), [2, 3])
})

t.test('reopening: spooled events, their ids and the drop count survive a close and a reopen', async (t) => {
  const path = join(tempDir(t), 'nested', 'spool.db')
  const a = new Spool(path, { maxEvents: 2, maxBytes: 1_000_000 })
  a.append('h1', 'v1', 'a', [ev(1), ev(2), ev(3)])
  const ids = first(a, 10)?.events.map((e) => e.id)
  a.close()
  a.close()
  const b = new Spool(path, { maxEvents: 2, maxBytes: 1_000_000 })
  t.teardown(() => b.close())
  t.strictSame(first(b, 10)?.events.map((e) => e.id), ids, 'same events, same ids')
  t.equal(b.status().depth, 2)
  t.equal(b.status().dropped, 1, 'the drop count is kept')
})

t.test('a process killed (SIGKILL) right after its appends returned has lost none of them', async (t) => {
  const path = join(tempDir(t), 'spool.db')
  // The compiled module (npm test builds first), as a production sidecar runs it.
  const spoolModule = fileURLToPath(new URL('../../dist/sidecar/spool.js', import.meta.url))
  const script = `
    import { Spool } from ${JSON.stringify(spoolModule)}
    const s = new Spool(${JSON.stringify(path)})
    for (let i = 0; i < 50; i++) s.append('h', 'v1', 'a', [{ type: 't', category: 'audit', payload: { i } }])
    process.kill(process.pid, 'SIGKILL')
  `
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  t.equal(r.signal, 'SIGKILL', `the writer died without closing the spool ${r.stderr}`)
  const spool = new Spool(path)
  t.teardown(() => spool.close())
  t.strictSame(first(spool, 100)?.events.map((e) => (e.event.payload as { i: number }).i), Array.from({ length: 50 }, (_, i) => i))
})

t.test('bad input: non-object events and empty or non-string ids are refused, and nothing is spooled', async (t) => {
  const spool = new Spool(join(tempDir(t), 'spool.db'))
  t.teardown(() => spool.close())
  t.throws(() => spool.append('h', 'v1', 'a', [ev(1), null as unknown as Record<string, unknown>]), /events\[1\] must be an object/)
  t.throws(() => spool.append('h', 'v1', 'a', [[] as unknown as Record<string, unknown>]), /events\[0\] must be an object/)
  t.throws(() => spool.append('h', 'v1', 'a', [ev(1, { id: '' })]), /events\[0\]\.id must be a non-empty string/)
  t.throws(() => spool.append('h', 'v1', 'a', [ev(1, { id: 7 })]), /events\[0\]\.id must be a non-empty string/)
  t.throws(() => spool.append('h', 'mqtt' as 'v1', 'a', [ev(1)]), /CHECK constraint/, 'an unknown contract fails the transaction')
  t.strictSame(spool.status(), { depth: 0, bytes: 0, dropped: 0 }, 'nothing spooled, totals still right after the failed transaction')
  t.strictSame(spool.append('h', 'v1', 'a', []), { accepted: 0, dropped: 0 }, 'an empty append is a no-op')
  t.throws(() => new Spool(join(tempDir(t), 'x.db'), { maxEvents: 0, maxBytes: 10 }), RangeError)
})

t.test('a file that is not a spool database is refused with SQLite\'s reason, and left as it was', async (t) => {
  const path = join(tempDir(t), 'spool.db')
  writeFileSync(path, 'this is not a database, it is a text file of some length '.repeat(100))
  t.throws(() => new Spool(path), /not a database/)
  t.match(readFileSync(path, 'utf8'), /^this is not a database/, 'the file is untouched')
})
