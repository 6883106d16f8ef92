/**
 * Control-plane HTTP benchmarks (autocannon, 10 connections), each against a baseline measured in the
 * same run:
 *  - POST /v1/evaluate with a realistic policy set vs bare fastify answering a constant body (goal: >= 70%);
 *  - POST /v1/events, batches of 100, vs the same rows inserted straight into better-sqlite3 (WAL,
 *    synchronous=NORMAL, 100 rows a transaction) (goal: >= 60%).
 * Servers run in child processes so that the load generator does not share their event loop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import Database from 'better-sqlite3'
import { MIGRATIONS } from '../../control-plane/store/sqlite/migrations/index.js'
import { median } from './harness.js'

const BIN = fileURLToPath(new URL('../../../bin/agentgov.js', import.meta.url))
const BARE = fileURLToPath(new URL('./bare-server.js', import.meta.url))
const DURATION = Number(process.env.BENCH_SECONDS ?? 8)
const DEFAULT_TENANT = '00000000-0000-0000-0000-000000000001'

/** Starts a server process (pinned to CPU 1 when the benchmarks are pinned); resolves once it listens. */
export async function startProcess (args: string[], env: Record<string, string> = {}, wrapper: string[] = []): Promise<{ child: ChildProcess, url: string, out: () => string }> {
  const pinned = process.env.AGENTGOV_BENCH_PINNED === '1'
  const command = [...(pinned ? ['taskset', '-c', '1'] : []), ...wrapper, process.execPath, ...args]
  const child = spawn(command[0] as string, command.slice(1), { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  let text = ''
  return await new Promise((resolve, reject) => {
    child.stdout?.on('data', (c: Buffer) => {
      text += c.toString()
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1]
      if (url !== undefined && (!args.includes('control-plane') || /bootstrap token/.test(text))) resolve({ child, url, out: () => text })
    })
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${text}`)))
  })
}

export async function load (opts: autocannon.Options): Promise<autocannon.Result> {
  return await autocannon({ connections: 10, duration: DURATION, ...opts })
}

function rawInsertRate (dir: string, seconds: number): number {
  const db = new Database(join(dir, 'raw.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  for (const m of MIGRATIONS) db.exec(m)
  const ins = db.prepare(`INSERT INTO events (id, tenant_id, agent_uuid, agent_id, event_type, category, timestamp, user_id,
    payload, evaluation_id, batch_id, client_event_id, cost_usd, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const tx = db.transaction((n: number) => {
    const now = new Date().toISOString()
    for (let i = 0; i < n; i++) {
      ins.run(randomUUID(), DEFAULT_TENANT, 'agent-uuid', 'bench', 'tool.invoked', 'telemetry', now, 'u1',
        JSON.stringify({ tool: 'search', query: 'what is the weather', result_count: i }), null, 'batch_x', null, null, now)
    }
  })
  let rows = 0
  const start = performance.now()
  while (performance.now() - start < seconds * 1000) {
    tx(100)
    rows += 100
  }
  const rate = rows / ((performance.now() - start) / 1000)
  db.close()
  return rate
}

export const BARE_SERVER = BARE
export const CP_BIN = BIN

export const POLICIES = [
  { name: 'tools', type: 'tool_permission', config: { allowed_tools: ['search', 'calc', 'fs.*'], denied_tools: ['fs.delete'] } },
  { name: 'models', type: 'model_restriction', config: { allowed_models: ['gpt-4o*', 'claude-*'], max_tokens: 8000 } },
  { name: 'pii', type: 'content_filter', config: { pii: ['email', 'credit_card'], deny_patterns: ['(?i)ignore (all|previous) instructions'] } },
  { name: 'network', type: 'network_policy', config: { allowed_domains: ['example.com', '*.example.com'] } },
  { name: 'hours', type: 'custom', config: { deny_if: { '==': [{ var: 'context.environment' }, 'frozen'] }, message: 'frozen' } }
]

/** Applies policies (upserted by name) to the default tenant through the admin CLI. */
export function applyPolicies (dir: string, policies: unknown[]): void {
  const file = join(dir, `policies-${randomUUID()}.json`)
  writeFileSync(file, JSON.stringify(policies))
  const applied = spawnSync(process.execPath, [BIN, 'admin', 'policy', 'apply', '--tenant', DEFAULT_TENANT, '--file', file, '--data-dir', dir], { encoding: 'utf8' })
  if (applied.status !== 0) throw new Error(`policy apply failed: ${applied.stderr}`)
}

/** The default tenant's bootstrap token, from a control plane's start-up output. */
export function bootstrapTokenOf (cpOut: string): string {
  return /bootstrap token: (bt_\S+)/.exec(cpOut)?.[1] as string
}

/** Registers a v1 agent at `baseUrl` (a control plane or a sidecar); returns its key. */
export async function registerAgent (baseUrl: string, token: string, agentId: string): Promise<string> {
  const reg = await fetch(`${baseUrl}/api/service/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-bootstrap': token },
    body: JSON.stringify({ agent_type: 'custom', agent_id: agentId })
  })
  if (reg.status !== 201) throw new Error(`register ${agentId}: ${reg.status} ${await reg.text()}`)
  return (await reg.json() as { api_key: string }).api_key
}

/**
 * Applies POLICIES through the admin CLI, registers the agent `bench`, and checks that a decision
 * evaluates every policy. Returns the agent's key and the /evaluate body the benchmarks send.
 */
export async function benchAgent (cpUrl: string, cpOut: string, dir: string): Promise<{ key: string, evalBody: string }> {
  applyPolicies(dir, POLICIES)
  const key = await registerAgent(cpUrl, bootstrapTokenOf(cpOut), 'bench')
  await new Promise((resolve) => setTimeout(resolve, 500)) // let the control plane see the policies
  const evalBody = JSON.stringify({
    agent_id: 'bench', action: 'tool_call', user_id: 'u1',
    context: { tool: 'search', tool_input: { query: 'weather in Paris tomorrow', url: 'https://api.example.com/q' }, model: 'gpt-4o' }
  })
  const check = await fetch(`${cpUrl}/api/service/v1/evaluate`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': key }, body: evalBody })
  const decision = await check.json() as { allowed: boolean, policies_evaluated: unknown[] }
  if (!decision.allowed || decision.policies_evaluated.length !== POLICIES.length) throw new Error(`unexpected decision: ${JSON.stringify(decision)}`)
  return { key, evalBody }
}

export async function run (): Promise<string[]> {
  const lines: string[] = []
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-bench-'))
  const children: ChildProcess[] = []
  try {
    const bare = await startProcess([BARE])
    children.push(bare.child)
    const cp = await startProcess([BIN, 'control-plane', '--port', '0', '--data-dir', dir], { SERVICE_RATE_LIMIT_RPS: '1000000' })
    children.push(cp.child)
    const { key, evalBody } = await benchAgent(cp.url, cp.out(), dir)
    const headers = { 'content-type': 'application/json', 'x-service-key': key }

    // Warm both servers up, then measure in alternating rounds, so that a slower or faster spell of
    // this shared machine weighs on both sides alike.
    const bareOpts = { url: `${bare.url}/evaluate`, method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: evalBody }
    const cpOpts = { url: `${cp.url}/api/service/v1/evaluate`, method: 'POST' as const, headers, body: evalBody }
    await load({ ...bareOpts, duration: 3 })
    await load({ ...cpOpts, duration: 3 })
    const rounds = 6
    const slice = Math.max(1, Math.round(DURATION / 4))
    const bareRates: number[] = []
    const cpRates: number[] = []
    const sum = { bareP99: 0, cpP99: 0, errors: 0, non2xx: 0 }
    for (let i = 0; i < rounds; i++) {
      const b = await load({ ...bareOpts, duration: slice })
      const c = await load({ ...cpOpts, duration: slice })
      bareRates.push(b.requests.average)
      cpRates.push(c.requests.average)
      sum.bareP99 = Math.max(sum.bareP99, b.latency.p99)
      sum.cpP99 = Math.max(sum.cpP99, c.latency.p99)
      sum.errors += c.errors
      sum.non2xx += c.non2xx
    }
    // The median of the per-round ratios: a spell of load from other tenants of this machine moves
    // one round, not the figure.
    const roundRatios = cpRates.map((c, i) => c / (bareRates[i] as number))
    const evalRatio = median(roundRatios)
    lines.push(`evaluate (${POLICIES.length} policies): ${median(cpRates).toFixed(0)} req/s, p99 <= ${sum.cpP99} ms; bare fastify ${median(bareRates).toFixed(0)} req/s, p99 <= ${sum.bareP99} ms ` +
      `(medians of ${rounds} alternating rounds of ${slice} s; round ratios ${roundRatios.map((r) => `${(r * 100).toFixed(0)}%`).join(', ')})`)
    lines.push(`evaluate / bare fastify = ${(evalRatio * 100).toFixed(1)}% (goal >= 70%) ${evalRatio >= 0.7 ? 'OK' : 'BELOW GOAL'}; errors ${sum.errors}, non-2xx ${sum.non2xx}`)

    const events = Array.from({ length: 100 }, (_, i) => ({
      type: 'tool.invoked', category: 'telemetry', timestamp: new Date().toISOString(), user_id: 'u1',
      payload: { tool: 'search', query: 'what is the weather', result_count: i }
    }))
    const eventsBody = JSON.stringify({ agent_id: 'bench', events })
    const raw = rawInsertRate(dir, DURATION)
    const http = await load({ url: `${cp.url}/api/service/v1/events`, method: 'POST', headers, body: eventsBody })
    const httpRows = http.requests.average * 100
    const ingestRatio = httpRows / raw
    lines.push(`events over HTTP (batches of 100): ${httpRows.toFixed(0)} rows/s, p99 ${http.latency.p99} ms; raw better-sqlite3 (100 rows a transaction): ${raw.toFixed(0)} rows/s`)
    lines.push(`events / raw inserts = ${(ingestRatio * 100).toFixed(1)}% (goal >= 60%) ${ingestRatio >= 0.6 ? 'OK' : 'BELOW GOAL'}; errors ${http.errors}, non-2xx ${http.non2xx}`)
  } finally {
    for (const c of children) c.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
  return lines
}
