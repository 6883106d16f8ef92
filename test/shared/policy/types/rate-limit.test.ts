/**
 * rate_limit (policy-types.md): requests_per_minute, requests_per_hour, tokens_per_day; per agent or
 * user; actions globs. Fails when the sliding-window count, this request included, exceeds a limit;
 * counts are written only when the whole decision allows.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput, type PolicySetOptions } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'
import { MemoryRateCounters } from '../../../../shared/policy/counters.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const OTHER: AgentInfo = { ...AGENT, id: 'bot-2' }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)
const SEC = 1000
const MIN = 60 * SEC
const HOUR = 60 * MIN

const rl = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'rl-id', name: 'rl', type: 'rate_limit', config, ...extra })

/** validatePolicy's errors for a rate_limit config, as "path: message". */
const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'rate_limit', config }).map((e) => `${e.path}: ${e.message}`)

const v1 = (action = 'llm_call', context: Record<string, unknown> = {}, user: string | null = 'u1', agent = AGENT) =>
  buildInputV1({ agent_id: agent.id, action, user_id: user, context }, agent, T0)

/** A clock the test moves. */
function clock (start = T0): { now: () => number, set: (ms: number) => void } {
  let ms = start
  return { now: () => ms, set: (v) => { ms = v } }
}

t.test('rate_limit validation: accepts each limit alone and every field together', async (t) => {
  t.same(errors({ requests_per_minute: 1 }), [])
  t.same(errors({ requests_per_hour: 100 }), [])
  t.same(errors({ tokens_per_day: 1_000_000 }), [])
  t.same(errors({ requests_per_minute: 10, requests_per_hour: 100, tokens_per_day: 5000, per: 'user', actions: ['llm_*', 'tool_call'] }), [])
  t.same(errors({ requests_per_minute: 10, per: 'agent' }), [])
})

t.test('rate_limit validation: a config without any limit is refused at "config"', async (t) => {
  const need = 'config: needs at least one of requests_per_minute, requests_per_hour, tokens_per_day'
  t.same(errors({}), [need])
  t.same(errors({ per: 'user', actions: ['chat'] }), [need])
})

t.test('rate_limit validation: every limit must be an integer >= 1, named by its path', async (t) => {
  for (const field of ['requests_per_minute', 'requests_per_hour', 'tokens_per_day']) {
    t.same(errors({ [field]: 0 }), [`config.${field}: must be between 1 and 9007199254740991`], `${field} 0`)
    t.same(errors({ [field]: -5 }), [`config.${field}: must be between 1 and 9007199254740991`], `${field} negative`)
    t.same(errors({ [field]: 2.5 }), [`config.${field}: must be an integer`], `${field} fraction`)
    t.same(errors({ [field]: '10' }), [`config.${field}: must be an integer`], `${field} string`)
    t.same(errors({ [field]: true }), [`config.${field}: must be an integer`], `${field} boolean`)
    t.same(errors({ [field]: null }), [`config.${field}: must be an integer`], `${field} null`)
    t.same(errors({ [field]: Number.POSITIVE_INFINITY }), [`config.${field}: must be an integer`], `${field} Infinity`)
  }
  t.same(errors({ requests_per_minute: 2 ** 53 }), ['config.requests_per_minute: must be between 1 and 9007199254740991'], 'beyond the safe integers')
})

t.test('rate_limit validation: per must be agent or user; actions a non-empty list of non-empty strings', async (t) => {
  t.same(errors({ requests_per_minute: 1, per: 'team' }), ['config.per: must be one of: agent, user'])
  t.same(errors({ requests_per_minute: 1, per: 'tenant' }), ['config.per: must be one of: agent, user'], 'tenant is a budget_limit subject, not a rate_limit one')
  t.same(errors({ requests_per_minute: 1, per: 5 }), ['config.per: must be one of: agent, user'])
  t.same(errors({ requests_per_minute: 1, actions: [] }), ['config.actions: must not be empty'])
  t.same(errors({ requests_per_minute: 1, actions: 'chat' }), ['config.actions: must be a list of strings'])
  t.same(errors({ requests_per_minute: 1, actions: ['chat', 3, ' '] }), ['config.actions[1]: must be a string', 'config.actions[2]: must not be empty'])
})

t.test('rate_limit validation: unknown fields and a config that is not an object are refused', async (t) => {
  t.same(errors({ requests_per_minute: 1, burst: 2 }), ['config.burst: unknown field (expected one of: requests_per_minute, requests_per_hour, tokens_per_day, per, actions)'])
  t.same(errors({ requests_per_second: 1 }), [
    'config.requests_per_second: unknown field (expected one of: requests_per_minute, requests_per_hour, tokens_per_day, per, actions)',
    'config: needs at least one of requests_per_minute, requests_per_hour, tokens_per_day'
  ], 'a misspelt limit is both unknown and leaves no limit')
  t.same(errors(null), ['config: must be an object'])
  t.same(errors([{ requests_per_minute: 1 }]), ['config: must be an object'])
  t.same(errors('10/min'), ['config: must be an object'])
})

t.test('rate_limit decision: requests up to the limit pass, the one that exceeds it fails with the limit named', async (t) => {
  const set = compilePolicySet([rl({ requests_per_minute: 2 })], { now: () => T0 })
  const first = set.evaluate(v1())
  t.same(first, {
    allowed: true,
    reason: null,
    policies_evaluated: [{ id: 'rl-id', name: 'rl', type: 'rate_limit', result: 'pass', message: null }],
    warnings: [],
    restrictions: {}
  }, '1st request: allowed')
  t.equal(set.evaluate(v1()).allowed, true, '2nd request: the count (2) reaches but does not exceed the limit')
  const third = set.evaluate(v1())
  t.equal(third.allowed, false, '3rd request: the count with it (3) exceeds 2')
  t.equal(third.reason, 'rl: more than 2 requests per minute per agent')
  t.same(third.policies_evaluated, [{ id: 'rl-id', name: 'rl', type: 'rate_limit', result: 'fail', message: 'more than 2 requests per minute per agent' }])
  t.equal(set.evaluate(v1()).allowed, false, 'still over: blocked requests do not free the window')
})

t.test('rate_limit decision: the minute window slides (not a fixed window that resets on the minute)', async (t) => {
  const c = clock()
  const set = compilePolicySet([rl({ requests_per_minute: 2 })], { now: c.now })
  t.equal(set.evaluate(v1()).allowed, true, 't=0s')
  c.set(T0 + 30 * SEC)
  t.equal(set.evaluate(v1()).allowed, true, 't=30s')
  c.set(T0 + 45 * SEC)
  t.equal(set.evaluate(v1()).allowed, false, 't=45s: 3 in the last minute')
  c.set(T0 + 61 * SEC)
  t.equal(set.evaluate(v1()).allowed, true, 't=61s: the t=0 request has left the window, the t=30s one has not')
  c.set(T0 + 62 * SEC)
  t.equal(set.evaluate(v1()).allowed, false, 't=62s: t=30s and t=61s are in the window, a third exceeds 2 (a fixed window would allow it)')
  c.set(T0 + 91 * SEC)
  t.equal(set.evaluate(v1()).allowed, true, 't=91s: only t=61s is left')
  c.set(T0 + 10 * MIN)
  t.equal(set.evaluate(v1()).allowed, true, 'after a long pause the window is empty')
  t.equal(set.evaluate(v1()).allowed, true)
  t.equal(set.evaluate(v1()).allowed, false)
})

t.test('rate_limit decision: requests_per_hour counts over a sliding hour', async (t) => {
  const c = clock()
  const set = compilePolicySet([rl({ requests_per_hour: 1 })], { now: c.now })
  t.equal(set.evaluate(v1()).allowed, true)
  c.set(T0 + 59 * MIN)
  const d = set.evaluate(v1())
  t.equal(d.allowed, false, '59 minutes later the first request still counts')
  t.equal(d.reason, 'rl: more than 1 requests per hour per agent')
  c.set(T0 + HOUR)
  t.equal(set.evaluate(v1()).allowed, true, 'an hour later it has left the window')
})

t.test('rate_limit decision: tokens_per_day adds the tokens asked for (v1 tokens, tokens_requested, legacy tokens_requested)', async (t) => {
  const set = compilePolicySet([rl({ tokens_per_day: 1000 })], { now: () => T0 })
  t.equal(set.evaluate(v1('llm_call', { tokens: 400 })).allowed, true, '400')
  t.equal(set.evaluate(v1('llm_call', { tokens_requested: 300 })).allowed, true, '700 (v1 tokens_requested)')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', tokens_requested: 300 }, AGENT, T0)).allowed, true, '1000 (legacy): reaches, does not exceed')
  const over = set.evaluate(v1('llm_call', { tokens: 1 }))
  t.equal(over.allowed, false, '1001 exceeds 1000')
  t.equal(over.reason, 'rl: more than 1000 tokens per day per agent')
  t.equal(set.evaluate(v1('llm_call', {})).allowed, true, 'a request that asks for no tokens adds nothing and passes at the limit')
})

t.test('rate_limit decision: one request asking for more tokens than the daily limit fails on its own', async (t) => {
  const rates = new MemoryRateCounters()
  const set = compilePolicySet([rl({ tokens_per_day: 100 })], { now: () => T0, rates })
  t.equal(set.evaluate(v1('llm_call', { tokens: 101 })).allowed, false)
  t.equal(rates.size, 0, 'the refused tokens were not counted')
  t.equal(set.evaluate(v1('llm_call', { tokens: 100 })).allowed, true, 'the full budget is still there')
})

t.test('rate_limit decision: the day window slides over 24 hours', async (t) => {
  const c = clock()
  const set = compilePolicySet([rl({ tokens_per_day: 100 })], { now: c.now })
  t.equal(set.evaluate(v1('llm_call', { tokens: 100 })).allowed, true)
  c.set(T0 + 23 * HOUR)
  t.equal(set.evaluate(v1('llm_call', { tokens: 1 })).allowed, false, '23 hours later the 100 tokens still count')
  c.set(T0 + 24 * HOUR)
  t.equal(set.evaluate(v1('llm_call', { tokens: 100 })).allowed, true, '24 hours later they have left the window')
})

t.test('rate_limit decision: several limits in one policy; the first exceeded (minute, hour, day) is the message', async (t) => {
  const rates = new MemoryRateCounters()
  const set = compilePolicySet([rl({ requests_per_minute: 5, requests_per_hour: 2, tokens_per_day: 50 })], { now: () => T0, rates })
  t.equal(set.evaluate(v1('llm_call', { tokens: 60 })).reason, 'rl: more than 50 tokens per day per agent', 'only the token limit is exceeded')
  t.equal(set.evaluate(v1('llm_call', { tokens: 10 })).allowed, true, 'the refused request counted toward no window')
  t.equal(set.evaluate(v1('llm_call', { tokens: 10 })).allowed, true)
  const third = set.evaluate(v1('llm_call', { tokens: 60 }))
  t.equal(third.reason, 'rl: more than 2 requests per hour per agent', 'hour and day both exceeded: the hour, listed first, is named')
  const tight = compilePolicySet([rl({ requests_per_minute: 1, requests_per_hour: 1 })], { now: () => T0 })
  tight.evaluate(v1())
  t.equal(tight.evaluate(v1()).reason, 'rl: more than 1 requests per minute per agent', 'minute is named before hour')
})

t.test('rate_limit decision: per agent (default) keeps one count per agent', async (t) => {
  const rates = new MemoryRateCounters()
  const mine = compilePolicySet([rl({ requests_per_minute: 1 })], { now: () => T0, rates })
  const theirs = compilePolicySet([rl({ requests_per_minute: 1 })], { now: () => T0, rates })
  t.equal(mine.evaluate(v1('chat', {}, 'u1')).allowed, true)
  t.equal(mine.evaluate(v1('chat', {}, 'u2')).allowed, false, 'another user of the same agent shares the agent count')
  t.equal(theirs.evaluate(v1('chat', {}, 'u1', OTHER)).allowed, true, 'another agent has its own count in the same store')
})

t.test('rate_limit decision: per user keeps one count per user_id', async (t) => {
  const set = compilePolicySet([rl({ requests_per_minute: 1, per: 'user' })], { now: () => T0 })
  t.equal(set.evaluate(v1('chat', {}, 'alice')).allowed, true)
  const d = set.evaluate(v1('chat', {}, 'alice'))
  t.equal(d.allowed, false, 'alice is over her limit')
  t.equal(d.reason, 'rl: more than 1 requests per minute per user')
  t.equal(set.evaluate(v1('chat', {}, 'bob')).allowed, true, 'bob has his own count')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', context: { user_id: 'carol' } }, AGENT, T0)).allowed, true, 'legacy: context.user_id is the user')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', context: { user_id: 'carol' } }, AGENT, T0)).allowed, false)
})

t.test('rate_limit decision: actions limits only the matching actions, by glob', async (t) => {
  const set = compilePolicySet([rl({ requests_per_minute: 1, actions: ['tool_*', 'llm.invoke'] })], { now: () => T0 })
  t.equal(set.evaluate(v1('tool_call')).allowed, true)
  t.equal(set.evaluate(v1('tool_use')).allowed, false, 'tool_use matches tool_* and shares the count')
  t.equal(set.evaluate(v1('chat')).allowed, true, 'chat is not listed: not limited')
  t.equal(set.evaluate(v1('chat')).allowed, true, 'and not counted')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke' }, AGENT, T0)).allowed, false, 'a legacy request_type is the action')
  t.equal(set.evaluate(v1('TOOL_CALL')).allowed, true, 'globs are case-sensitive')
})

t.test('rate_limit decision: without actions every action is limited, including an empty one', async (t) => {
  const set = compilePolicySet([rl({ requests_per_minute: 2 })], { now: () => T0 })
  t.equal(set.evaluate(v1('chat')).allowed, true)
  t.equal(set.evaluate(buildInputV1({ context: {} }, AGENT, T0)).allowed, true, 'a body with no action')
  t.equal(set.evaluate(v1('anything')).allowed, false)
})

t.test('rate_limit counters: a request blocked by another policy is not counted', async (t) => {
  const rates = new MemoryRateCounters()
  const set = compilePolicySet([
    rl({ requests_per_minute: 1 }),
    { id: 'deny-id', name: 'deny', type: 'custom', config: { deny_if: { '==': [{ var: 'context.block' }, true] }, message: 'blocked' } }
  ], { now: () => T0, rates })
  const blocked = set.evaluate(v1('chat', { block: true }))
  t.equal(blocked.allowed, false)
  t.equal(blocked.reason, 'deny: blocked')
  t.same(blocked.policies_evaluated.map((p) => [p.name, p.result]), [['deny', 'fail'], ['rl', 'pass']], 'the rate limit itself passed')
  t.equal(rates.size, 0, 'nothing was written to the counters')
  t.equal(set.evaluate(v1('chat')).allowed, true, 'the next request is the first to count')
  t.equal(set.evaluate(v1('chat')).allowed, false)
})

t.test('rate_limit counters: in audit mode an exceeded limit warns, allows, and the request is counted', async (t) => {
  const rates = new MemoryRateCounters()
  const set = compilePolicySet([rl({ requests_per_minute: 1 }, { enforcement: 'audit' })], { now: () => T0, rates })
  t.equal(set.evaluate(v1()).allowed, true)
  const d = set.evaluate(v1())
  t.equal(d.allowed, true, 'audit never blocks')
  t.equal(d.reason, null)
  t.same(d.warnings, ['[audit] rl: more than 1 requests per minute per agent'])
  t.equal(d.policies_evaluated[0]?.result, 'fail')
  t.equal(set.evaluate(v1()).allowed, true)
})

t.test('rate_limit counters: a long-lived store keeps counts across recompiles; counts are per policy id', async (t) => {
  const rates = new MemoryRateCounters()
  const opts: PolicySetOptions = { now: () => T0, rates }
  t.equal(compilePolicySet([rl({ requests_per_minute: 1 })], opts).evaluate(v1()).allowed, true)
  t.equal(compilePolicySet([rl({ requests_per_minute: 1 })], opts).evaluate(v1()).allowed, false, 'the recompiled set sees the earlier request')
  t.equal(compilePolicySet([rl({ requests_per_minute: 1 }, { id: 'another-id' })], opts).evaluate(v1()).allowed, true, 'another policy has its own count')
  const fresh = compilePolicySet([rl({ requests_per_minute: 1 })], { now: () => T0 })
  t.equal(fresh.evaluate(v1()).allowed, true, 'without a store a set counts in its own memory')
  t.equal(fresh.evaluate(v1()).allowed, false)
})

t.test('rate_limit counters: two rate_limit policies both count an allowed request', async (t) => {
  const set = compilePolicySet([rl({ requests_per_minute: 2 }, { id: 'a', name: 'a' }), rl({ requests_per_minute: 3 }, { id: 'b', name: 'b' })], { now: () => T0 })
  set.evaluate(v1())
  set.evaluate(v1())
  const d = set.evaluate(v1())
  t.equal(d.reason, 'a: more than 2 requests per minute per agent')
  t.same(d.policies_evaluated.map((p) => p.result), ['fail', 'pass'], 'b has counted 2 of its 3')
})

t.test('rate_limit counters: a clock that steps back still counts the request', async (t) => {
  const c = clock(T0 + 10 * SEC)
  const set = compilePolicySet([rl({ requests_per_minute: 3 })], { now: c.now })
  t.equal(set.evaluate(v1()).allowed, true, 't=10s')
  c.set(T0 + 5 * SEC)
  t.equal(set.evaluate(v1()).allowed, true, 'the clock stepped back to t=5s')
  c.set(T0 + 10 * SEC)
  t.equal(set.evaluate(v1()).allowed, true, 't=10s: 3rd')
  t.equal(set.evaluate(v1()).allowed, false, 'the stepped-back request was counted: a 4th exceeds 3')
})

t.test('rate_limit counters: a bounded store forgets the least recently written key first', async (t) => {
  const rates = new MemoryRateCounters(2)
  const set = compilePolicySet([rl({ requests_per_minute: 2, per: 'user' })], { now: () => T0, rates })
  const ask = (user: string): boolean => set.evaluate(v1('chat', {}, user)).allowed
  t.ok(ask('a'), 'a: 1')
  t.ok(ask('b'), 'b: 1')
  t.ok(ask('a'), 'a: 2 (a is now the most recently written)')
  t.ok(ask('c'), 'c: 1, the store is full: b is dropped')
  t.equal(rates.size, 2)
  t.notOk(ask('a'), 'a kept its count of 2')
  t.ok(ask('b'), 'b was forgotten: counts from 0 again')
  t.ok(ask('b'))
  t.notOk(ask('b'))
})
