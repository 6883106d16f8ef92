/**
 * Sidecar benchmarks (`npm run bench -- sidecar`), each against a baseline or a goal of the same run:
 *  - POST /v1/evaluate answered by the sidecar (10 realistic policies) against bare fastify answering
 *    a constant body, autocannon with 50 connections, alternating rounds (goal: >= 85%);
 *  - the same route at a fixed 5,000 requests/s: p99 latency (goal: < 2 ms), and the sidecar's
 *    resident memory after all the load (goal: < 100 MB);
 *  - config propagation: 50 agents spread over 5 sidecar processes; a policy is written to the
 *    control plane's database and each agent asks its sidecar every 20 ms until the change is
 *    enforced (goal: p99 < 1 s).
 * Servers run in child processes, pinned to CPU 1 when the benchmarks are pinned.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ChildProcess } from 'node:child_process'
import { Pool, request } from 'undici'
import { BARE_SERVER, CP_BIN, applyPolicies, bootstrapTokenOf, load, registerAgent, startProcess } from './control-plane.js'
import { mixedPolicies, PROMPT_200 } from './fixtures.js'
import { median } from './harness.js'
import { SqliteStore } from '../../control-plane/store/sqlite/index.js'

const DURATION = Number(process.env.BENCH_SECONDS ?? 8)
const DEFAULT_TENANT = '00000000-0000-0000-0000-000000000001'
/** A tool the fixture's policies allow (`search_*`); the probe policy denies it, then allows it again. */
const PROBE_TOOL = 'search_probe'

/** Ten policies of the mixed fixture (rate limits, tools, models, budgets, a content filter), without ids. */
export function sidecarPolicies (): unknown[] {
  return mixedPolicies().slice(0, 10).map(({ id: _id, ...p }) => p)
}

function evalBody (agentId: string, tool = 'search_docs'): string {
  return JSON.stringify({
    agent_id: agentId,
    action: 'tool_call',
    user_id: 'u-1042',
    context: { tool, tool_input: { query: 'quarterly risks' }, model: 'gpt-4o-mini', tokens: 1200, prompt: PROMPT_200 }
  })
}

/**
 * Resident memory of a process in MB: now, at its peak, and now split into private (anonymous:
 * heaps, buffers) and file-backed pages (the node binary and native modules, shared with every
 * other node process).
 */
function memoryOf (pid: number): { rss: number, peak: number, anon: number, file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 }
}

async function evaluate (sidecarUrl: string, key: string, body: string): Promise<{ allowed: boolean, policies_evaluated: unknown[] }> {
  const res = await request(`${sidecarUrl}/api/service/v1/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': key }, body })
  if (res.statusCode !== 200) throw new Error(`evaluate: ${res.statusCode} ${await res.body.text()}`)
  return await res.body.json() as { allowed: boolean, policies_evaluated: unknown[] }
}

function percentile (sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] as number
}

/**
 * Open-loop load at a fixed rate, spread evenly: requests are due every 1/rate s and sent as they fall
 * due (from a setImmediate loop, not a timer: timers tick by whole milliseconds), over a pool of
 * `connections` keep-alive connections. autocannon's overallRate sends each connection's share in
 * the same tick, so its latencies measure its own bursts (bare fastify shows p99 over 20 ms at 5,000
 * req/s with 50 connections). Latency is from the send to the whole answer.
 */
async function pacedLatency (url: string, headers: Record<string, string>, body: string, rate: number, seconds: number, connections: number):
Promise<{ sent: number, errors: number, p50: number, p99: number, max: number }> {
  const target = new URL(url)
  const pool = new Pool(target.origin, { connections, pipelining: 1 })
  const latencies: number[] = []
  let errors = 0
  let sent = 0
  const total = Math.round(rate * seconds)
  const start = performance.now()
  const inFlight = new Set<Promise<void>>()
  const one = async (): Promise<void> => {
    const t0 = performance.now()
    try {
      const res = await pool.request({ path: target.pathname, method: 'POST', headers, body })
      await res.body.text()
      if (res.statusCode !== 200) errors++
      else latencies.push(performance.now() - t0)
    } catch {
      errors++
    }
  }
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const due = Math.min(total, Math.floor((performance.now() - start) * rate / 1000))
      while (sent < due) {
        sent++
        const p = one()
        inFlight.add(p)
        void p.finally(() => inFlight.delete(p))
      }
      if (sent < total) setImmediate(tick)
      else resolve()
    }
    tick()
  })
  await Promise.all(inFlight)
  await pool.close()
  latencies.sort((a, b) => a - b)
  return { sent, errors, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), max: latencies[latencies.length - 1] as number }
}

/** Evaluate throughput and latency of one sidecar, against bare fastify. */
export async function throughputLines (cpUrl: string, token: string, dir: string, children: ChildProcess[]): Promise<string[]> {
  const lines: string[] = []
  const bare = await startProcess([BARE_SERVER])
  children.push(bare.child)
  const sidecar = await startProcess([CP_BIN, 'sidecar', '--port', '0', '--control-plane-url', cpUrl, '--data-dir', join(dir, 'sidecar-0')])
  children.push(sidecar.child)
  const key = await registerAgent(sidecar.url, token, 'bench')
  const body = evalBody('bench')
  const first = await evaluate(sidecar.url, key, body)
  if (!first.allowed || first.policies_evaluated.length !== 10) throw new Error(`unexpected decision: ${JSON.stringify(first)}`)

  const bareOpts = { url: `${bare.url}/evaluate`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body, connections: 50 }
  const scOpts = { url: `${sidecar.url}/api/service/v1/evaluate`, method: 'POST' as const, headers: { 'content-type': 'application/json', 'x-service-key': key }, body, connections: 50 }
  await load({ ...bareOpts, duration: 3 })
  await load({ ...scOpts, duration: 3 })
  const rounds = 6
  const slice = Math.max(1, Math.round(DURATION / 4))
  const bareRates: number[] = []
  const scRates: number[] = []
  let errors = 0
  for (let i = 0; i < rounds; i++) {
    const b = await load({ ...bareOpts, duration: slice })
    const s = await load({ ...scOpts, duration: slice })
    bareRates.push(b.requests.average)
    scRates.push(s.requests.average)
    errors += s.errors + s.non2xx
  }
  const ratios = scRates.map((s, i) => s / (bareRates[i] as number))
  const ratio = median(ratios)
  lines.push(`sidecar evaluate (10 policies, 50 connections): ${median(scRates).toFixed(0)} req/s; bare fastify ${median(bareRates).toFixed(0)} req/s ` +
    `(medians of ${rounds} alternating rounds of ${slice} s; round ratios ${ratios.map((r) => `${(r * 100).toFixed(0)}%`).join(', ')})`)
  lines.push(`sidecar evaluate / bare fastify = ${(ratio * 100).toFixed(1)}% (goal >= 85%) ${ratio >= 0.85 ? 'OK' : 'BELOW GOAL'}; errors and non-2xx ${errors}`)

  const seconds = Math.max(5, DURATION)
  const bareLatency = await pacedLatency(bareOpts.url, bareOpts.headers, body, 5000, seconds, 50)
  const scLatency = await pacedLatency(scOpts.url, scOpts.headers, body, 5000, seconds, 50)
  const ms = (n: number): string => n.toFixed(2)
  lines.push(`evaluate at a fixed 5,000 req/s, evenly paced over 50 connections, ${seconds} s: sidecar p50 ${ms(scLatency.p50)} ms, p99 ${ms(scLatency.p99)} ms, ` +
    `max ${ms(scLatency.max)} ms; bare fastify p50 ${ms(bareLatency.p50)} ms, p99 ${ms(bareLatency.p99)} ms (goal: sidecar p99 < 2 ms) ${scLatency.p99 < 2 ? 'OK' : 'ABOVE GOAL'}; ` +
    `errors ${scLatency.errors}`)
  const mem = memoryOf(sidecar.child.pid as number)
  lines.push(`sidecar memory after the load: RSS ${mem.rss.toFixed(0)} MB (private ${mem.anon.toFixed(0)} MB, mapped files ${mem.file.toFixed(0)} MB), ` +
    `peak ${mem.peak.toFixed(0)} MB (goal < 100 MB) ${mem.peak < 100 ? 'OK' : 'ABOVE GOAL'}`)
  return lines
}

/** Time from a policy change in the database to its enforcement, over 50 agents on 5 sidecars. */
export async function propagationLines (cpUrl: string, token: string, dir: string, children: ChildProcess[]): Promise<string[]> {
  const sidecars: string[] = []
  for (let i = 1; i <= 5; i++) {
    const s = await startProcess([CP_BIN, 'sidecar', '--port', '0', '--control-plane-url', cpUrl, '--data-dir', join(dir, `sidecar-${i}`)])
    children.push(s.child)
    sidecars.push(s.url)
  }
  const agents: Array<{ url: string, key: string, body: string }> = []
  for (let i = 0; i < 50; i++) {
    const url = sidecars[i % sidecars.length] as string
    const agentId = `prop-${i}`
    const key = await registerAgent(url, token, agentId)
    const body = evalBody(agentId, PROBE_TOOL)
    agents.push({ url, key, body })
  }
  // Each agent asks once, so that its sidecar holds its config and its watch stream.
  for (const a of agents) {
    if (!(await evaluate(a.url, a.key, a.body)).allowed) throw new Error(`${PROBE_TOOL} should be allowed before the change`)
  }
  await new Promise((resolve) => setTimeout(resolve, 500))

  const store = new SqliteStore(join(dir, 'agentgov.db'))
  const samples: number[] = []
  const changes = 3
  try {
    for (let c = 0; c < changes; c++) {
      const deny = c % 2 === 0
      const t0 = performance.now()
      await store.upsertPolicies(DEFAULT_TENANT, [{
        name: 'propagation-probe',
        type: 'tool_permission',
        scope_type: 'ORG',
        scope_id: DEFAULT_TENANT,
        config: { denied_tools: deny ? [PROBE_TOOL] : ['never_used_tool'] },
        enforcement: 'enforce',
        priority: 0,
        is_active: true
      }])
      const times = await Promise.all(agents.map(async (a) => {
        for (;;) {
          const d = await evaluate(a.url, a.key, a.body)
          if (d.allowed !== deny) return performance.now() - t0
          if (performance.now() - t0 > 10_000) throw new Error('a policy change was not enforced within 10 s')
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }))
      samples.push(...times)
      await new Promise((resolve) => setTimeout(resolve, 300))
    }
  } finally {
    await store.close()
  }
  samples.sort((a, b) => a - b)
  const p99 = percentile(samples, 0.99)
  return [
    `config propagation, 50 agents on 5 sidecars, ${changes} policy changes written to the database (each agent asks every 20 ms): ` +
      `p50 ${percentile(samples, 0.5).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${(samples[samples.length - 1] as number).toFixed(0)} ms over ${samples.length} samples`,
    `config propagation p99 = ${p99.toFixed(0)} ms (goal < 1000 ms) ${p99 < 1000 ? 'OK' : 'ABOVE GOAL'}`
  ]
}

export async function run (): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-bench-sidecar-'))
  const children: ChildProcess[] = []
  try {
    const cp = await startProcess([CP_BIN, 'control-plane', '--port', '0', '--data-dir', dir],
      { SERVICE_RATE_LIMIT_RPS: '1000000', SERVICE_REGISTER_RATE_PER_MINUTE: '100000' })
    children.push(cp.child)
    applyPolicies(dir, sidecarPolicies())
    const token = bootstrapTokenOf(cp.out())
    return [
      ...await throughputLines(cp.url, token, dir, children),
      ...await propagationLines(cp.url, token, dir, children)
    ]
  } finally {
    for (const c of children) c.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}
