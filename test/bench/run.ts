/** Runs the benchmarks: `npm run bench` (all) or `npm run bench -- policy` (by name). */
import { spawnSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { run as policyEngine } from './policy-engine.js'
import { run as controlPlane } from './control-plane.js'
import { run as instructions } from './instructions.js'
import { run as sidecar } from './sidecar.js'

const BENCHES: Record<string, () => string[] | Promise<string[]>> = {
  policy: policyEngine,
  'control-plane': controlPlane,
  sidecar,
  instructions
}

// HTTP benchmarks pin the load generator (this process) to CPU 0 and the servers to CPU 1, so that
// both sides of a comparison get the same CPUs and runs vary less. Needs taskset and 2+ CPUs.
if (process.env.AGENTGOV_BENCH_PINNED === undefined && availableParallelism() >= 2 &&
    spawnSync('taskset', ['-c', '0', 'true']).status === 0) {
  const child = spawnSync('taskset', ['-c', '0', process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit', env: { ...process.env, AGENTGOV_BENCH_PINNED: '1' }
  })
  process.exit(child.status ?? 1)
}

const wanted = process.argv.slice(2)
for (const [name, bench] of Object.entries(BENCHES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  process.stdout.write(`== ${name}\n`)
  for (const line of await bench()) process.stdout.write(`${line}\n`)
}
