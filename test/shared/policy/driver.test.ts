/**
 * The generated driver of a policy set (shared/policy/driver.ts): chunks of 32 policies, user scopes,
 * failures, warnings and exceptions through Outcome, at every chunk boundary.
 */
import t from 'tap'
import { Outcome, buildDriver, type Entry } from '../../../shared/policy/driver.js'
import { compilePolicySet, type PolicyInput, type PolicyResult } from '../../../shared/policy/policy-set.js'
import { buildInputV1, type AgentInfo } from '../../../shared/policy/input.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const input = (user: string | null, context: Record<string, unknown> = {}) =>
  buildInputV1({ agent_id: AGENT.id, action: 'chat', user_id: user, context }, AGENT, 0)
const pad = (i: number): string => String(i).padStart(3, '0')

t.test('a set of 100 policies (four generated chunks) gives the result a plain loop would, at every position', async (t) => {
  const policies: PolicyInput[] = []
  const userScoped = (i: number): boolean => i % 7 !== 3 && i % 11 !== 5 && i % 13 === 9
  for (let i = 0; i < 100; i++) {
    const name = `p${pad(i)}`
    const base = { id: `id-${i}`, name, type: 'custom' }
    if (i % 7 === 3) policies.push({ ...base, config: { deny_if: { '==': [{ var: 'context.n' }, i] }, message: `hit ${i}` } })
    else if (i % 11 === 5) policies.push({ ...base, enforcement: 'audit', config: { deny_if: true, message: `audit ${i}` } })
    else if (i % 13 === 9) policies.push({ ...base, scope_type: 'USER', scope_id: `u${i}`, config: { deny_if: true, message: `user ${i}` } })
    else policies.push({ ...base, config: { deny_if: false } })
  }
  const set = compilePolicySet(policies)
  const audited = policies.filter((_, i) => i % 11 === 5 && i % 7 !== 3).map((p) => `[audit] ${p.name}: audit ${p.name.slice(1).replace(/^0+/, '')}`)
  for (const n of [-1, 3, 31, 38, 94]) {
    const d = set.evaluate(input('nobody', { n }))
    const hit = n % 7 === 3 ? `p${pad(n)}: hit ${n}` : null
    t.equal(d.reason, hit, `context.n = ${n}: the reason`)
    t.equal(d.allowed, hit === null)
    t.equal(d.policies_evaluated.length, 100 - 6, 'the six policies of other users are not listed')
    t.strictSame(d.warnings, audited, 'every audit failure, in order')
    t.strictSame(d.policies_evaluated.map((r) => r.name), policies.filter((_, i) => !userScoped(i)).map((p) => p.name),
      'results in evaluation order, across chunk boundaries')
  }
  const scoped = set.evaluate(input('u61'))
  t.equal(scoped.reason, 'p061: user 61', 'a USER policy in the second chunk applies to its user')
  t.equal(scoped.policies_evaluated.length, 95, 'its own USER policy is listed, the other five are not')
})

t.test('Outcome: a truthy value that is not a message fails with "denied"; a thrown error with its message', async (t) => {
  const errors: string[] = []
  const info = { id: 'i', name: 'n', type: 'custom', enforcement: 'enforce' as const, priority: 0, logic: null }
  const pass: PolicyResult = { ...info, result: 'pass', message: null }
  const entries: Entry[] = [
    { info, pass, fn: () => 42, warnOnly: false, userScope: undefined },
    { info, pass, fn: () => { throw new RangeError('boom') }, warnOnly: false, userScope: undefined },
    { info, pass, fn: () => { throw 'a string' }, warnOnly: true, userScope: undefined }
  ]
  const outcome = new Outcome(entries, {}, (p, err) => errors.push(`${p.name}: ${String(err)}`))
  const results = new Array<PolicyResult>(3)
  let n = 0
  for (const chunk of buildDriver(entries)) n = chunk({ user_id: null }, {}, results, outcome, n)
  t.equal(n, 3)
  t.strictSame(results.map((r) => [r.result, r.message]), [
    ['fail', 'denied'],
    ['fail', 'policy error: boom'],
    ['fail', 'policy error: undefined']
  ], 'a throw fails closed even for a warn-only policy, whatever was thrown')
  t.equal(outcome.reason, 'n: denied', 'the first enforced failure is the reason')
  t.strictSame(errors, ['n: RangeError: boom', 'n: a string'], 'every exception is reported')
})

t.test('buildDriver: an empty set has no chunk; a scope id is written as an inert string literal', async (t) => {
  t.equal(buildDriver([]).length, 0)
  const tricky = '"; throw new Error("injected"); "'
  const set = compilePolicySet([{ id: 'x', name: 'x', type: 'custom', scope_type: 'USER', scope_id: tricky, config: { deny_if: true } }])
  t.equal(set.evaluate(input('someone')).allowed, true, 'another user: not applied, nothing injected')
  t.equal(set.evaluate(input(tricky)).allowed, false, 'the user whose id is that text: applied')
})
