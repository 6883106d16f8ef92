/**
 * Marks agents `unhealthy` after 3 missed heartbeats (interface.md section 3): v1 agents at the
 * configured interval, legacy agents at the legacy 30 s default.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { Store } from '../store/store.js'

export const MISSED_HEARTBEATS = 3
export const LEGACY_HEARTBEAT_SECONDS = 30

export class HealthMonitor {
  private timer: NodeJS.Timeout | null = null
  private runs = 0
  private marked = 0

  constructor (
    private readonly store: Store,
    private readonly opts: { heartbeatIntervalSeconds: number, checkEveryMs?: number, log: FastifyBaseLogger }
  ) {}

  /** One pass: marks stale agents; resolves to how many were marked. */
  async check (now = Date.now()): Promise<number> {
    const v1Before = new Date(now - MISSED_HEARTBEATS * this.opts.heartbeatIntervalSeconds * 1000).toISOString()
    const legacyBefore = new Date(now - MISSED_HEARTBEATS * LEGACY_HEARTBEAT_SECONDS * 1000).toISOString()
    const n = await this.store.markStale('v1', v1Before) + await this.store.markStale('legacy', legacyBefore)
    this.runs++
    this.marked += n
    if (n > 0) this.opts.log.info({ agents: n }, 'agents marked unhealthy after missed heartbeats')
    return n
  }

  start (): void {
    const every = this.opts.checkEveryMs ?? Math.min(10_000, this.opts.heartbeatIntervalSeconds * 1000)
    this.timer = setInterval(() => {
      this.check().catch((err: unknown) => this.opts.log.error({ err }, 'health monitor pass failed'))
    }, every)
    this.timer.unref()
  }

  stop (): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }

  status (): { runs: number, marked: number } {
    return { runs: this.runs, marked: this.marked }
  }
}
