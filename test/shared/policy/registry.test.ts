/**
 * registry.ts: validatePolicy on the policy envelope (name, type, config, enforcement, priority,
 * scope_type / scope_id, is_active), unknown types and fields, and policyLogic (every policy as one
 * JSON-logic rule: falsy = pass, a message = fail).
 */
import t from 'tap'
import { isPolicyType, policyLogic, policyTypeDef, validatePolicy } from '../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../shared/policy/policy-set.js'
import { buildInputV1, type AgentInfo } from '../../../shared/policy/input.js'
import { POLICY_TYPES } from '../../../shared/policy/types/common.js'
import { compileRule } from '../../../shared/policy/index.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)
const TYPES = 'rate_limit, tool_permission, model_restriction, budget_limit, content_filter, network_policy, human_oversight, custom'
const SCOPES = 'ORG, TEAM, DEPLOYMENT, ENDPOINT, USER'
const OK = { name: 'p', type: 'custom', config: { deny_if: false } }

/** A valid config of every type. */
const VALID: Record<string, Record<string, unknown>> = {
  rate_limit: { requests_per_minute: 10 },
  tool_permission: { allowed_tools: ['search'] },
  model_restriction: { max_tokens: 100 },
  budget_limit: { max_cost_usd: 5 },
  content_filter: { pii: ['email'] },
  network_policy: { denied_domains: ['evil.com'] },
  human_oversight: { require_approval_for: ['deploy'] },
  custom: { deny_if: false }
}

const paths = (policy: unknown): string[] => validatePolicy(policy).map((e) => `${e.path}: ${e.message}`)

t.test('validatePolicy: a minimal policy (name, type, config) is valid', async (t) => {
  t.same(validatePolicy(OK), [])
})

t.test('validatePolicy: a policy with every envelope field set to a valid value is valid', async (t) => {
  t.same(validatePolicy({ ...OK, id: 'pol_1', enforcement: 'audit', priority: 10, is_active: false, scope_type: 'TEAM', scope_id: 'support' }), [])
})

t.test('validatePolicy: fields outside the envelope (version, timestamps, tenant) are ignored', async (t) => {
  t.same(validatePolicy({ ...OK, version: 3, created_at: '2026-01-01T00:00:00Z', updated_at: 'x', tenant_id: 't', description: 5 }), [])
})

t.test('validatePolicy: every valid config of every type passes', async (t) => {
  for (const type of POLICY_TYPES) t.same(validatePolicy({ name: type, type, config: VALID[type] }), [], type)
})

t.test('validatePolicy: something that is not an object is refused at the root path ""', async (t) => {
  for (const value of [null, undefined, [OK], 'policy', 42, true]) {
    t.same(validatePolicy(value), [{ path: '', message: 'a policy must be an object' }], JSON.stringify(value) ?? 'undefined')
  }
})

t.test('validatePolicy: name is required, a non-empty string of at most 200 characters', async (t) => {
  t.same(paths({ type: 'custom', config: { deny_if: false } }), ['name: must be a string'])
  t.same(paths({ ...OK, name: 7 }), ['name: must be a string'])
  t.same(paths({ ...OK, name: '   ' }), ['name: must not be empty'])
  t.same(paths({ ...OK, name: 'n'.repeat(201) }), ['name: must be at most 200 characters'])
  t.same(paths({ ...OK, name: 'n'.repeat(200) }), [], '200 is the limit')
})

t.test('validatePolicy: id is optional (null allowed); when given a non-empty string of at most 200 characters', async (t) => {
  t.same(paths({ ...OK, id: null }), [])
  t.same(paths({ ...OK, id: 'a'.repeat(200) }), [])
  t.same(paths({ ...OK, id: 7 }), ['id: must be a string'])
  t.same(paths({ ...OK, id: '' }), ['id: must not be empty'])
  t.same(paths({ ...OK, id: 'a'.repeat(201) }), ['id: must be at most 200 characters'])
})

t.test('validatePolicy: type must be one of the eight lower-case policy types', async (t) => {
  t.same(paths({ name: 'p', config: {} }), [`type: must be one of: ${TYPES}`], 'missing')
  t.same(paths({ ...OK, type: 'nope' }), [`type: must be one of: ${TYPES}`], 'unknown')
  t.same(paths({ ...OK, type: 'RATE_LIMIT' }), [`type: must be one of: ${TYPES}`], 'the GraphQL enum spelling is not the REST type')
  t.same(paths({ ...OK, type: 5 }), [`type: must be one of: ${TYPES}`])
})

t.test('validatePolicy: with an unknown type the config is not checked (there is no shape to check it against)', async (t) => {
  t.same(paths({ name: 'p', type: 'nope' }), [`type: must be one of: ${TYPES}`], 'no "config: is required"')
  t.same(paths({ name: 'p', type: 'nope', config: 'garbage' }), [`type: must be one of: ${TYPES}`])
})

t.test('validatePolicy: config is required for a known type and is checked against its type', async (t) => {
  t.same(paths({ name: 'p', type: 'rate_limit' }), ['config: is required'])
  t.same(paths({ name: 'p', type: 'rate_limit', config: null }), ['config: must be an object'])
  t.same(paths({ name: 'p', type: 'tool_permission', config: { allowed_tools: ['a', 'b', 3] } }), ['config.allowed_tools[2]: must be a string'])
})

t.test('validatePolicy: an unknown config field is refused for every type, listing the known ones', async (t) => {
  for (const type of POLICY_TYPES) {
    const errs = validatePolicy({ name: 'p', type, config: { ...VALID[type], bogus: 1 } })
    t.equal(errs.length, 1, type)
    t.equal(errs[0]?.path, 'config.bogus', type)
    t.match(errs[0]?.message, /^unknown field \(expected one of: [a-z_, ]+\)$/, type)
  }
})

t.test('validatePolicy: enforcement is optional; when given enforce, audit or disabled', async (t) => {
  for (const e of ['enforce', 'audit', 'disabled']) t.same(paths({ ...OK, enforcement: e }), [], e)
  for (const e of ['loud', 'ENFORCE', null, 1]) t.same(paths({ ...OK, enforcement: e }), ['enforcement: must be one of: enforce, audit, disabled'], String(e))
})

t.test('validatePolicy: priority is optional; when given an integer in [-1000000, 1000000]', async (t) => {
  for (const p of [0, -1_000_000, 1_000_000, 42]) t.same(paths({ ...OK, priority: p }), [], String(p))
  t.same(paths({ ...OK, priority: 1.5 }), ['priority: must be an integer'])
  t.same(paths({ ...OK, priority: '5' }), ['priority: must be an integer'])
  t.same(paths({ ...OK, priority: null }), ['priority: must be an integer'])
  t.same(paths({ ...OK, priority: Number.NaN }), ['priority: must be an integer'])
  t.same(paths({ ...OK, priority: 1_000_001 }), ['priority: must be between -1000000 and 1000000'])
  t.same(paths({ ...OK, priority: -1_000_001 }), ['priority: must be between -1000000 and 1000000'])
})

t.test('validatePolicy: is_active is optional; when given a boolean', async (t) => {
  t.same(paths({ ...OK, is_active: true }), [])
  t.same(paths({ ...OK, is_active: false }), [])
  for (const v of ['yes', 1, null]) t.same(paths({ ...OK, is_active: v }), ['is_active: must be true or false'], String(v))
})

t.test('validatePolicy: scope_type is one of ORG, TEAM, DEPLOYMENT, ENDPOINT, USER in any case; absent or null means ORG', async (t) => {
  for (const s of ['ORG', 'TEAM', 'DEPLOYMENT', 'ENDPOINT', 'USER', 'org', 'Team', null]) t.same(paths({ ...OK, scope_type: s, scope_id: 'x' }), [], String(s))
  for (const s of ['PLANET', '', 5, 'ORGS']) t.same(paths({ ...OK, scope_type: s }), [`scope_type: must be one of: ${SCOPES}`], JSON.stringify(s))
})

t.test('validatePolicy: scope_id is optional; when given a string', async (t) => {
  t.same(paths({ ...OK, scope_id: 'team-a' }), [])
  t.same(paths({ ...OK, scope_id: 3 }), ['scope_id: must be a string'])
  t.same(paths({ ...OK, scope_id: null }), ['scope_id: must be a string'])
})

t.test('validatePolicy: every problem is reported, envelope first in field order, then the config', async (t) => {
  t.same(paths({ id: 7, name: '', type: 'tool_permission', enforcement: 'loud', priority: 1.5, is_active: 'yes', scope_type: 'PLANET', scope_id: 3, config: { allowed_tools: [1] } }), [
    'id: must be a string',
    'name: must not be empty',
    'enforcement: must be one of: enforce, audit, disabled',
    'priority: must be an integer',
    'is_active: must be true or false',
    `scope_type: must be one of: ${SCOPES}`,
    'scope_id: must be a string',
    'config.allowed_tools[0]: must be a string'
  ])
})

t.test('isPolicyType: the eight type names, nothing else', async (t) => {
  for (const type of POLICY_TYPES) t.ok(isPolicyType(type), type)
  t.equal(POLICY_TYPES.length, 8)
  for (const v of ['nope', 'RATE_LIMIT', '', 'toString', '__proto__', 5, null, undefined]) t.notOk(isPolicyType(v), String(v))
})

t.test('policyTypeDef: the definition of a known type; an unknown type throws naming it', async (t) => {
  t.equal(policyTypeDef('budget_limit').type, 'budget_limit')
  t.throws(() => policyTypeDef('nope'), { message: 'unknown policy type "nope"' })
})

t.test('policyLogic: an unknown type throws naming it', async (t) => {
  t.throws(() => policyLogic({ id: 'x', type: 'nope', config: {} }), { message: 'unknown policy type "nope"' })
})

t.test('policyLogic: custom is an "if" whose fail branch is the message', async (t) => {
  const rule = { '>': [{ var: 'tokens' }, 5] }
  t.same(policyLogic({ id: 'x', type: 'custom', config: { deny_if: rule, message: 'big' } }), { if: [rule, 'big', null] })
  t.same(policyLogic({ id: 'x', type: 'custom', config: { deny_if: rule } }), { if: [rule, 'deny_if rule matched', null] })
  t.same(policyLogic({ id: 'x', type: 'custom', config: { allow_if: rule, message: 'small only' } }), { if: [rule, null, 'small only'] })
  t.same(policyLogic({ id: 'x', type: 'custom', config: { allow_if: rule } }), { if: [rule, null, 'allow_if rule not satisfied'] })
})

t.test('policyLogic: rate_limit keys its counters by policy id and agent or user, one check per limit', async (t) => {
  t.same(policyLogic({ id: 'P', type: 'rate_limit', config: { requests_per_minute: 10 } }), {
    if: [{ rate_exceeded: ['P|agent:', { var: 'agent.id' }, 'minute', 10, 1] }, 'more than 10 requests per minute per agent', null]
  })
  t.same(policyLogic({ id: 'P', type: 'rate_limit', config: { tokens_per_day: 500, per: 'user', actions: ['llm_*'] } }), {
    if: [
      { glob: [{ var: 'action' }, ['llm_*']] },
      { if: [{ rate_exceeded: ['P|user:', { var: 'user_id' }, 'day', 500, { var: 'tokens' }] }, 'more than 500 tokens per day per user', null] },
      null
    ]
  }, 'actions wrap the checks; tokens_per_day adds the tokens')
  const two = policyLogic({ id: 'P', type: 'rate_limit', config: { requests_per_minute: 1, requests_per_hour: 2 } }) as { reduce: unknown[] }
  t.same(two.reduce[1], { or: [{ var: 'accumulator' }, { var: 'current' }] }, 'several limits: every check is evaluated, the first failure kept')
  t.equal((two.reduce[0] as unknown[]).length, 2)
  t.equal(two.reduce[2], null)
})

t.test('policyLogic: budget_limit reads the ledger for the agent, user or tenant', async (t) => {
  t.same(policyLogic({ id: 'B', type: 'budget_limit', config: { max_cost_usd: 5 } }), {
    if: [{ budget_reached: ['agent', { var: 'agent.id' }, 'month', 5] }, 'budget of $5 per month for the agent is spent', null]
  })
  t.same(policyLogic({ id: 'B', type: 'budget_limit', config: { max_cost_usd: 1, per: 'user', period: 'day' } }), {
    if: [{ budget_reached: ['user', { var: 'user_id' }, 'day', 1] }, 'budget of $1 per day for the user is spent', null]
  })
  t.same(policyLogic({ id: 'B', type: 'budget_limit', config: { max_cost_usd: 9, per: 'tenant' } }), {
    if: [{ budget_reached: ['tenant', '*', 'month', 9] }, 'budget of $9 per month for the tenant is spent', null]
  })
})

t.test('policyLogic: network_policy is one network_violation over the three URL fields', async (t) => {
  const urls = [{ var: 'context.url' }, { var: 'tool_input.url' }, { var: 'tool_input.urls' }]
  t.same(policyLogic({ id: 'N', type: 'network_policy', config: { allowed_domains: ['a.com'] } }), { network_violation: [urls, ['a.com'], null] })
  t.same(policyLogic({ id: 'N', type: 'network_policy', config: { denied_domains: ['b.com'] } }), { network_violation: [urls, null, ['b.com']] })
})

t.test('policyLogic: content_filter is null with nothing to check, one check, or an "or" of two', async (t) => {
  t.equal(policyLogic({ id: 'C', type: 'content_filter', config: { deny_patterns: [], pii: [] } }), null)
  t.same(policyLogic({ id: 'C', type: 'content_filter', config: { pii: ['email'] } }), {
    if: [{ pii: [{ var: 'text' }, ['email']] }, { cat: ['text contains PII (', { pii: [{ var: 'text' }, ['email']] }, ')'] }, null]
  })
  const both = policyLogic({ id: 'C', type: 'content_filter', config: { deny_patterns: ['x'], pii: ['email'] } }) as { or: unknown[] }
  t.equal(both.or.length, 2)
})

t.test('policyLogic: tool_permission, model_restriction and human_oversight are guarded by the action or subject', async (t) => {
  const tp = policyLogic({ id: 'T', type: 'tool_permission', config: { allowed_tools: ['a'] } }) as { if: unknown[] }
  t.same(tp.if[0], { in: [{ var: 'action' }, ['tool_call', 'tool.invoked', 'tool_use']] })
  const mr = policyLogic({ id: 'M', type: 'model_restriction', config: { max_tokens: 5 } }) as { if: unknown[] }
  t.same(mr.if[0], { in: [{ var: 'action' }, ['llm_call', 'llm.invoke', 'llm_invoke', 'chat']] })
  const ho = policyLogic({ id: 'H', type: 'human_oversight', config: { require_approval_for: ['x'] } }) as { if: unknown[] }
  t.same(ho.if[0], { or: [{ glob: [{ var: 'action' }, ['x']] }, { glob: [{ var: 'tool' }, ['x']] }] })
})

t.test('policyLogic: every type is plain JSON and, compiled on its own, decides as the policy set does', async (t) => {
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
    ['tool_permission', { allowed_tools: ['search'] }, { action: 'tool_call', context: { tool: 'shell' } }, 'tool "shell" is not in allowed_tools'],
    ['model_restriction', { max_tokens: 5 }, { action: 'chat', context: { tokens: 6 } }, '6 tokens requested, more than max_tokens 5'],
    ['content_filter', { deny_patterns: ['bad'] }, { action: 'chat', context: { prompt: 'bad' } }, 'text matches denied pattern bad'],
    ['network_policy', { denied_domains: ['evil.com'] }, { action: 'x', context: { url: 'https://evil.com' } }, 'host evil.com is denied (evil.com)'],
    ['human_oversight', { require_approval_for: ['deploy'] }, { action: 'deploy' }, 'action "deploy" requires human approval: context.approval_id must name an approved, unused approval'],
    ['custom', { deny_if: { '==': [{ var: 'user_id' }, 'eve'] }, message: 'not eve' }, { action: 'chat', user_id: 'eve' }, 'not eve']
  ]
  for (const [type, config, body, message] of cases) {
    const policy: PolicyInput = { id: 'id', name: 'n', type, config }
    const logic = policyLogic(policy)
    t.same(JSON.parse(JSON.stringify(logic)), logic, `${type}: survives a JSON round trip`)
    const input = buildInputV1(body, AGENT, T0)
    t.equal(compileRule(logic)(input), message, `${type}: the rule alone gives the message`)
    t.equal(compilePolicySet([policy]).evaluate(input).reason, `n: ${message}`, `${type}: the policy set gives the same`)
  }
})
