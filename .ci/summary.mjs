// Reads a TAP log written by `tap --reporter=tap` and prints the one line CI reads: "N passed, N failed".
// tap's own closing line is "# { total: T, pass: P, fail: F, skip: S, todo: D }".
import { readFileSync } from 'node:fs'

const text = readFileSync(process.argv[2], 'utf8')
const lines = text.split('\n').filter((l) => /^# \{ total: \d+/.test(l))
const last = lines.at(-1)
if (!last) {
  console.log('0 passed, 1 failed')
  console.error('summary: no tap totals line found (did the test run start?)')
  process.exit(1)
}
const count = (name) => Number((last.match(new RegExp(`\\b${name}: (\\d+)`)) ?? [])[1] ?? 0)
const pass = count('pass')
const fail = count('fail')
console.log(`${pass} passed, ${fail} failed`)
process.exit(fail > 0 || pass === 0 ? 1 : 0)
