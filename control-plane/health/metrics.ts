/** Prometheus metrics of one control plane (its own registry, so several apps in one process stay apart). */
import { Counter, Gauge, Histogram, Registry } from 'prom-client'

export class Metrics {
  readonly registry = new Registry()
  readonly requests: Counter<'method' | 'route' | 'status'>
  readonly latency: Histogram<'method' | 'route'>
  readonly decisions: Counter<'contract' | 'result'>
  readonly eventsAccepted: Counter<'contract'>

  /** Label children by method, route and status: looked up once, then a Map hit per request. */
  private readonly children = new Map<string, { count: { inc: () => void }, time: { observe: (v: number) => void } }>()

  observe (method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`
    let c = this.children.get(key)
    if (c === undefined) {
      c = { count: this.requests.labels(method, route, String(status)), time: this.latency.labels(method, route) }
      this.children.set(key, c)
    }
    c.count.inc()
    c.time.observe(seconds)
  }

  constructor (queueDepth: () => number) {
    const registers = [this.registry]
    this.requests = new Counter({ name: 'agentgov_http_requests_total', help: 'HTTP requests by route and status', labelNames: ['method', 'route', 'status'], registers })
    this.latency = new Histogram({
      name: 'agentgov_http_request_duration_seconds',
      help: 'HTTP request latency by route',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers
    })
    this.decisions = new Counter({ name: 'agentgov_decisions_total', help: 'Policy decisions by result', labelNames: ['contract', 'result'], registers })
    this.eventsAccepted = new Counter({ name: 'agentgov_events_accepted_total', help: 'Events committed and acknowledged', labelNames: ['contract'], registers })
    new Gauge({
      name: 'agentgov_ingest_queue_depth',
      help: 'Rows waiting for the ingest writer',
      registers,
      collect () { this.set(queueDepth()) }
    })
  }
}
