/**
 * Every policy type of policy-types.md: what validation refuses (with the config path), and how the
 * compiled decision allows, blocks, warns and counts.
 */
import t from 'tap'
import {
  buildInputLegacy, buildInputV1, compilePolicySet, validatePolicy, MemoryApprovals, MemoryBudgetLedger,
  MemoryRateCounters, type AgentInfo, type PolicyInput
} from '../../../shared/policy/index.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: { team: 'support', version: '2' }, deployment_id: 'prod', team: 'support' }
const NOW = Date.UTC(2026, 10, 22, 10, 0, 0)

let n = 0
function policy (type: string, config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput {
  n++
  return { id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, name: `${type}-${n}`, type, config, ...extra }
}

function errors (type: string, config: unknown): string[] {
  return validatePolicy({ name: 'p', type, config }).map((e) => `${e.path}: ${e.message}`)
}

const v1 = (action: string, context: Record<string, unknown> = {}, user = 'u1') =>
  buildInputV1({ agent_id: AGENT.id, action, user_id: user, context }, AGENT, NOW)

t.test('rate_limit: validation', async (t) => {
  t.same(errors('rate_limit', { requests_per_minute: 10 }), [])
  t.same(errors('rate_limit', { per: 'user' }), ['config: needs at least one of requests_per_minute, requests_per_hour, tokens_per_day'])
  t.same(errors('rate_limit', { requests_per_minute: 0 }), ['config.requests_per_minute: must be between 1 and 9007199254740991'])
  t.same(errors('rate_limit', { requests_per_hour: 1.5 }), ['config.requests_per_hour: must be an integer'])
  t.same(errors('rate_limit', { tokens_per_day: 5, per: 'team' }), ['config.per: must be one of: agent, user'])
  t.same(errors('rate_limit', { requests_per_minute: 1, actions: [] }), ['config.actions: must not be empty'])
  t.same(errors('rate_limit', { requests_per_minute: 1, burst: 2 }), ['config.burst: unknown field (expected one of: requests_per_minute, requests_per_hour, tokens_per_day, per, actions)'])
  t.same(errors('rate_limit', 'fast'), ['config: must be an object'])
})

t.test('rate_limit: the request that crosses the limit fails; only allowed decisions count; windows slide', async (t) => {
  let now = NOW
  const rates = new MemoryRateCounters()
  const limit = policy('rate_limit', { requests_per_minute: 2 })
  const deny = policy('custom', { deny_if: { '==': [{ var: 'context.block' }, true] }, message: 'blocked' })
  const set = compilePolicySet([limit, deny], { rates, now: () => now })
  t.equal(set.evaluate(v1('chat')).allowed, true, '1st')
  t.equal(set.evaluate(v1('chat', { block: true })).allowed, false, 'a request blocked by another policy')
  t.equal(set.evaluate(v1('chat')).allowed, true, '2nd: the blocked one did not count')
  const third = set.evaluate(v1('chat'))
  t.equal(third.allowed, false, '3rd is over the limit')
  t.match(third.reason, /more than 2 requests per minute per agent/)
  now += 61_000
  t.equal(set.evaluate(v1('chat')).allowed, true, 'a minute later the window has slid')
})

t.test('rate_limit: per user, only the listed actions, and tokens per day', async (t) => {
  const rates = new MemoryRateCounters()
  const perUser = compilePolicySet([policy('rate_limit', { requests_per_hour: 1, per: 'user', actions: ['tool_*'] })], { rates, now: () => NOW })
  t.equal(perUser.evaluate(v1('tool_call', {}, 'alice')).allowed, true)
  t.equal(perUser.evaluate(v1('tool_call', {}, 'alice')).allowed, false, 'alice is over her limit')
  t.equal(perUser.evaluate(v1('tool_call', {}, 'bob')).allowed, true, 'bob has his own count')
  t.equal(perUser.evaluate(v1('llm_call', {}, 'alice')).allowed, true, 'actions outside the globs are not limited')
  const tokens = compilePolicySet([policy('rate_limit', { tokens_per_day: 1000 })], { rates: new MemoryRateCounters(), now: () => NOW })
  t.equal(tokens.evaluate(v1('llm_call', { tokens: 600 })).allowed, true)
  const over = tokens.evaluate(v1('llm_call', { tokens: 600 }))
  t.equal(over.allowed, false, '1,200 tokens in a day is over 1,000')
  t.match(over.reason, /tokens per day/)
})

t.test('tool_permission: validation', async (t) => {
  t.same(errors('tool_permission', {}), ['config: needs at least one of allowed_tools, denied_tools, argument_rules'])
  t.same(errors('tool_permission', { allowed_tools: ['a', 3, ''] }), ['config.allowed_tools[1]: must be a string', 'config.allowed_tools[2]: must not be empty'])
  t.same(errors('tool_permission', { denied_tools: 'rm' }), ['config.denied_tools: must be a list of strings'])
  t.same(errors('tool_permission', { argument_rules: {} }), ['config.argument_rules: must be a list of {tool, deny_if, message}'])
  t.same(errors('tool_permission', { argument_rules: [{ tool: 'sh', deny_if: { frob: 1 } }, 'x', { tool: '', deny_if: true, message: 5, extra: 1 }] }), [
    'config.argument_rules[0].deny_if.frob: unknown operation "frob"',
    'config.argument_rules[1]: must be an object',
    'config.argument_rules[2].extra: unknown field (expected one of: tool, deny_if, message)',
    'config.argument_rules[2].tool: must not be empty',
    'config.argument_rules[2].message: must be a string'
  ])
})

t.test('tool_permission: denied first, then the allow-list, then argument rules; only tool actions', async (t) => {
  const set = compilePolicySet([policy('tool_permission', {
    allowed_tools: ['search_*', 'shell'],
    denied_tools: ['search_admin'],
    argument_rules: [{ tool: 'shell', deny_if: { in: ['rm ', { var: 'tool_input.cmd' }] }, message: 'no rm' }, { tool: 'search_*', deny_if: { '>': [{ var: 'tool_input.limit' }, 100] } }]
  })])
  t.equal(set.evaluate(v1('tool_call', { tool: 'search_web' })).allowed, true)
  t.match(set.evaluate(v1('tool_call', { tool: 'search_admin' })).reason, /tool "search_admin" is denied/)
  t.match(set.evaluate(v1('tool_call', { tool: 'email' })).reason, /tool "email" is not in allowed_tools/)
  t.match(set.evaluate(v1('tool_use', {})).reason, /names no tool/)
  t.match(set.evaluate(v1('tool_call', { tool: 'shell', tool_input: { cmd: 'rm -rf /' } })).reason, /no rm/)
  t.equal(set.evaluate(v1('tool_call', { tool: 'shell', tool_input: { cmd: 'ls' } })).allowed, true)
  t.match(set.evaluate(v1('tool_call', { tool: 'search_web', tool_input: { limit: 500 } })).reason, /arguments of tool "search_web" are denied by argument_rules\[1\]/)
  t.equal(set.evaluate(v1('llm_call', { tool: 'email' })).allowed, true, 'not a tool action')
  t.match(set.evaluate(buildInputLegacy({ request_type: 'tool.invoked', context: { tool: 'email' } }, AGENT, NOW)).reason, /not in allowed_tools/, 'legacy tool action')
})

t.test('model_restriction: validation, decisions and restrictions', async (t) => {
  t.same(errors('model_restriction', {}), ['config: needs at least one of allowed_models, denied_models, max_tokens'])
  t.same(errors('model_restriction', { max_tokens: 0 }), ['config.max_tokens: must be between 1 and 9007199254740991'])
  const set = compilePolicySet([policy('model_restriction', { allowed_models: ['gpt-4o*', 'claude-*'], denied_models: ['*-preview'], max_tokens: 1000 })])
  t.equal(set.evaluate(v1('llm_call', { model: 'gpt-4o-mini', tokens: 10 })).allowed, true)
  t.match(set.evaluate(v1('llm_call', { model: 'claude-x-preview' })).reason, /model "claude-x-preview" is denied/)
  t.match(set.evaluate(v1('chat', { model: 'llama' })).reason, /not in allowed_models/)
  t.match(set.evaluate(v1('llm_call', {})).reason, /names no model/)
  t.match(set.evaluate(v1('llm_call', { model: 'gpt-4o', tokens: 1001 })).reason, /1001 tokens requested, more than max_tokens 1000/)
  t.equal(set.evaluate(v1('tool_call', { model: 'llama' })).allowed, true, 'not an LLM action')
  t.same(set.restrictions, { max_tokens: 1000, allowed_models: ['gpt-4o*', 'claude-*'] })
  const legacy = set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', model: 'claude-3', tokens_requested: 5 }, AGENT, NOW))
  t.equal(legacy.allowed, true)
  t.same(legacy.restrictions, { max_tokens: 1000, allowed_models: ['gpt-4o*', 'claude-*'] })
  const two = compilePolicySet([policy('model_restriction', { allowed_models: ['a', 'b'], max_tokens: 50 }), policy('model_restriction', { allowed_models: ['b', 'c'], max_tokens: 20 })])
  t.same(two.restrictions, { max_tokens: 20, allowed_models: ['b'] }, 'restrictions of several policies intersect')
  const audited = compilePolicySet([policy('model_restriction', { max_tokens: 5 }, { enforcement: 'audit' })])
  t.same(audited.restrictions, {}, 'audited policies restrict nothing')
})

t.test('budget_limit: validation and spend per agent, user and tenant, per day and month', async (t) => {
  t.same(errors('budget_limit', {}), ['config.max_cost_usd: is required'])
  t.same(errors('budget_limit', { max_cost_usd: -1, period: 'week', per: 'team' }), [
    'config.max_cost_usd: must be at least 0', 'config.period: must be one of: day, month', 'config.per: must be one of: agent, user, tenant'
  ])
  t.same(errors('budget_limit', { max_cost_usd: 'lots' }), ['config.max_cost_usd: must be a number'])
  const budget = new MemoryBudgetLedger()
  const set = compilePolicySet([
    policy('budget_limit', { max_cost_usd: 5, period: 'day' }),
    policy('budget_limit', { max_cost_usd: 3, per: 'user' }),
    policy('budget_limit', { max_cost_usd: 100, per: 'tenant', period: 'month' })
  ], { budget, now: () => NOW })
  t.equal(set.evaluate(v1('chat')).allowed, true)
  budget.record({ agentId: 'bot-1', userId: 'u1', usd: 3, at: NOW - 1000 })
  const user = set.evaluate(v1('chat'))
  t.equal(user.allowed, false, 'u1 has spent 3 of 3')
  t.match(user.reason, /budget of \$3 per month for the user is spent/)
  t.equal(set.evaluate(v1('chat', {}, 'u2')).allowed, true, 'u2 has spent nothing')
  budget.record({ agentId: 'bot-1', userId: 'u2', usd: 2, at: NOW - 1000 })
  t.match(set.evaluate(v1('chat', {}, 'u3')).reason, /\$5 per day for the agent/)
  budget.record({ agentId: 'other', usd: 200, at: NOW - 1000 })
  const fresh = compilePolicySet([policy('budget_limit', { max_cost_usd: 100, per: 'tenant' })], { budget, now: () => NOW })
  t.match(fresh.evaluate(v1('chat', {}, 'u9')).reason, /for the tenant/)
  const noLedger = compilePolicySet([policy('budget_limit', { max_cost_usd: 0 })])
  t.equal(noLedger.evaluate(v1('chat')).allowed, true, 'without a ledger there is no recorded spend')
})

t.test('content_filter: validation, patterns, PII, warn', async (t) => {
  t.same(errors('content_filter', {}), ['config: needs deny_patterns or pii'])
  t.same(errors('content_filter', { pii: ['email', 'iban'] }), ['config.pii[1]: must be one of: email, credit_card, us_ssn, phone, secret'])
  t.same(errors('content_filter', { deny_patterns: ['(a+)+$'] }), ['config.deny_patterns[0]: nested quantifier (a repeated group that itself repeats)'])
  t.same(errors('content_filter', { deny_patterns: ['ok'], on_match: 'log' }), ['config.on_match: must be one of: block, warn'])
  const block = compilePolicySet([policy('content_filter', { deny_patterns: ['(?i)ignore previous instructions', 'secret word'], pii: ['email'] }, { name: 'cf' })])
  t.equal(block.evaluate(v1('chat', { prompt: 'hello there' })).allowed, true)
  t.match(block.evaluate(v1('chat', { prompt: 'please IGNORE previous INSTRUCTIONS' })).reason, /^cf: text matches denied pattern \(\?i\)ignore previous instructions/)
  t.match(block.evaluate(v1('chat', { prompt: 'mail bob@example.com' })).reason, /text contains PII \(email\)/)
  t.match(block.evaluate(v1('tool_call', { tool_input: { body: 'the secret word is x' } })).reason, /secret word/, 'strings in tool_input are text too')
  const warn = compilePolicySet([policy('content_filter', { pii: ['phone'], on_match: 'warn' }, { name: 'phones' })])
  const d = warn.evaluate(v1('chat', { prompt: 'call +1 (555) 123-4567' }))
  t.equal(d.allowed, true, 'warn passes')
  t.same(d.warnings, ['phones: text contains PII (phone)'])
  t.equal(d.policies_evaluated[0]?.result, 'pass')
  t.match(d.policies_evaluated[0]?.message, /phone/)
})

t.test('network_policy: validation and hosts from context.url, tool_input.url(s)', async (t) => {
  t.same(errors('network_policy', {}), ['config: needs allowed_domains or denied_domains'])
  t.same(errors('network_policy', { allowed_domains: ['*', 'a b', 'ok.com', 'x.com/path'] }), [
    'config.allowed_domains[0]: must be a domain name, optionally prefixed by "*."',
    'config.allowed_domains[1]: must be a domain name, optionally prefixed by "*."',
    'config.allowed_domains[3]: must be a domain name, optionally prefixed by "*."'
  ])
  const set = compilePolicySet([policy('network_policy', { allowed_domains: ['example.com', '*.example.com'], denied_domains: ['bad.example.com'] })])
  t.equal(set.evaluate(v1('tool_call', { tool_input: { url: 'https://api.example.com/x' } })).allowed, true)
  t.match(set.evaluate(v1('tool_call', { url: 'http://bad.example.com' })).reason, /host bad\.example\.com is denied/)
  t.match(set.evaluate(v1('tool_call', { tool_input: { urls: ['https://example.com', 'https://evil.org/'] } })).reason, /evil\.org is not in the allowed domains/)
  t.match(set.evaluate(v1('tool_call', { url: 'http://[::1' })).reason, /cannot be parsed/)
  t.equal(set.evaluate(v1('tool_call', {})).allowed, true, 'no URL, nothing to check')
})

t.test('human_oversight: matching actions and tools need an approved, unused approval of this agent', async (t) => {
  t.same(errors('human_oversight', {}), ['config.require_approval_for: is required'])
  t.same(errors('human_oversight', { require_approval_for: [] }), ['config.require_approval_for: must not be empty'])
  const approvals = new MemoryApprovals()
  const set = compilePolicySet([policy('human_oversight', { require_approval_for: ['delete_*', 'deploy'] })], { approvals })
  t.equal(set.evaluate(v1('tool_call', { tool: 'read_file' })).allowed, true, 'not matched')
  t.match(set.evaluate(v1('tool_call', { tool: 'delete_user' })).reason, /tool "delete_user" requires human approval/)
  t.match(set.evaluate(v1('deploy')).reason, /action "deploy" requires human approval/)
  approvals.set('ap-1', 'bot-1', 'approved')
  approvals.set('ap-2', 'other-bot', 'approved')
  approvals.set('ap-3', 'bot-1', 'pending')
  t.equal(set.evaluate(v1('tool_call', { tool: 'delete_user', approval_id: 'ap-2' })).allowed, false, 'another agent\'s approval')
  t.equal(set.evaluate(v1('tool_call', { tool: 'delete_user', approval_id: 'ap-3' })).allowed, false, 'a pending approval')
  t.equal(set.evaluate(v1('tool_call', { tool: 'delete_user', approval_id: 'ap-1' })).allowed, true, 'an approved approval')
  t.equal(set.evaluate(v1('tool_call', { tool: 'delete_user', approval_id: 'ap-1' })).allowed, false, 'used once only')
  t.equal(compilePolicySet([policy('human_oversight', { require_approval_for: ['x'] })]).evaluate(v1('x')).allowed, false, 'no approval source: matched actions are blocked')
})

t.test('custom: validation, deny_if, allow_if, message', async (t) => {
  t.same(errors('custom', {}), ['config: needs exactly one of deny_if, allow_if'])
  t.same(errors('custom', { deny_if: true, allow_if: true }), ['config: needs exactly one of deny_if, allow_if'])
  t.same(errors('custom', { deny_if: { var: '__proto__.x' } }), ['config.deny_if.var: path segment "__proto__" is not allowed'])
  t.same(errors('custom', { allow_if: true, message: '' }), ['config.message: must not be empty'])
  const set = compilePolicySet([
    policy('custom', { deny_if: { '>': [{ var: 'tokens' }, 10] } }, { name: 'big' }),
    policy('custom', { allow_if: { '==': [{ var: 'agent.team' }, 'support'] }, message: 'support only' }, { name: 'team' })
  ])
  t.equal(set.evaluate(v1('chat', { tokens: 5 })).allowed, true)
  t.equal(set.evaluate(v1('chat', { tokens: 50 })).reason, 'big: deny_if rule matched')
  const other = compilePolicySet([policy('custom', { allow_if: false })])
  t.equal(other.evaluate(v1('chat')).reason, 'custom-' + String(n) + ': allow_if rule not satisfied')
})
