/**
 * custom (policy-types.md): deny_if or allow_if, a JSON-logic rule over the input document, and an
 * optional message. Fails when deny_if is truthy or allow_if is falsy (json-logic-js truthiness).
 * Rules that do not compile are refused at save time with the path inside the rule.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'langchain', capabilities: ['chat'], metadata: { tier: 'gold' }, deployment_id: 'eu-prod', team: 'support' }
const SUNDAY_10H = Date.UTC(2026, 10, 22, 10, 0, 0) // Sunday 22 Nov 2026, 10:00 UTC

const custom = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'c-id', name: 'rule', type: 'custom', config, ...extra })

const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'custom', config }).map((e) => `${e.path}: ${e.message}`)

const v1 = (context: Record<string, unknown> = {}, action = 'chat', user: string | null = 'u1', now = SUNDAY_10H) =>
  buildInputV1({ agent_id: AGENT.id, action, user_id: user, context }, AGENT, now)

/** A rule of `depth` nested objects: {"!": {"!": ... true}}. */
function nested (depth: number): unknown {
  let rule: unknown = true
  for (let i = 0; i < depth; i++) rule = { '!': rule }
  return rule
}

t.test('custom validation: accepts deny_if or allow_if, with or without a message, using the engine operations', async (t) => {
  t.same(errors({ deny_if: { '>': [{ var: 'tokens' }, 1000] } }), [])
  t.same(errors({ allow_if: { in: [{ var: 'agent.team' }, ['support', 'sales']] }, message: 'support and sales only' }), [])
  t.same(errors({ deny_if: { or: [{ glob: [{ var: 'tool' }, ['rm_*']] }, { regex_match: [{ var: 'text' }, ['(?i)drop table']] }, { pii: [{ var: 'text' }, ['email']] }] } }), [])
  t.same(errors({ deny_if: false }), [], 'a constant is a rule')
  t.same(errors({ allow_if: null }), [], 'null is a rule too (always falsy)')
})

t.test('custom validation: exactly one of deny_if and allow_if', async (t) => {
  t.same(errors({}), ['config: needs exactly one of deny_if, allow_if'])
  t.same(errors({ message: 'x' }), ['config: needs exactly one of deny_if, allow_if'])
  t.same(errors({ deny_if: true, allow_if: true }), ['config: needs exactly one of deny_if, allow_if'])
})

t.test('custom validation: a rule that does not compile is named down to the offending operation', async (t) => {
  t.same(errors({ deny_if: { and: [true, { frob: [1] }] } }), ['config.deny_if.and[1].frob: unknown operation "frob"'])
  t.same(errors({ allow_if: { if: [true, { nope: [] }, false] } }), ['config.allow_if.if[1].nope: unknown operation "nope"'])
  t.same(errors({ deny_if: { method: [{ var: 'text' }, 'toUpperCase'] } }), ['config.deny_if.method: operation "method" is not allowed: it calls arbitrary methods'])
  t.same(errors({ deny_if: { var: 'agent.__proto__.x' } }), ['config.deny_if.var: path segment "__proto__" is not allowed'])
  t.same(errors({ deny_if: { var: 'agent.constructor' } }), ['config.deny_if.var: path segment "constructor" is not allowed'])
  t.same(errors({ deny_if: { var: 'prototype' } }), ['config.deny_if.var: path segment "prototype" is not allowed'])
})

t.test('custom validation: the engine operations check their constant arguments at save time', async (t) => {
  t.same(errors({ deny_if: { regex_match: [{ var: 'text' }, { var: 'context.patterns' }] } }), ['config.deny_if.regex_match: regex_match: patterns must be written in the rule, not computed'])
  t.same(errors({ deny_if: { regex_match: [{ var: 'text' }, ['(a+)+$']] } }), ['config.deny_if.regex_match: unsafe regular expression "(a+)+$": nested quantifier (a repeated group that itself repeats)'])
  t.same(errors({ deny_if: { glob: [{ var: 'tool' }, 5] } }), ['config.deny_if.glob: glob: patterns must be a string or a list of strings'])
  t.same(errors({ deny_if: { pii: [{ var: 'text' }, ['iban']] } }), ['config.deny_if.pii: pii: unknown kind "iban"'])
  t.same(errors({ deny_if: { rate_exceeded: ['k', 'week', 1, 1] } }), ['config.deny_if.rate_exceeded: rate_exceeded: window must be "minute", "hour" or "day"'])
})

t.test('custom validation: hostile rules (too deep, too large, not JSON, unreadable) are refused at the rule path', async (t) => {
  t.same(errors({ deny_if: nested(64) }), [], '64 levels is the limit')
  t.same(errors({ deny_if: nested(65) }), ['config.deny_if: rule is nested deeper than 64 levels'])
  t.same(errors({ deny_if: { in: [{ var: 'text' }, ['x'.repeat(70_000)]] } }), ['config.deny_if: rule is larger than 65536 bytes of JSON'])
  t.same(errors({ allow_if: { '==': [() => 1, 1] } }), ['config.allow_if: rule holds a function, which is not JSON'])
  const unreadable = { get '=='  (): unknown { throw new Error('cannot read this rule') } }
  t.same(errors({ deny_if: unreadable }), ['config.deny_if: cannot read this rule'], 'an error that is not a compile error still names the rule path')
})

t.test('custom validation: message must be a non-empty string; unknown fields and non-objects are refused', async (t) => {
  t.same(errors({ deny_if: true, message: '' }), ['config.message: must not be empty'])
  t.same(errors({ deny_if: true, message: 5 }), ['config.message: must be a string'])
  t.same(errors({ deny_if: true, reason: 'x' }), ['config.reason: unknown field (expected one of: deny_if, allow_if, message)'])
  t.same(errors('{"deny_if": true}'), ['config: must be an object'], 'a JSON string is not a config')
  t.same(errors(null), ['config: must be an object'])
})

t.test('custom decision: deny_if truthy fails with its message or a default; falsy passes', async (t) => {
  const set = compilePolicySet([custom({ deny_if: { '>': [{ var: 'tokens' }, 100] }, message: 'too many tokens' })])
  t.same(set.evaluate(v1({ tokens: 100 })).policies_evaluated, [{ id: 'c-id', name: 'rule', type: 'custom', result: 'pass', message: null }])
  const d = set.evaluate(v1({ tokens: 101 }))
  t.equal(d.allowed, false)
  t.equal(d.reason, 'rule: too many tokens')
  t.same(d.policies_evaluated, [{ id: 'c-id', name: 'rule', type: 'custom', result: 'fail', message: 'too many tokens' }])
  t.equal(compilePolicySet([custom({ deny_if: true })]).evaluate(v1()).reason, 'rule: deny_if rule matched', 'default message')
})

t.test('custom decision: allow_if falsy fails with its message or a default; truthy passes', async (t) => {
  const set = compilePolicySet([custom({ allow_if: { '==': [{ var: 'agent.team' }, 'support'] }, message: 'support only' })])
  t.equal(set.evaluate(v1()).allowed, true)
  const other = compilePolicySet([custom({ allow_if: { '==': [{ var: 'agent.team' }, 'sales'] }, message: 'sales only' })])
  t.equal(other.evaluate(v1()).reason, 'rule: sales only')
  t.equal(compilePolicySet([custom({ allow_if: false })]).evaluate(v1()).reason, 'rule: allow_if rule not satisfied', 'default message')
})

t.test('custom decision: truthiness is json-logic-js\'s (an empty list is falsy, "0" is truthy)', async (t) => {
  const deny = compilePolicySet([custom({ deny_if: { var: 'context.value' } })])
  const denied = (value: unknown): boolean => !deny.evaluate(v1({ value })).allowed
  t.equal(denied([]), false, '[] is falsy')
  t.equal(denied([0]), true, '[0] is truthy')
  t.equal(denied('0'), true, '"0" is truthy')
  t.equal(denied(''), false, '"" is falsy')
  t.equal(denied(0), false, '0 is falsy')
  t.equal(denied({}), true, '{} is truthy')
  t.equal(denied(null), false, 'null is falsy')
  t.equal(denied(undefined), false, 'a missing value is falsy')
  const allow = compilePolicySet([custom({ allow_if: { var: 'context.value' } })])
  t.equal(allow.evaluate(v1({ value: [] })).allowed, false, 'allow_if of [] fails')
})

t.test('custom decision: rules read every field of the input document', async (t) => {
  const check = (rule: unknown, input = v1()): boolean => compilePolicySet([custom({ deny_if: rule })]).evaluate(input).allowed
  t.notOk(check({ '==': [{ var: 'agent.id' }, 'bot-1'] }), 'agent.id')
  t.notOk(check({ '==': [{ var: 'agent.type' }, 'langchain'] }), 'agent.type')
  t.notOk(check({ in: ['chat', { var: 'agent.capabilities' }] }), 'agent.capabilities')
  t.notOk(check({ '==': [{ var: 'agent.metadata.tier' }, 'gold'] }), 'agent.metadata')
  t.notOk(check({ '==': [{ var: 'agent.deployment_id' }, 'eu-prod'] }), 'agent.deployment_id')
  t.notOk(check({ '==': [{ var: 'user_id' }, 'u1'] }), 'user_id')
  t.notOk(check({ '==': [{ var: 'action' }, 'chat'] }), 'action')
  t.notOk(check({ '==': [{ var: 'model' }, 'gpt-4o'] }, v1({ model: 'gpt-4o' })), 'model')
  t.notOk(check({ '==': [{ var: 'tool' }, 'calc'] }, v1({ tool_name: 'calc' })), 'tool (v1 tool_name)')
  t.notOk(check({ '==': [{ var: 'tool_input.x' }, 1] }, v1({ tool_input: { x: 1 } })), 'tool_input')
  t.notOk(check({ '==': [{ var: 'tokens' }, 7] }, v1({ tokens_requested: 7 })), 'tokens')
  t.notOk(check({ in: ['world', { var: 'text' }] }, v1({ prompt: 'hello', input: 'world' })), 'text')
  t.notOk(check({ '==': [{ var: 'context.session' }, 's-1'] }, v1({ session: 's-1' })), 'context')
  t.notOk(check({ and: [{ '==': [{ var: 'now.weekday' }, 'sunday'] }, { '==': [{ var: 'now.hour' }, 10] }] }), 'now (UTC hour and weekday of the injected time)')
  t.ok(check({ '==': [{ var: 'now.weekday' }, 'sunday'] }, v1({}, 'chat', 'u1', SUNDAY_10H + 24 * 3_600_000)), 'Monday is not Sunday')
  t.notOk(check({ '==': [{ var: 'now.iso' }, '2026-11-22T10:00:00.000Z'] }), 'now.iso')
})

t.test('custom decision: legacy bodies feed the same document fields', async (t) => {
  const set = compilePolicySet([custom({
    deny_if: { and: [{ '==': [{ var: 'action' }, 'llm.invoke'] }, { '==': [{ var: 'model' }, 'gpt-4o'] }, { '==': [{ var: 'user_id' }, 'alice'] }, { '>': [{ var: 'tokens' }, 10] }, { in: ['hi', { var: 'text' }] }] },
    message: 'legacy fields'
  })])
  const body = { request_type: 'llm.invoke', model: 'gpt-4o', tokens_requested: 11, messages: [{ role: 'user', content: 'hi there' }], context: { user_id: 'alice' } }
  t.equal(set.evaluate(buildInputLegacy(body, AGENT, SUNDAY_10H)).reason, 'rule: legacy fields')
  t.equal(set.evaluate(buildInputLegacy({ ...body, tokens_requested: 10 }, AGENT, SUNDAY_10H)).allowed, true)
})

t.test('custom decision: a rule that throws while evaluating fails closed with "policy error:" and is reported', async (t) => {
  const reported: string[] = []
  const set = compilePolicySet([custom({ deny_if: { var: { cat: ['context.', { var: 'context.key' }] } } })], {
    onError: (p, err) => reported.push(`${p.name}: ${err.message}`)
  })
  t.equal(set.evaluate(v1({ key: 'ok' })).allowed, true, 'a computed path that is fine')
  const d = set.evaluate(v1({ key: '__proto__' }))
  t.equal(d.allowed, false)
  t.equal(d.reason, 'rule: policy error: var: path segment "__proto__" is not allowed')
  t.same(d.policies_evaluated, [{ id: 'c-id', name: 'rule', type: 'custom', result: 'fail', message: 'policy error: var: path segment "__proto__" is not allowed' }])
  t.same(reported, ['rule: var: path segment "__proto__" is not allowed'])
})

t.test('custom in audit mode: a failure is a warning "[audit] name: message" and the request is allowed', async (t) => {
  const d = compilePolicySet([custom({ deny_if: true, message: 'watch this' }, { enforcement: 'audit', name: 'watcher' })]).evaluate(v1())
  t.same(d, {
    allowed: true,
    reason: null,
    policies_evaluated: [{ id: 'c-id', name: 'watcher', type: 'custom', result: 'fail', message: 'watch this' }],
    warnings: ['[audit] watcher: watch this'],
    restrictions: {}
  })
})
