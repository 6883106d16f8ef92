/**
 * Policy engine benchmark (issue 2): compiled decisions against json-logic-js in the same run,
 * a 20-policy realistic agent, and compile time.
 */
import jsonLogic from 'json-logic-js'
import { buildInputV1, compilePolicySet, MemoryBudgetLedger, MemoryRateCounters, type PolicyInput } from '../../shared/policy/index.js'
import { AGENT, V1_BODIES, customRules, mixedPolicies } from './fixtures.js'
import { compare, fmt, latency, median, once, throughput, verdict } from './harness.js'

export function run (): string[] {
  const lines: string[] = []
  const inputs = V1_BODIES.map((b) => buildInputV1(b, AGENT))

  // 1. 20 custom rules: the compiled set against the same rules through jsonLogic.apply.
  const rules = customRules(20)
  const customSet = compilePolicySet(rules.map((deny_if, i): PolicyInput => ({ id: `c${i}`, name: `custom-${i}`, type: 'custom', config: { deny_if } })))
  let k = 0
  const cmp = compare(
    () => customSet.evaluate(inputs[k++ & 1]!),
    () => {
      const input = inputs[k++ & 1]
      let r: unknown
      for (let i = 0; i < rules.length; i++) r = jsonLogic.apply(rules[i] as jsonLogic.RulesLogic, input)
      return r
    })
  lines.push(`compiled 20-rule set: ${fmt(cmp.subject)} decisions/s; json-logic-js: ${fmt(cmp.baseline)} decisions/s ` +
    `(medians of ${cmp.ratios.length} alternating rounds; round ratios ${cmp.ratios.map((r) => r.toFixed(1)).join(', ')})`)
  lines.push(verdict('compiled vs json-logic-js (20 custom rules)', `${cmp.ratio.toFixed(1)}x`, '>= 20x', cmp.ratio >= 20))

  // 2. A realistic agent: 20 policies of every type, 200-character prompt.
  const mixed = compilePolicySet(mixedPolicies(), { rates: new MemoryRateCounters(), budget: new MemoryBudgetLedger() })
  const decision = mixed.evaluate(inputs[0]!)
  if (!decision.allowed) throw new Error(`benchmark request unexpectedly blocked: ${decision.reason}`)
  const single = throughput('one json-logic-js apply', () => jsonLogic.apply(rules[0] as jsonLogic.RulesLogic, inputs[k++ & 1]))
  const mixedRuns = Array.from({ length: 5 }, () => throughput('20 mixed policies', () => mixed.evaluate(inputs[k++ & 1]!), 400).opsPerSec)
  const mixedT = median(mixedRuns)
  const withBuild = throughput('20 mixed policies + input build', () => mixed.evaluate(buildInputV1(V1_BODIES[k++ & 1]!, AGENT)))
  const lat = latency(() => mixed.evaluate(inputs[k++ & 1]!))
  lines.push(`20 mixed policies: ${fmt(mixedT)} decisions/s (median of 5 rounds: ${mixedRuns.map(fmt).join(', ')}; ` +
    `${fmt(withBuild.opsPerSec)}/s with input building); json-logic-js single-rule applies: ${fmt(single.opsPerSec)}/s`)
  lines.push(`latency µs: p50 ${lat.p50.toFixed(2)}  p90 ${lat.p90.toFixed(2)}  p99 ${lat.p99.toFixed(2)}  p99.9 ${lat.p999.toFixed(2)}`)
  lines.push(verdict('20 mixed policies throughput', `${fmt(mixedT)}/s`, '>= 500 k/s', mixedT >= 500_000))
  lines.push(verdict('20 mixed policies p99', `${lat.p99.toFixed(2)} µs`, '< 10 µs', lat.p99 < 10))

  // 3. Compile time for 1,000 policies (best of 5, after one warm-up).
  const thousand: PolicyInput[] = []
  for (let i = 0; i < 50; i++) {
    for (const p of mixedPolicies()) thousand.push({ ...p, id: `${p.id}-${i}`, name: `${p.name}-${i}` })
  }
  once(() => compilePolicySet(thousand))
  const times = Array.from({ length: 5 }, () => once(() => compilePolicySet(thousand)))
  const best = Math.min(...times)
  lines.push(verdict('compile 1,000 policies', `${best.toFixed(1)} ms (runs: ${times.map((t) => t.toFixed(1)).join(', ')})`, '< 50 ms', best < 50))
  return lines
}
