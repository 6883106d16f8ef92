/**
 * The sidecar's event spool (design.md, "The sidecar's promises"): events are written to disk, in one
 * small transaction per request, before the agent gets its 202; a flusher reads them back in batches,
 * sends them to the control plane and deletes what was accepted. better-sqlite3 in WAL mode with
 * synchronous=NORMAL: a committed append survives a crash of the sidecar process (only a power loss
 * can take the last few).
 *
 * - Every event gets an id when spooled (its own `id` if it has one), kept across retries, so the
 *   control plane, which stores each id of an agent once, never stores a retried event twice.
 * - Events are kept per agent, under the SHA-256 hash of the agent's key (never the key itself): the
 *   flusher needs the key to send them, and holds it in memory only.
 * - The spool is bounded by a count and a size. An append that overflows it drops the oldest events
 *   (of any agent) and counts them; the count survives restarts.
 */
import Database from 'better-sqlite3'
import { randomUUID } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'

export interface SpoolLimits {
  /** Events held at most; the oldest are dropped past it. */
  maxEvents: number
  /** Bytes of event JSON held at most; the oldest are dropped past it. */
  maxBytes: number
}

export const DEFAULT_SPOOL_LIMITS: SpoolLimits = {
  maxEvents: 100_000,
  maxBytes: 256 * 1024 * 1024 // 256 MiB of event JSON
}

/** Which REST contract an event came in by (and goes out by): they differ in shape and path. */
export type SpoolContract = 'v1' | 'legacy'

/** One spooled event, as the flusher reads it. */
export interface SpooledEvent {
  /** Position in the spool (increasing); `ack` takes these. */
  seq: number
  /** The event's id: its own, or the one the spool gave it. */
  id: string
  /** The event as the agent sent it, with `id` set. */
  event: Record<string, unknown>
}

/** The spooled events of one agent and contract, oldest first. */
export interface SpoolBatch {
  keyHash: string
  contract: SpoolContract
  agentId: string
  events: SpooledEvent[]
}

export interface AppendResult {
  accepted: number
  /** Older events dropped to make room (the spool was full). */
  dropped: number
}

export interface SpoolStatus {
  depth: number
  bytes: number
  /** Events dropped because the spool was full, since it was created. */
  dropped: number
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  key_hash TEXT NOT NULL,
  contract TEXT NOT NULL CHECK (contract IN ('v1', 'legacy')),
  agent_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  body TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  spooled_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_agent ON events (key_hash, contract, seq);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO counters (name, value) VALUES ('dropped', 0);
`

export class Spool {
  private readonly db: Database.Database
  private readonly insert: Database.Statement
  private readonly totals: Database.Statement
  private readonly oldest: Database.Statement
  private readonly deleteUpTo: Database.Statement
  private readonly addDropped: Database.Statement
  private readonly readDropped: Database.Statement
  private readonly batchAfter: Database.Statement
  private readonly agentList: Database.Statement
  private readonly deleteSeq: Database.Statement
  /** Depth and bytes, kept in memory (read once at open) so that status() costs no query. */
  private depth = 0
  private bytes = 0
  private readonly appendTx: (rows: Array<[string, string, string, string, string, number, number]>) => number
  private readonly ackTx: (seqs: readonly number[]) => number

  constructor (readonly path: string, private readonly limits: SpoolLimits = DEFAULT_SPOOL_LIMITS) {
    if (!(limits.maxEvents >= 1) || !(limits.maxBytes >= 1)) throw new RangeError('spool limits must be at least 1')
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
    this.db = new Database(path)
    try {
      this.db.pragma('journal_mode = WAL')
      this.db.pragma('synchronous = NORMAL')
      this.db.exec(SCHEMA)
    } catch (err) {
      this.db.close()
      throw err
    }
    this.insert = this.db.prepare('INSERT INTO events (key_hash, contract, agent_id, event_id, body, bytes, spooled_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    this.totals = this.db.prepare('SELECT COUNT(*) AS n, COALESCE(SUM(bytes), 0) AS b FROM events')
    this.oldest = this.db.prepare('SELECT seq, bytes FROM events ORDER BY seq')
    this.deleteUpTo = this.db.prepare('DELETE FROM events WHERE seq <= ?')
    this.addDropped = this.db.prepare("UPDATE counters SET value = value + ? WHERE name = 'dropped'")
    this.readDropped = this.db.prepare("SELECT value FROM counters WHERE name = 'dropped'")
    this.deleteSeq = this.db.prepare('DELETE FROM events WHERE seq = ? RETURNING bytes')
    this.batchAfter = this.db.prepare('SELECT seq, event_id, body FROM events WHERE key_hash = ? AND contract = ? AND seq > ? ORDER BY seq LIMIT ?')
    this.agentList = this.db.prepare(
      'SELECT key_hash, contract, MIN(agent_id) AS agent_id, MIN(seq) AS first FROM events GROUP BY key_hash, contract ORDER BY first')
    this.resync()
    this.appendTx = this.db.transaction((rows) => {
      for (const r of rows) this.insert.run(...r)
      this.depth += rows.length
      for (const r of rows) this.bytes += r[5]
      return this.trim()
    })
    this.ackTx = this.db.transaction((seqs) => {
      let removed = 0
      for (const seq of seqs) {
        const row = this.deleteSeq.get(seq) as { bytes: number } | undefined
        if (row === undefined) continue
        removed++
        this.depth--
        this.bytes -= row.bytes
      }
      return removed
    })
  }

  /** Reads depth and bytes from the database (at open, and after a transaction that failed). */
  private resync (): void {
    const t = this.totals.get() as { n: number, b: number }
    this.depth = t.n
    this.bytes = t.b
  }

  /** Runs a transaction; if it fails (rolled back), the in-memory totals are read again. */
  private guarded<T> (run: () => T): T {
    try {
      return run()
    } catch (err) {
      this.resync()
      throw err
    }
  }

  /** Drops the oldest events until the spool is within its limits; returns how many. Inside a transaction. */
  private trim (): number {
    let depth = this.depth
    let bytes = this.bytes
    if (depth <= this.limits.maxEvents && bytes <= this.limits.maxBytes) return 0
    let lastSeq = -1
    // Find the newest event to drop (the iterator is closed before the delete runs).
    for (const row of this.oldest.iterate() as IterableIterator<{ seq: number, bytes: number }>) {
      if (depth <= this.limits.maxEvents && bytes <= this.limits.maxBytes) break
      depth--
      bytes -= row.bytes
      lastSeq = row.seq
    }
    const dropped = this.depth - depth
    this.deleteUpTo.run(lastSeq)
    this.depth = depth
    this.bytes = bytes
    this.addDropped.run(dropped)
    return dropped
  }

  /**
   * Spools the events of one request, all or none, and returns once they are committed. Each event
   * must be a JSON object; an `id` it carries must be a non-empty string and is kept.
   */
  append (keyHash: string, contract: SpoolContract, agentId: string, events: ReadonlyArray<Record<string, unknown>>): AppendResult {
    if (events.length === 0) return { accepted: 0, dropped: 0 }
    const now = Date.now()
    const rows = events.map((e, i): [string, string, string, string, string, number, number] => {
      if (e === null || typeof e !== 'object' || Array.isArray(e)) throw new TypeError(`events[${i}] must be an object`)
      const own = e.id
      if (own !== undefined && (typeof own !== 'string' || own === '')) throw new TypeError(`events[${i}].id must be a non-empty string`)
      const id = own ?? randomUUID()
      const body = JSON.stringify({ ...e, id })
      return [keyHash, contract, agentId, id, body, Buffer.byteLength(body), now]
    })
    const dropped = this.guarded(() => this.appendTx(rows))
    return { accepted: rows.length, dropped }
  }

  /** The agents (key hash and contract) with spooled events, the one with the oldest event first. */
  agents (): Array<{ keyHash: string, contract: SpoolContract, agentId: string }> {
    return (this.agentList.all() as Array<{ key_hash: string, contract: SpoolContract, agent_id: string }>)
      .map((r) => ({ keyHash: r.key_hash, contract: r.contract, agentId: r.agent_id }))
  }

  /** Up to `limit` events of one agent and contract after `afterSeq`, oldest first. */
  eventsOf (keyHash: string, contract: SpoolContract, limit: number, afterSeq = 0): SpooledEvent[] {
    const rows = this.batchAfter.all(keyHash, contract, afterSeq, limit) as Array<{ seq: number, event_id: string, body: string }>
    return rows.map((r) => ({ seq: r.seq, id: r.event_id, event: JSON.parse(r.body) as Record<string, unknown> }))
  }

  /** Deletes events the control plane accepted; returns how many were still spooled. */
  ack (seqs: readonly number[]): number {
    return seqs.length === 0 ? 0 : this.guarded(() => this.ackTx(seqs))
  }

  status (): SpoolStatus {
    return { depth: this.depth, bytes: this.bytes, dropped: (this.readDropped.get() as { value: number }).value }
  }

  close (): void {
    if (this.db.open) this.db.close()
  }
}
