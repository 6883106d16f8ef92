/** From policies to one decision (policy-types.md): order, enforcement, scopes, fail-closed errors. */
import t from 'tap'
import {
  buildInputV1, compilePolicySet, effectivePolicies, isPolicyType, normalizeScopeType, scopeMatches, validatePolicy,
  compileRule, type AgentInfo, type PolicyInput
} from '../../../shared/policy/index.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: { team: 'sales', deployment: 'eu' }, deployment_id: null, team: null }
const input = (context: Record<string, unknown> = {}, user: string | null = 'u1') =>
  buildInputV1({ agent_id: 'bot-1', action: 'chat', user_id: user, context }, AGENT, Date.UTC(2026, 0, 1))

const deny = (name: string, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: `id-${name}`, name, type: 'custom', config: { deny_if: true, message: `${name} says no` }, ...extra })
const allow = (name: string, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: `id-${name}`, name, type: 'custom', config: { deny_if: false }, ...extra })

t.test('an empty set allows with nothing evaluated', async (t) => {
  t.same(compilePolicySet([]).evaluate(input()), { allowed: true, reason: null, policies_evaluated: [], warnings: [], restrictions: {} })
})

t.test('policies run by priority (higher first), then name; the first enforced failure is the reason', async (t) => {
  const d = compilePolicySet([deny('b'), deny('a'), allow('z', { priority: 5 }), deny('c', { priority: 1 })]).evaluate(input())
  t.same(d.policies_evaluated.map((p) => p.name), ['z', 'c', 'a', 'b'])
  t.equal(d.reason, 'c: c says no')
  t.equal(d.allowed, false)
  t.same(d.policies_evaluated.map((p) => p.result), ['pass', 'fail', 'fail', 'fail'], 'every policy is still evaluated and listed')
  t.same(d.policies_evaluated[1], { id: 'id-c', name: 'c', type: 'custom', result: 'fail', message: 'c says no' })
})

t.test('audit failures are warnings, disabled and inactive policies are skipped and not listed', async (t) => {
  const d = compilePolicySet([deny('watch', { enforcement: 'audit' }), deny('off', { enforcement: 'disabled' }), deny('old', { is_active: false })]).evaluate(input())
  t.equal(d.allowed, true)
  t.same(d.warnings, ['[audit] watch: watch says no'])
  t.same(d.policies_evaluated.map((p) => [p.name, p.result]), [['watch', 'fail']])
  const set = compilePolicySet([deny('watch', { enforcement: 'audit' })])
  t.same(set.policies.map((p) => p.enforcement), ['audit'])
})

t.test('USER-scoped policies apply only to requests of that user', async (t) => {
  const set = compilePolicySet([deny('alice-only', { scope_type: 'USER', scope_id: 'alice' })])
  t.equal(set.evaluate(input({}, 'alice')).allowed, false)
  t.equal(set.evaluate(input({}, 'bob')).allowed, true)
  t.equal(set.evaluate(input({}, null)).allowed, true)
})

t.test('a policy that cannot compile, or throws while evaluating, fails closed with "policy error:" and is reported', async (t) => {
  const reported: string[] = []
  const onError = (p: { name: string }, err: Error): void => { reported.push(`${p.name}: ${err.message}`) }
  const set = compilePolicySet([
    { id: '1', name: 'bad-type', type: 'nope', config: {} },
    { id: '2', name: 'bad-logic', type: 'custom', config: { deny_if: { frob: 1 } } },
    { id: '3', name: 'throws', type: 'custom', config: { deny_if: { var: { cat: ['__pro', 'to__'] } } } },
    allow('fine')
  ], { onError })
  const d = set.evaluate(input())
  t.equal(d.allowed, false)
  t.match(d.reason, /^bad-logic: policy error: logic\.if\[0\]\.frob: unknown operation "frob"/)
  const byName = Object.fromEntries(d.policies_evaluated.map((p) => [p.name, p]))
  t.match(byName['bad-type']?.message, /^policy error: unknown policy type "nope"/)
  t.match(byName.throws?.message, /^policy error: var: path segment "__proto__" is not allowed/)
  t.equal(byName.fine?.result, 'pass')
  t.equal(reported.length, 3, 'two compile errors and one evaluation error reported')
  t.match(set.policies.find((p) => p.name === 'bad-type')?.error, /policy error/)
  const warnOnly = compilePolicySet([{ id: '4', name: 'cf', type: 'content_filter', config: { deny_patterns: ['(a+)+'], on_match: 'warn' } }])
  t.equal(warnOnly.evaluate(input({ prompt: 'x' })).allowed, false, 'a broken warn-only policy still fails closed')
})

t.test('a failure that is not a string reads "denied"; JSON-logic log values go to options.log', async (t) => {
  const logged: unknown[] = []
  const d = compilePolicySet([{ id: '1', name: 'num', type: 'custom', config: { allow_if: { log: 0 } } }], { log: (v) => logged.push(v) }).evaluate(input())
  t.equal(d.reason, 'num: allow_if rule not satisfied')
  t.same(logged, [0])
  t.equal(compileRule({ '+': [1, 2] })(), 3, 'the public compileRule')
})

t.test('scopes: ORG, TEAM, DEPLOYMENT (deployment_id or metadata.deployment), ENDPOINT, USER', async (t) => {
  t.equal(normalizeScopeType(undefined), 'ORG')
  t.equal(normalizeScopeType('team'), 'TEAM')
  t.equal(normalizeScopeType(5), undefined)
  t.equal(normalizeScopeType('galaxy'), undefined)
  t.ok(scopeMatches({ name: 'x', scope_type: 'TEAM', scope_id: 'sales' }, AGENT), 'team from metadata.team')
  t.ok(scopeMatches({ name: 'x', scope_type: 'TEAM', scope_id: 'ops' }, { ...AGENT, team: 'ops' }), 'team field')
  t.ok(scopeMatches({ name: 'x', scope_type: 'DEPLOYMENT', scope_id: 'eu' }, AGENT), 'deployment from metadata')
  t.ok(scopeMatches({ name: 'x', scope_type: 'DEPLOYMENT', scope_id: 'us' }, { ...AGENT, deployment_id: 'us' }))
  t.ok(scopeMatches({ name: 'x', scope_type: 'ENDPOINT', scope_id: 'bot-1' }, AGENT))
  t.notOk(scopeMatches({ name: 'x', scope_type: 'ENDPOINT', scope_id: 'bot-2' }, AGENT))
  t.ok(scopeMatches({ name: 'x', scope_type: 'USER', scope_id: 'anyone' }, AGENT), 'USER: decided per request')
  t.notOk(scopeMatches({ name: 'x', scope_type: 'PLANET' }, AGENT))
  const list = [
    { name: 'b', priority: 1 }, { name: 'a', priority: 1 }, { name: 'c', priority: 9 },
    { name: 'off', is_active: false }, { name: 'other-team', scope_type: 'TEAM', scope_id: 'ops' }
  ]
  t.same(effectivePolicies(list, AGENT).map((p) => p.name), ['c', 'a', 'b'])
})

t.test('validatePolicy: the envelope of a policy', async (t) => {
  const ok = { name: 'p', type: 'custom', config: { deny_if: false } }
  t.same(validatePolicy(ok), [])
  t.same(validatePolicy([ok]), [{ path: '', message: 'a policy must be an object' }])
  t.same(validatePolicy(null), [{ path: '', message: 'a policy must be an object' }])
  const all = validatePolicy({ id: 7, name: '', type: 'x', enforcement: 'loud', priority: 1.5, is_active: 'yes', scope_type: 'PLANET', scope_id: 3 })
  t.same(all.map((e) => e.path), ['id', 'name', 'type', 'enforcement', 'priority', 'is_active', 'scope_type', 'scope_id'])
  t.same(validatePolicy({ name: 'p', type: 'custom' }), [{ path: 'config', message: 'is required' }])
  t.same(validatePolicy({ ...ok, priority: 2_000_000 }), [{ path: 'priority', message: 'must be between -1000000 and 1000000' }])
  t.same(validatePolicy({ ...ok, id: null, scope_type: 'org', scope_id: 't', enforcement: 'audit', is_active: true, priority: -3 }), [])
  t.same(validatePolicy({ name: 'p', type: 'custom', config: { deny_if: undefined, allow_if: {} } }), [])
  t.ok(isPolicyType('rate_limit'))
  t.notOk(isPolicyType('nope'))
  t.notOk(isPolicyType(5))
})

t.test('validatePolicy: a scope narrower than ORG needs its scope_id', async (t) => {
  const base = { name: 'p', type: 'custom', config: { deny_if: false } }
  for (const scope of ['TEAM', 'deployment', 'ENDPOINT', 'USER']) {
    t.same(validatePolicy({ ...base, scope_type: scope }), [{ path: 'scope_id', message: `is required for scope_type ${scope.toUpperCase()}` }], `${scope} without scope_id`)
    t.same(validatePolicy({ ...base, scope_type: scope, scope_id: ' ' }).map((e) => e.path), ['scope_id'], `${scope} with a blank scope_id`)
    t.same(validatePolicy({ ...base, scope_type: scope, scope_id: 'x' }), [], `${scope} with a scope_id`)
  }
  t.same(validatePolicy({ ...base, scope_type: 'ORG' }), [], 'ORG needs none')
})
