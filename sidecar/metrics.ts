/**
 * The sidecar's Prometheus metrics (issue 4: decisions by result, spool depth, drops, upstream
 * errors, breaker state), in the text exposition format. Counters live where the work is done (the
 * spool, the flusher, the upstream client, the heartbeat sender); decisions are counted here.
 */
import type { Spool } from './spool.js'
import type { EventFlusher } from './event-flusher.js'
import type { Upstream, BreakerState } from './upstream.js'
import type { Heartbeats } from './heartbeat.js'

const BREAKER: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 }

export class SidecarMetrics {
  private readonly decisions = new Map<string, number>()

  constructor (private readonly parts: { spool: Spool, flusher: EventFlusher, upstream: Upstream, heartbeats: Heartbeats }) {}

  /** One decision: `allowed`, `blocked`, or `fail_open` / `fail_closed` (no config, no control plane). */
  decision (result: 'allowed' | 'blocked' | 'fail_open' | 'fail_closed'): void {
    this.decisions.set(result, (this.decisions.get(result) ?? 0) + 1)
  }

  render (): string {
    const { spool, flusher, upstream, heartbeats } = this.parts
    const s = spool.status()
    const f = flusher.status()
    const u = upstream.status()
    const h = heartbeats.status()
    const out: string[] = []
    const metric = (name: string, type: 'counter' | 'gauge', help: string, lines: string[]): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...lines)
    }
    metric('agentgov_sidecar_decisions_total', 'counter', 'Decisions made by the sidecar, by result',
      [...this.decisions].map(([result, n]) => `agentgov_sidecar_decisions_total{result="${result}"} ${n}`))
    metric('agentgov_sidecar_spool_depth', 'gauge', 'Events waiting in the spool', [`agentgov_sidecar_spool_depth ${s.depth}`])
    metric('agentgov_sidecar_spool_bytes', 'gauge', 'Bytes of events in the spool', [`agentgov_sidecar_spool_bytes ${s.bytes}`])
    metric('agentgov_sidecar_spool_dropped_total', 'counter', 'Events dropped because the spool was full', [`agentgov_sidecar_spool_dropped_total ${s.dropped}`])
    metric('agentgov_sidecar_events_sent_total', 'counter', 'Events the control plane accepted', [`agentgov_sidecar_events_sent_total ${f.sent}`])
    metric('agentgov_sidecar_events_rejected_total', 'counter', 'Events the control plane refused for good (dropped)', [`agentgov_sidecar_events_rejected_total ${f.rejected}`])
    metric('agentgov_sidecar_upstream_failures_total', 'counter', 'Control-plane calls that failed (network, timeout, 5xx)', [`agentgov_sidecar_upstream_failures_total ${u.failures}`])
    metric('agentgov_sidecar_upstream_short_circuited_total', 'counter', 'Calls refused at once by the open circuit breaker', [`agentgov_sidecar_upstream_short_circuited_total ${u.shortCircuited}`])
    metric('agentgov_sidecar_breaker_state', 'gauge', 'Circuit breaker: 0 closed, 1 half-open, 2 open', [`agentgov_sidecar_breaker_state ${BREAKER[u.state]}`])
    metric('agentgov_sidecar_heartbeats_total', 'counter', 'Heartbeats the sidecar sent for its agents, by outcome',
      [`agentgov_sidecar_heartbeats_total{outcome="sent"} ${h.sent}`, `agentgov_sidecar_heartbeats_total{outcome="failed"} ${h.failed}`])
    return out.join('\n') + '\n'
  }
}
