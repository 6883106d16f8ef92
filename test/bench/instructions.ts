/**
 * Instructions per request of POST /v1/evaluate against bare fastify, counted by valgrind's callgrind
 * (`npm run bench -- instructions`). Unlike requests per second, an instruction count does not move
 * with the load other tenants put on this shared machine, so it shows what a change to the request
 * path costs or saves, to the instruction. Each server runs under callgrind with instrumentation
 * off; after a warm-up it is switched on for a fixed number of sequential requests, then off again,
 * and the counts are read from callgrind's dumps (one per thread).
 * Caveat: under valgrind, threads run one at a time and about 50x slower, so the JIT tiers code up
 * later than in a real run; the figures are a deterministic signal to compare changes by, not the
 * real cost. Needs `valgrind` (Debian package valgrind); without it the benchmark is skipped.
 */
import { spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BARE_SERVER, CP_BIN, benchAgent, startProcess } from './control-plane.js'

const WARMUP = Number(process.env.BENCH_WARMUP ?? 1500)
const MEASURED = Number(process.env.BENCH_REQUESTS ?? 2000)

interface Counted {
  /** The main thread's instructions per request (where requests are served). */
  main: number
  /** Every thread's, the JIT compiler's and the GC's helpers included. */
  all: number
}

const CLIENT = fileURLToPath(new URL('./sequential-client.js', import.meta.url))

/**
 * Sends `amount` sequential requests from a client process of its own: the counts depend on how the
 * requests are paced (a server that idles between requests runs idle-time work), so the pacing must
 * not depend on this process.
 */
function requests (url: string, headers: Record<string, string>, body: string, amount: number): void {
  const r = spawnSync(process.execPath, [CLIENT, url, String(amount)], { input: JSON.stringify({ headers, body }), encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`client: ${r.stderr}`)
}

function callgrindControl (pid: number, ...args: string[]): void {
  const r = spawnSync('callgrind_control', [...args, String(pid)], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')}: ${r.stderr}`)
}

/** The instructions in the dumps callgrind wrote under `prefix` (with --separate-threads, thread 1 is `-01`). */
function countedInstructions (dir: string, prefix: string): { main: number, all: number } {
  const counted = { main: 0, all: 0 }
  for (const f of readdirSync(dir)) {
    if (!f.startsWith(prefix)) continue
    const m = /^totals: (\d+)/m.exec(readFileSync(join(dir, f), 'utf8'))
    if (m === null) continue
    counted.all += Number(m[1])
    if (f.endsWith('-01')) counted.main += Number(m[1])
  }
  return counted
}

/** Instructions per request of a path on a server started (under callgrind) by `args`. */
async function measure (dir: string, name: string, args: string[], env: Record<string, string>,
  prepare: () => Promise<{ path: string, headers: Record<string, string>, body: string }>): Promise<Counted> {
  const out = join(dir, `callgrind.${name}`)
  const server = await startProcess(args, env, ['valgrind', '-q', '--tool=callgrind', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${out}`])
  const child: ChildProcess = server.child
  try {
    const { path, headers, body } = await prepare()
    requests(server.url + path, headers, body, WARMUP)
    // Let the JIT finish the optimised code it is building (it runs on helper threads, which valgrind
    // runs one at a time): without the pause, part of the measured requests run unoptimised code.
    await new Promise((resolve) => setTimeout(resolve, 3000))
    callgrindControl(child.pid as number, '-i', 'on')
    requests(server.url + path, headers, body, MEASURED)
    callgrindControl(child.pid as number, '-i', 'off')
    callgrindControl(child.pid as number, '-d')
  } finally {
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
  }
  const counted = countedInstructions(dir, `callgrind.${name}`)
  return { main: counted.main / MEASURED, all: counted.all / MEASURED }
}

export async function run (): Promise<string[]> {
  if (spawnSync('valgrind', ['--version']).status !== 0) return ['valgrind is not installed: instruction counts skipped (apt-get install valgrind)']
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-instr-'))
  try {
    // The agent and its policies are set up by a first control plane, so that the measured one
    // starts on a finished database, as a restarted production process would.
    const cpArgs = [CP_BIN, 'control-plane', '--port', '0', '--data-dir', dir]
    const cpEnv = { SERVICE_RATE_LIMIT_RPS: '1000000' }
    const setup = await startProcess(cpArgs, cpEnv)
    let agent: { key: string, evalBody: string }
    try {
      agent = await benchAgent(setup.url, setup.out(), dir)
    } finally {
      setup.child.kill('SIGTERM')
      await new Promise((resolve) => setup.child.once('exit', resolve))
    }
    const evalBody = agent.evalBody
    const cp = await measure(dir, 'cp', cpArgs, cpEnv, async () =>
      ({ path: '/api/service/v1/evaluate', headers: { 'content-type': 'application/json', 'x-service-key': agent.key }, body: evalBody }))
    const bare = await measure(dir, 'bare', [BARE_SERVER], {}, async () =>
      ({ path: '/evaluate', headers: { 'content-type': 'application/json' }, body: evalBody }))
    const k = (n: number): string => `${(n / 1000).toFixed(0)} k`
    return [
      `instructions per request (callgrind, ${MEASURED} sequential requests after ${WARMUP} to warm up), main thread: ` +
        `POST /v1/evaluate ${k(cp.main)}, bare fastify ${k(bare.main)}; all threads (JIT and GC helpers too): ${k(cp.all)} and ${k(bare.all)}`,
      `bare fastify / evaluate, main thread = ${(bare.main / cp.main * 100).toFixed(1)}% (the work ratio; the throughput goal is >= 70%)`
    ]
  } finally {
    if (process.env.BENCH_KEEP === undefined) rmSync(dir, { recursive: true, force: true })
    else process.stdout.write(`callgrind files kept in ${dir}\n`)
  }
}
