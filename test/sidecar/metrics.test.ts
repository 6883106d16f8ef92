/** The sidecar's /metrics text (sidecar/metrics.ts): every series, in the exposition format. */
import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Spool } from '../../sidecar/spool.js'
import { Upstream } from '../../sidecar/upstream.js'
import { EventFlusher } from '../../sidecar/event-flusher.js'
import { Heartbeats } from '../../sidecar/heartbeat.js'
import { SidecarMetrics } from '../../sidecar/metrics.js'

t.test('render: decisions by result, spool, events, upstream, breaker and heartbeats, each with HELP and TYPE', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-metrics-'))
  const spool = new Spool(join(dir, 'spool.db'), { maxEvents: 1, maxBytes: 1_000_000 })
  const upstream = new Upstream('http://127.0.0.1:9')
  t.teardown(async () => { await upstream.close(); spool.close(); rmSync(dir, { recursive: true, force: true }) })
  const flusher = new EventFlusher(spool, upstream, () => undefined, { apiName: 'service' })
  const heartbeats = new Heartbeats(upstream, spool, () => [], () => undefined, () => {}, { apiName: 'service' })
  const m = new SidecarMetrics({ spool, flusher, upstream, heartbeats })
  m.decision('allowed')
  m.decision('allowed')
  m.decision('blocked')
  m.decision('fail_open')
  spool.append('h', 'v1', 'a', [{ n: 1 }, { n: 2 }])
  const text = m.render()
  for (const line of [
    'agentgov_sidecar_decisions_total{result="allowed"} 2',
    'agentgov_sidecar_decisions_total{result="blocked"} 1',
    'agentgov_sidecar_decisions_total{result="fail_open"} 1',
    'agentgov_sidecar_spool_depth 1',
    'agentgov_sidecar_spool_dropped_total 1',
    'agentgov_sidecar_events_sent_total 0',
    'agentgov_sidecar_events_rejected_total 0',
    'agentgov_sidecar_upstream_failures_total 0',
    'agentgov_sidecar_upstream_short_circuited_total 0',
    'agentgov_sidecar_breaker_state 0',
    'agentgov_sidecar_heartbeats_total{outcome="sent"} 0'
  ]) t.ok(text.split('\n').includes(line), line)
  t.match(text, /^# HELP agentgov_sidecar_spool_bytes .+\n# TYPE agentgov_sidecar_spool_bytes gauge\nagentgov_sidecar_spool_bytes \d+$/m)
  t.ok(text.endsWith('\n'))
})
