/**
 * Heartbeats the sidecar sends for its agents (issue 4): every agent's `heartbeat_interval_seconds`,
 * a v1 heartbeat with the requests the sidecar served for it (count, errors in the last 5 minutes,
 * average latency), the hash of the config it enforces, and the spool's depth and drop count. An
 * answer with `config_changed: true` asks for a config refresh. An agent's own heartbeats are
 * forwarded by the route, not sent from here.
 */
import type { Spool } from './spool.js'
import type { Upstream } from './upstream.js'

/** Requests served for one agent: totals, and errors in one-minute buckets over the last 5 minutes. */
export class AgentStats {
  requests = 0
  private latencyTotalMs = 0
  private readonly errorBuckets = new Float64Array(5)
  private bucketMinute = -1

  constructor (private readonly now: () => number = Date.now) {}

  private roll (): number {
    const minute = Math.floor(this.now() / 60_000)
    if (this.bucketMinute === -1 || minute - this.bucketMinute >= 5) {
      this.errorBuckets.fill(0)
    } else {
      for (let m = this.bucketMinute + 1; m <= minute; m++) this.errorBuckets[m % 5] = 0
    }
    if (minute > this.bucketMinute) this.bucketMinute = minute
    return minute
  }

  record (latencyMs: number, error: boolean): void {
    const minute = this.roll()
    this.requests++
    this.latencyTotalMs += latencyMs
    if (error) this.errorBuckets[minute % 5] = (this.errorBuckets[minute % 5] as number) + 1
  }

  metrics (): { requests_processed: number, errors_last_5min: number, avg_latency_ms: number } {
    this.roll()
    let errors = 0
    for (const e of this.errorBuckets) errors += e
    const avg = this.requests === 0 ? 0 : this.latencyTotalMs / this.requests
    return { requests_processed: this.requests, errors_last_5min: errors, avg_latency_ms: Math.round(avg * 1000) / 1000 }
  }
}

/** What the heartbeat sender needs to know of one agent. */
export interface HeartbeatAgent {
  keyHash: string
  /** The contract of the key: a v1 key gets v1 heartbeats, a legacy key legacy ones. */
  contract: 'v1' | 'legacy'
  key: string
  agentId: string
  configHash: string | undefined
  intervalSeconds: number
}

export class Heartbeats {
  private timer: NodeJS.Timeout | null = null
  private readonly lastSent = new Map<string, number>()
  private sent = 0
  private failed = 0

  constructor (
    private readonly upstream: Upstream,
    private readonly spool: Spool,
    private readonly agents: () => HeartbeatAgent[],
    private readonly statsOf: (keyHash: string) => AgentStats | undefined,
    private readonly onConfigChanged: (agent: HeartbeatAgent) => void,
    private readonly opts: { apiName: string, tickMs?: number, now?: () => number }
  ) {}

  status (): { sent: number, failed: number } {
    return { sent: this.sent, failed: this.failed }
  }

  start (): void {
    if (this.timer !== null) return
    this.timer = setInterval(() => { void this.tick() }, this.opts.tickMs ?? 1_000)
    this.timer.unref()
  }

  stop (): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  /** Sends the heartbeats that are due; resolves when they are answered. */
  async tick (): Promise<void> {
    const now = (this.opts.now ?? Date.now)()
    const due = this.agents().filter((a) => now - (this.lastSent.get(a.keyHash) ?? 0) >= a.intervalSeconds * 1000)
    await Promise.all(due.map(async (a) => {
      this.lastSent.set(a.keyHash, now)
      const spool = this.spool.status()
      const body = {
        agent_id: a.agentId,
        status: 'healthy',
        metrics: this.statsOf(a.keyHash)?.metrics() ?? { requests_processed: 0, errors_last_5min: 0, avg_latency_ms: 0 },
        ...(a.configHash !== undefined ? { config_hash: a.configHash } : {}),
        telemetry: { sent_by: 'sidecar', spool_depth: spool.depth, spool_dropped: spool.dropped }
      }
      const name = this.opts.apiName
      const request = a.contract === 'v1'
        ? { method: 'POST' as const, path: `/api/${name}/v1/heartbeat`, headers: { [`x-${name}-key`]: a.key }, body }
        : { method: 'POST' as const, path: `/api/${name}/heartbeat`, headers: { authorization: `Bearer ${a.key}` }, body: { status: body.status, metrics: body.metrics, ...(a.configHash !== undefined ? { config_hash: a.configHash } : {}) } }
      try {
        const res = await this.upstream.request(request)
        if (res.status >= 200 && res.status < 300) this.sent++
        else this.failed++
        const answer = res.json as { config_changed?: unknown, config_updated?: unknown } | undefined
        if (answer?.config_changed === true || answer?.config_updated === true) this.onConfigChanged(a)
      } catch {
        this.failed++
      }
    }))
  }
}
