/**
 * compilePolicySet (policy-types.md, "From policies to one decision"): order by priority then name,
 * the first enforced failure is the reason, audit failures are warnings, disabled and inactive policies
 * are neither evaluated nor listed, errors fail closed with "policy error:", restrictions of enforced
 * policies are merged, USER-scoped policies apply per request, counters commit only on allow.
 */
import t from 'tap'
import { compilePolicySet, type PolicyInput } from '../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../shared/policy/input.js'
import { MemoryRateCounters } from '../../../shared/policy/counters.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)

const input = (context: Record<string, unknown> = {}, user: string | null = 'u1', action = 'chat') =>
  buildInputV1({ agent_id: AGENT.id, action, user_id: user, context }, AGENT, T0)

const deny = (name: string, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: `id-${name}`, name, type: 'custom', config: { deny_if: true, message: `${name} says no` }, ...extra })
const pass = (name: string, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: `id-${name}`, name, type: 'custom', config: { deny_if: false }, ...extra })
const maxTokens = (name: string, n: number, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: `id-${name}`, name, type: 'model_restriction', config: { max_tokens: n }, ...extra })
const models = (name: string, list: string[], extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: `id-${name}`, name, type: 'model_restriction', config: { allowed_models: list }, ...extra })

t.test('an empty policy set allows with nothing evaluated, no warnings and no restrictions', async (t) => {
  const set = compilePolicySet([])
  t.same(set.evaluate(input()), { allowed: true, reason: null, policies_evaluated: [], warnings: [], restrictions: {} })
  t.same(set.policies, [])
  t.same(set.restrictions, {})
})

t.test('a set that only passes allows, lists each policy as pass with a null message', async (t) => {
  const d = compilePolicySet([pass('a'), pass('b')]).evaluate(input())
  t.same(d, {
    allowed: true,
    reason: null,
    policies_evaluated: [
      { id: 'id-a', name: 'a', type: 'custom', result: 'pass', message: null },
      { id: 'id-b', name: 'b', type: 'custom', result: 'pass', message: null }
    ],
    warnings: [],
    restrictions: {}
  })
})

t.test('policies are evaluated by priority (higher first, absent = 0), then by name', async (t) => {
  const set = compilePolicySet([pass('b'), pass('a'), pass('low', { priority: -1 }), pass('top', { priority: 10 }), pass('mid', { priority: 5 }), pass('B')])
  t.same(set.evaluate(input()).policies_evaluated.map((p) => p.name), ['top', 'mid', 'B', 'a', 'b', 'low'])
  t.same(set.policies.map((p) => [p.name, p.priority]), [['top', 10], ['mid', 5], ['B', 0], ['a', 0], ['b', 0], ['low', -1]], 'set.policies is in evaluation order')
})

t.test('the caller\'s policy list is not reordered', async (t) => {
  const list = [pass('b'), pass('a')]
  compilePolicySet(list)
  t.same(list.map((p) => p.name), ['b', 'a'])
})

t.test('the first enforced failure (in evaluation order) is the reason; every policy is still evaluated and listed', async (t) => {
  const d = compilePolicySet([deny('b'), deny('a'), pass('z', { priority: 5 }), deny('c', { priority: 1 })]).evaluate(input())
  t.equal(d.allowed, false)
  t.equal(d.reason, 'c: c says no', 'the reason carries the policy name')
  t.same(d.policies_evaluated.map((p) => [p.name, p.result, p.message]), [
    ['z', 'pass', null], ['c', 'fail', 'c says no'], ['a', 'fail', 'a says no'], ['b', 'fail', 'b says no']
  ])
  t.same(d.warnings, [])
})

t.test('audit failures become "[audit] name: message" warnings and do not block', async (t) => {
  const d = compilePolicySet([deny('watch', { enforcement: 'audit' }), pass('ok')]).evaluate(input())
  t.equal(d.allowed, true)
  t.equal(d.reason, null)
  t.same(d.warnings, ['[audit] watch: watch says no'])
  t.same(d.policies_evaluated.map((p) => [p.name, p.result]), [['ok', 'pass'], ['watch', 'fail']], 'listed as fail')
})

t.test('an audit failure before an enforced failure does not become the reason; both are reported', async (t) => {
  const d = compilePolicySet([deny('first', { enforcement: 'audit', priority: 9 }), deny('second')]).evaluate(input())
  t.equal(d.allowed, false)
  t.equal(d.reason, 'second: second says no')
  t.same(d.warnings, ['[audit] first: first says no'])
})

t.test('disabled and inactive policies are neither evaluated nor listed', async (t) => {
  const set = compilePolicySet([deny('off', { enforcement: 'disabled' }), deny('old', { is_active: false }), pass('on', { is_active: true })])
  const d = set.evaluate(input())
  t.equal(d.allowed, true)
  t.same(d.policies_evaluated.map((p) => p.name), ['on'])
  t.same(set.policies.map((p) => p.name), ['on'])
  const broken = compilePolicySet([{ id: 'x', name: 'broken-but-off', type: 'nope', config: {}, enforcement: 'disabled' }])
  t.same(broken.evaluate(input()).policies_evaluated, [], 'a disabled broken policy is not even compiled')
})

t.test('enforcement absent or unknown counts as enforce (fail safe)', async (t) => {
  const set = compilePolicySet([deny('weird', { enforcement: 'LOUD' }), deny('none')])
  t.same(set.policies.map((p) => p.enforcement), ['enforce', 'enforce'])
  t.equal(set.evaluate(input()).reason, 'none: none says no')
})

t.test('set.policies describes each compiled policy with its JSON-logic', async (t) => {
  const set = compilePolicySet([deny('a', { enforcement: 'audit', priority: 3 })])
  t.same(set.policies, [{ id: 'id-a', name: 'a', type: 'custom', enforcement: 'audit', priority: 3, logic: { if: [true, 'a says no', null] } }])
  t.ok(Object.isFrozen(set.policies))
})

t.test('a policy of an unknown type fails closed with "policy error:" and is reported once', async (t) => {
  const reported: Array<[string, string]> = []
  const set = compilePolicySet([{ id: 'x', name: 'mystery', type: 'nope', config: {} }, pass('fine')], { onError: (p, e) => reported.push([p.name, e.message]) })
  const d = set.evaluate(input())
  t.equal(d.allowed, false)
  t.equal(d.reason, 'mystery: policy error: unknown policy type "nope"')
  t.same(d.policies_evaluated, [
    { id: 'id-fine', name: 'fine', type: 'custom', result: 'pass', message: null },
    { id: 'x', name: 'mystery', type: 'nope', result: 'fail', message: 'policy error: unknown policy type "nope"' }
  ])
  set.evaluate(input())
  t.same(reported, [['mystery', 'unknown policy type "nope"']], 'reported at compile time, not per decision')
  t.equal(set.policies.find((p) => p.name === 'mystery')?.error, 'policy error: unknown policy type "nope"')
  t.equal(set.policies.find((p) => p.name === 'fine')?.error, undefined)
})

t.test('a config that cannot be turned into logic (skipped validation) fails closed', async (t) => {
  const d = compilePolicySet([{ id: 'x', name: 'rl', type: 'rate_limit', config: null }]).evaluate(input())
  t.equal(d.allowed, false)
  t.match(d.reason, /^rl: policy error: /)
})

t.test('a rule that does not compile fails closed with the rule path in the message', async (t) => {
  const d = compilePolicySet([{ id: 'x', name: 'bad', type: 'custom', config: { deny_if: { frob: 1 } } }, pass('fine')]).evaluate(input())
  t.equal(d.allowed, false)
  t.equal(d.reason, 'bad: policy error: logic.if[0].frob: unknown operation "frob"')
  t.equal(d.policies_evaluated.find((p) => p.name === 'fine')?.result, 'pass', 'one bad rule does not affect the others')
})

t.test('a rule that throws while evaluating fails closed for that decision only, and is reported each time', async (t) => {
  const reported: string[] = []
  const set = compilePolicySet([{ id: 'x', name: 'dyn', type: 'custom', config: { deny_if: { var: { var: 'context.path' } } } }], { onError: (p, e) => reported.push(`${p.name}: ${e.message}`) })
  const bad = set.evaluate(input({ path: 'constructor' }))
  t.equal(bad.allowed, false)
  t.equal(bad.reason, 'dyn: policy error: var: path segment "constructor" is not allowed')
  t.equal(set.evaluate(input({ path: 'context.flag' })).allowed, true, 'the next decision is unaffected')
  set.evaluate(input({ path: 'prototype' }))
  t.same(reported, ['dyn: var: path segment "constructor" is not allowed', 'dyn: var: path segment "prototype" is not allowed'])
})

t.test('errors fail closed without an onError handler too', async (t) => {
  const set = compilePolicySet([{ id: 'x', name: 'dyn', type: 'custom', config: { deny_if: { var: { var: 'context.path' } } } }, { id: 'y', name: 'nope', type: 'nope', config: {} }])
  const d = set.evaluate(input({ path: '__proto__' }))
  t.equal(d.allowed, false)
  t.same(d.policies_evaluated.map((p) => p.result), ['fail', 'fail'])
})

t.test('a broken policy in audit mode is an [audit] warning: it fails, but audit never blocks', async (t) => {
  const d = compilePolicySet([{ id: 'x', name: 'mystery', type: 'nope', config: {}, enforcement: 'audit' }]).evaluate(input())
  t.equal(d.allowed, true)
  t.same(d.warnings, ['[audit] mystery: policy error: unknown policy type "nope"'])
})

t.test('restrictions: max_tokens is the smallest and allowed_models the intersection over enforced policies', async (t) => {
  const set = compilePolicySet([
    maxTokens('m1', 500), maxTokens('m2', 200), models('a1', ['a', 'b', 'c']), models('a2', ['b', 'c', 'd']),
    maxTokens('audited', 10, { enforcement: 'audit' }), models('audited-models', ['z'], { enforcement: 'audit' }),
    maxTokens('off', 1, { enforcement: 'disabled' }), maxTokens('inactive', 2, { is_active: false }),
    { id: 'b', name: 'broken', type: 'model_restriction', config: { max_tokens: 3, allowed_models: [5] }, enforcement: 'audit' },
    { id: 'b2', name: 'broken-enforced', type: 'model_restriction', config: { max_tokens: 4, allowed_models: [6] }, priority: -1 },
    deny('unrelated', { enforcement: 'audit' })
  ])
  t.same(set.restrictions, { max_tokens: 200, allowed_models: ['b', 'c'] }, 'audited, disabled, inactive and broken policies restrict nothing')
  t.match(set.policies.find((p) => p.name === 'broken-enforced')?.error, /^policy error: /, 'the broken one is really broken')
  const d = set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', model: 'b', tokens_requested: 100 }, AGENT, T0))
  t.same(d.restrictions, { max_tokens: 200, allowed_models: ['b', 'c'] }, 'every decision (this one is blocked by the broken policy) carries them')
  t.equal(d.restrictions, set.restrictions, 'the same object each time')
  t.ok(Object.isFrozen(set.restrictions))
  t.throws(() => { (set.restrictions.allowed_models as string[]).push('x') }, TypeError, 'callers cannot change them')
})

t.test('restrictions: disjoint allowed_models intersect to an empty list', async (t) => {
  t.same(compilePolicySet([models('x', ['a']), models('y', ['b'])]).restrictions, { allowed_models: [] })
})

t.test('restrictions: a USER-scoped policy restricts only the requests of its user', async (t) => {
  const set = compilePolicySet([maxTokens('alice-cap', 10, { scope_type: 'USER', scope_id: 'alice' })])
  const llm = (user: string) => set.evaluate(input({ model: 'm', tokens: 50 }, user, 'llm_call'))
  t.equal(llm('alice').allowed, false, 'alice is capped')
  t.same(llm('alice').restrictions, { max_tokens: 10 })
  const bob = llm('bob')
  t.equal(bob.allowed, true, 'bob is not capped')
  t.same(bob.policies_evaluated, [], 'the policy is not listed for bob')
  t.same(bob.restrictions, {}, 'so bob is told of no max_tokens')
})

t.test('restrictions: allowed_models never refuses a model the decision allows', async (t) => {
  const set = compilePolicySet([models('family', ['gpt-*']), models('exact', ['gpt-4o'])])
  t.equal(set.evaluate(input({ model: 'gpt-4o' }, 'u1', 'llm_call')).allowed, true, 'gpt-4o is allowed by both policies')
  t.same(set.restrictions, { allowed_models: ['gpt-4o'] }, 'and the merged list still names it')
})

t.test('USER-scoped policies apply only to requests whose user_id equals scope_id', async (t) => {
  const set = compilePolicySet([deny('alice-only', { scope_type: 'USER', scope_id: 'alice' }), pass('everyone'), deny('bob-audit', { scope_type: 'user', scope_id: 'bob', enforcement: 'audit' })])
  const alice = set.evaluate(input({}, 'alice'))
  t.equal(alice.allowed, false)
  t.equal(alice.reason, 'alice-only: alice-only says no')
  const bob = set.evaluate(input({}, 'bob'))
  t.equal(bob.allowed, true)
  t.same(bob.policies_evaluated.map((p) => p.name), ['bob-audit', 'everyone'], 'alice\'s policy is not listed for bob')
  t.same(bob.warnings, ['[audit] bob-audit: bob-audit says no'])
  t.same(set.evaluate(input({}, null)).policies_evaluated.map((p) => p.name), ['everyone'], 'no user: no USER-scoped policy')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'chat', context: { user_id: 'alice' } }, AGENT, T0)).allowed, false, 'legacy context.user_id')
  t.equal(set.evaluate(input({}, 'Alice')).allowed, true, 'user ids compare exactly')
})

t.test('a USER-scoped policy without scope_id applies to no named user', async (t) => {
  const set = compilePolicySet([deny('nobody', { scope_type: 'USER' })])
  t.equal(set.evaluate(input({}, 'alice')).allowed, true)
  t.equal(set.evaluate(input({}, null)).allowed, true)
})

t.test('other scopes are not filtered here: the caller passes the agent\'s effective policies', async (t) => {
  const d = compilePolicySet([deny('team', { scope_type: 'TEAM', scope_id: 'other' })]).evaluate(input())
  t.equal(d.allowed, false)
})

t.test('counters are written only when the whole decision allows', async (t) => {
  const rates = new MemoryRateCounters()
  const set = compilePolicySet([
    { id: 'rl', name: 'rl', type: 'rate_limit', config: { requests_per_minute: 1 } },
    { id: 'gate', name: 'gate', type: 'custom', config: { deny_if: { var: 'context.block' } } }
  ], { rates, now: () => T0 })
  t.equal(set.evaluate(input({ block: true })).allowed, false)
  t.equal(rates.size, 0, 'a blocked decision writes nothing')
  t.equal(set.evaluate(input()).allowed, true)
  t.equal(rates.size, 1, 'an allowed one writes its count')
  t.equal(set.evaluate(input()).reason, 'rl: more than 1 requests per minute per agent')
})

t.test('options.now is read at each decision', async (t) => {
  let now = T0
  let reads = 0
  const set = compilePolicySet([{ id: 'rl', name: 'rl', type: 'rate_limit', config: { requests_per_minute: 1 } }], { now: () => { reads++; return now } })
  t.equal(set.evaluate(input()).allowed, true)
  t.equal(set.evaluate(input()).allowed, false)
  now += 120_000
  t.equal(set.evaluate(input()).allowed, true, 'two minutes on, the window is empty')
  t.equal(reads, 3)
})

t.test('options.log receives the values of JSON-logic log operations', async (t) => {
  const logged: unknown[] = []
  const d = compilePolicySet([{ id: 'l', name: 'l', type: 'custom', config: { deny_if: { log: { var: 'user_id' } } } }], { log: (v) => logged.push(v) }).evaluate(input({}, 'u7'))
  t.same(logged, ['u7'])
  t.equal(d.reason, 'l: deny_if rule matched', 'log returns its value, which is truthy here')
})

t.test('one compiled set decides many inputs independently', async (t) => {
  const set = compilePolicySet([{ id: 't', name: 'tools', type: 'tool_permission', config: { allowed_tools: ['search'] } }])
  const results = ['search', 'shell', 'search', 'email'].map((tool) => set.evaluate(input({ tool }, 'u1', 'tool_call')).allowed)
  t.same(results, [true, false, true, false])
})
