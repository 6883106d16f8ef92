/**
 * Sends spooled events to the control plane (design.md, "The sidecar's promises"): every
 * `intervalMs`, or sooner when `batchSize` events are waiting, batches of one agent's events go to
 * POST /v1/events (or the legacy /events) with that agent's key; an accepted batch (202) is deleted
 * from the spool. Events keep their ids across retries, and the control plane stores an id once, so
 * a batch sent twice (the 202 lost on the way back) is stored once.
 *
 * - A failure that may pass (network, timeout, 429, 5xx, the circuit breaker open) keeps the events
 *   and retries with exponential backoff and full jitter, up to `maxBackoffMs`.
 * - A refusal that will not pass (401, 403, 400, 413: a revoked key, events the control plane will
 *   never take) deletes the batch and counts the events as rejected, so one bad batch cannot block
 *   the spool forever.
 * - Events of an agent whose key this process does not hold (after a restart, until the agent calls
 *   again) wait in the spool; other agents' events are sent meanwhile.
 */
import type { Spool, SpoolBatch, SpooledEvent } from './spool.js'
import { UpstreamError, type Upstream } from './upstream.js'

export interface FlusherOptions {
  /** The API name segment of the control plane's paths and headers (`service`). */
  apiName: string
  batchSize: number
  intervalMs: number
  baseBackoffMs: number
  maxBackoffMs: number
  /** 0 <= x < 1; for tests. */
  random?: () => number
  /** Told about rejected batches and failures, for the log. */
  onProblem?: (message: string) => void
}

export const DEFAULT_FLUSHER_OPTIONS = {
  batchSize: 100,
  intervalMs: 5_000, // 5 s
  baseBackoffMs: 500,
  maxBackoffMs: 30_000 // 30 s
} as const

export interface FlusherStatus {
  sent: number
  rejected: number
  /** Consecutive failed attempts (0 when the last one went through). */
  failures: number
  /** When the next attempt is due after a failure (ms since the epoch), or null. */
  retryAt: number | null
}

/** Where the flusher finds an agent's key, by the key's hash (the sidecar holds keys in memory only). */
export type KeyLookup = (keyHash: string) => string | undefined

export class EventFlusher {
  private readonly opts: Required<Omit<FlusherOptions, 'onProblem'>> & Pick<FlusherOptions, 'onProblem'>
  private timer: NodeJS.Timeout | null = null
  private running: Promise<void> | null = null
  private sent = 0
  private rejected = 0
  private failures = 0
  private retryAt: number | null = null

  constructor (
    private readonly spool: Spool,
    private readonly upstream: Upstream,
    private readonly keyOf: KeyLookup,
    options: Partial<FlusherOptions> & Pick<FlusherOptions, 'apiName'>
  ) {
    this.opts = { ...DEFAULT_FLUSHER_OPTIONS, random: Math.random, ...options }
  }

  status (): FlusherStatus {
    return { sent: this.sent, rejected: this.rejected, failures: this.failures, retryAt: this.retryAt }
  }

  start (): void {
    if (this.timer !== null) return
    this.schedule(this.opts.intervalMs)
  }

  /** Asks for a flush soon (an append filled a batch). */
  nudge (): void {
    if (this.timer !== null && this.retryAt === null && this.running === null) this.schedule(0)
  }

  /** Stops the timer and waits for a flush under way; the spool keeps what was not sent. */
  async stop (): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    await this.running
  }

  private schedule (ms: number): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.running = this.flush().then((next) => {
        this.running = null
        if (this.timer !== null) this.schedule(next)
      })
    }, ms)
    this.timer.unref()
  }

  /**
   * One pass over the spool, agent by agent (the one with the oldest event first); resolves with the
   * delay before the next pass. A pass never sends the same event twice, even if its acknowledgement
   * is lost; the next pass sends it again, and the control plane stores it once.
   */
  async flush (): Promise<number> {
    for (const agent of this.spool.agents()) {
      const key = this.keyOf(agent.keyHash)
      if (key === undefined) continue // not deliverable until the agent calls again with its key
      let after = 0
      for (;;) {
        const events = this.spool.eventsOf(agent.keyHash, agent.contract, this.opts.batchSize, after)
        if (events.length === 0) break
        after = (events[events.length - 1] as SpooledEvent).seq
        if (await this.send({ ...agent, events }, key) === 'retry') {
          this.failures++
          const cap = Math.min(this.opts.maxBackoffMs, this.opts.baseBackoffMs * 2 ** Math.min(this.failures - 1, 30))
          const delay = Math.floor(this.opts.random() * cap) + 1
          this.retryAt = Date.now() + delay
          return delay
        }
        this.failures = 0
        this.retryAt = null
      }
    }
    return this.opts.intervalMs
  }

  private async send (batch: SpoolBatch, key: string): Promise<'done' | 'retry'> {
    const name = this.opts.apiName
    const events = batch.events.map((e) => e.event)
    const request = batch.contract === 'v1'
      ? { method: 'POST' as const, path: `/api/${name}/v1/events`, headers: { [`x-${name}-key`]: key }, body: { agent_id: batch.agentId, events } }
      : { method: 'POST' as const, path: `/api/${name}/events`, headers: { authorization: `Bearer ${key}` }, body: { events } }
    const seqs = batch.events.map((e) => e.seq)
    try {
      const res = await this.upstream.request(request)
      if (res.status === 202) {
        this.spool.ack(seqs)
        this.sent += seqs.length
        return 'done'
      }
      if (res.status === 429) return 'retry'
      this.spool.ack(seqs)
      this.rejected += seqs.length
      this.opts.onProblem?.(`control plane refused ${seqs.length} events of agent ${batch.agentId} with ${res.status}: ${res.text.slice(0, 300)}`)
      return 'done'
    } catch (err) {
      this.opts.onProblem?.(`sending events failed: ${err instanceof UpstreamError ? err.message : String(err)}`)
      return 'retry'
    }
  }
}
