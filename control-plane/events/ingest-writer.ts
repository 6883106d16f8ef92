/**
 * Group commit for events (design.md, "The hot path"): requests enqueue their rows and wait; one writer
 * commits everything that arrived within `windowMs` in a single transaction and only then resolves
 * every waiting request. An acknowledged event is committed: a crash after the 202 loses nothing.
 */
import type { EvaluationRow, EventRow, Store } from '../store/store.js'

interface Waiter {
  resolve: () => void
  reject: (err: Error) => void
}

export interface IngestStatus {
  queued: number
  committedEvents: number
  committedBatches: number
  failures: number
}

export class IngestWriter {
  private events: EventRow[] = []
  private evaluations: EvaluationRow[] = []
  private waiters: Waiter[] = []
  private timer: NodeJS.Timeout | null = null
  private flushing: Promise<void> | null = null
  private stopped = false
  private readonly counts = { committedEvents: 0, committedBatches: 0, failures: 0 }

  constructor (
    private readonly store: Store,
    private readonly opts: {
      windowMs: number
      /** Commit at once when this many rows wait. */
      maxRows?: number
      /** Told about rows once they are committed (budget spend). */
      onCommit?: (events: EventRow[]) => void
      onError?: (err: Error) => void
    }
  ) {}

  /** Queues rows; resolves once they are committed, rejects when the commit failed. */
  write (events: EventRow[], evaluations: EvaluationRow[] = []): Promise<void> {
    if (this.stopped) return Promise.reject(new Error('ingest writer is stopped'))
    if (events.length === 0 && evaluations.length === 0) return Promise.resolve()
    for (const e of events) this.events.push(e)
    for (const e of evaluations) this.evaluations.push(e)
    const done = new Promise<void>((resolve, reject) => { this.waiters.push({ resolve, reject }) })
    this.schedule()
    return done
  }

  /** Queues rows nobody waits for (evaluation records); a failure is only reported to onError. */
  writeLater (evaluations: EvaluationRow[]): void {
    if (this.stopped) return
    for (const e of evaluations) this.evaluations.push(e)
    this.schedule()
  }

  private schedule (): void {
    if (this.events.length + this.evaluations.length >= (this.opts.maxRows ?? 5000)) {
      void this.flush()
      return
    }
    if (this.timer === null && this.flushing === null) {
      this.timer = setTimeout(() => { void this.flush() }, this.opts.windowMs)
    }
  }

  /** Commits what is queued (waiting for a commit in progress first). */
  async flush (): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer)
      this.timer = null
    }
    if (this.flushing !== null) {
      await this.flushing
      if (this.events.length + this.evaluations.length > 0) return this.flush()
      return
    }
    if (this.events.length + this.evaluations.length === 0) return
    const events = this.events
    const evaluations = this.evaluations
    const waiters = this.waiters
    this.events = []
    this.evaluations = []
    this.waiters = []
    this.flushing = (async () => {
      try {
        await this.store.writeBatch(events, evaluations)
      } catch (err) {
        this.counts.failures++
        this.opts.onError?.(err as Error)
        for (const w of waiters) w.reject(err as Error)
        return
      }
      // Committed: acknowledge first, whatever the listener does.
      this.counts.committedEvents += events.length
      this.counts.committedBatches++
      for (const w of waiters) w.resolve()
      try {
        this.opts.onCommit?.(events)
      } catch (err) {
        this.opts.onError?.(err as Error)
      }
    })()
    try {
      await this.flushing
    } finally {
      this.flushing = null
    }
    if (this.events.length + this.evaluations.length > 0) this.schedule()
  }

  start (): void {
    this.stopped = false
  }

  /** Stops taking rows and commits what is queued. */
  async stop (): Promise<void> {
    this.stopped = true
    await this.flush()
  }

  status (): IngestStatus {
    return { queued: this.events.length + this.evaluations.length, ...this.counts }
  }
}
