/** Runs the benchmarks: `npm run bench` (all) or `npm run bench -- policy` (by name). */
import { run as policyEngine } from './policy-engine.js'

const BENCHES: Record<string, () => string[] | Promise<string[]>> = {
  policy: policyEngine
}

const wanted = process.argv.slice(2)
for (const [name, bench] of Object.entries(BENCHES)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  process.stdout.write(`== ${name}\n`)
  for (const line of await bench()) process.stdout.write(`${line}\n`)
}
