/**
 * model_restriction (policy-types.md): allowed_models, denied_models (globs), max_tokens. Fails when an
 * LLM action names a model not allowed, or asks for more than max_tokens. Its limits are also handed
 * back to legacy clients as restrictions.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)

const mr = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'mr-id', name: 'models', type: 'model_restriction', config, ...extra })

const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'model_restriction', config }).map((e) => `${e.path}: ${e.message}`)

const llm = (context: Record<string, unknown>, action = 'llm_call') =>
  buildInputV1({ agent_id: AGENT.id, action, user_id: 'u1', context }, AGENT, T0)

t.test('model_restriction validation: accepts each field alone and all together', async (t) => {
  t.same(errors({ allowed_models: ['gpt-4o*'] }), [])
  t.same(errors({ denied_models: ['*-preview'] }), [])
  t.same(errors({ max_tokens: 1 }), [])
  t.same(errors({ allowed_models: ['a'], denied_models: [], max_tokens: 4096 }), [])
})

t.test('model_restriction validation: an empty config is refused at "config"', async (t) => {
  t.same(errors({}), ['config: needs at least one of allowed_models, denied_models, max_tokens'])
})

t.test('model_restriction validation: model lists and max_tokens are checked with their paths', async (t) => {
  t.same(errors({ allowed_models: 'gpt-4o' }), ['config.allowed_models: must be a list of strings'])
  t.same(errors({ allowed_models: ['gpt-4o', 4, ''] }), ['config.allowed_models[1]: must be a string', 'config.allowed_models[2]: must not be empty'])
  t.same(errors({ denied_models: [null] }), ['config.denied_models[0]: must be a string'])
  t.same(errors({ denied_models: {} }), ['config.denied_models: must be a list of strings'])
  t.same(errors({ max_tokens: 0 }), ['config.max_tokens: must be between 1 and 9007199254740991'])
  t.same(errors({ max_tokens: -1 }), ['config.max_tokens: must be between 1 and 9007199254740991'])
  t.same(errors({ max_tokens: 10.5 }), ['config.max_tokens: must be an integer'])
  t.same(errors({ max_tokens: '100' }), ['config.max_tokens: must be an integer'])
  t.same(errors({ allowed_models: 'x', denied_models: [1], max_tokens: '5' }), [
    'config.allowed_models: must be a list of strings',
    'config.denied_models[0]: must be a string',
    'config.max_tokens: must be an integer'
  ], 'every problem is reported, not only the first')
})

t.test('model_restriction validation: unknown fields and non-object configs are refused', async (t) => {
  t.same(errors({ max_tokens: 5, models: ['x'] }), ['config.models: unknown field (expected one of: allowed_models, denied_models, max_tokens)'])
  t.same(errors('gpt-4o'), ['config: must be an object'])
  t.same(errors(null), ['config: must be an object'])
})

t.test('model_restriction decision: allowed_models lets matching models through and names the one refused', async (t) => {
  const set = compilePolicySet([mr({ allowed_models: ['gpt-4o*', 'claude-*'] })])
  t.same(set.evaluate(llm({ model: 'gpt-4o-mini' })).policies_evaluated, [{ id: 'mr-id', name: 'models', type: 'model_restriction', result: 'pass', message: null }])
  t.equal(set.evaluate(llm({ model: 'claude-3' })).allowed, true)
  const d = set.evaluate(llm({ model: 'llama-3' }))
  t.equal(d.allowed, false)
  t.equal(d.reason, 'models: model "llama-3" is not in allowed_models')
  t.same(d.policies_evaluated, [{ id: 'mr-id', name: 'models', type: 'model_restriction', result: 'fail', message: 'model "llama-3" is not in allowed_models' }])
  t.equal(set.evaluate(llm({ model: 'GPT-4o' })).allowed, false, 'globs are case-sensitive')
})

t.test('model_restriction decision: an LLM action that names no model fails when allowed_models is present', async (t) => {
  const set = compilePolicySet([mr({ allowed_models: ['gpt-4o'] })])
  t.equal(set.evaluate(llm({})).reason, 'models: LLM action names no model, and only allowed_models may be used')
  t.equal(compilePolicySet([mr({ denied_models: ['x'] })]).evaluate(llm({})).allowed, true, 'a deny-list alone does not need a model')
})

t.test('model_restriction decision: denied_models is checked before allowed_models', async (t) => {
  const set = compilePolicySet([mr({ allowed_models: ['gpt-*'], denied_models: ['*-preview'] })])
  t.equal(set.evaluate(llm({ model: 'gpt-5-preview' })).reason, 'models: model "gpt-5-preview" is denied')
  t.equal(set.evaluate(llm({ model: 'gpt-5' })).allowed, true)
  const denyOnly = compilePolicySet([mr({ denied_models: ['o1*'] })])
  t.equal(denyOnly.evaluate(llm({ model: 'gpt-5' })).allowed, true, 'without an allow-list every other model passes')
  t.equal(denyOnly.evaluate(llm({ model: 'o1-mini' })).reason, 'models: model "o1-mini" is denied')
})

t.test('model_restriction decision: max_tokens allows up to the ceiling and refuses above it', async (t) => {
  const set = compilePolicySet([mr({ max_tokens: 1000 })])
  t.equal(set.evaluate(llm({ model: 'm', tokens: 1000 })).allowed, true, 'exactly max_tokens')
  t.equal(set.evaluate(llm({ model: 'm', tokens: 1001 })).reason, 'models: 1001 tokens requested, more than max_tokens 1000')
  t.equal(set.evaluate(llm({ model: 'm', tokens_requested: 5000 })).reason, 'models: 5000 tokens requested, more than max_tokens 1000', 'v1 tokens_requested')
  t.equal(set.evaluate(llm({ model: 'm' })).allowed, true, 'no token count: nothing to refuse')
  t.equal(set.evaluate(llm({ model: 'm', tokens: '5000' })).allowed, true, 'a token count that is not a number is no count')
})

t.test('model_restriction decision: the model check comes before the token check', async (t) => {
  const set = compilePolicySet([mr({ allowed_models: ['a'], max_tokens: 10 })])
  t.equal(set.evaluate(llm({ model: 'b', tokens: 50 })).reason, 'models: model "b" is not in allowed_models')
  t.equal(set.evaluate(llm({ model: 'a', tokens: 50 })).reason, 'models: 50 tokens requested, more than max_tokens 10')
})

t.test('model_restriction decision: only LLM actions (llm_call, llm.invoke, llm_invoke, chat) are checked', async (t) => {
  const set = compilePolicySet([mr({ allowed_models: ['a'], max_tokens: 10 })])
  for (const action of ['llm_call', 'llm.invoke', 'llm_invoke', 'chat']) {
    t.equal(set.evaluate(llm({ model: 'b' }, action)).allowed, false, action)
  }
  t.equal(set.evaluate(llm({ model: 'b', tokens: 50 }, 'tool_call')).allowed, true, 'a tool action is not checked')
  t.equal(set.evaluate(llm({ model: 'b' }, 'LLM_CALL')).allowed, true, 'actions are matched exactly')
})

t.test('model_restriction decision: legacy bodies give model and tokens_requested at the top level', async (t) => {
  const set = compilePolicySet([mr({ allowed_models: ['claude-*'], max_tokens: 100 })])
  const ok = set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', model: 'claude-3', tokens_requested: 100 }, AGENT, T0))
  t.equal(ok.allowed, true)
  t.same(ok.restrictions, { max_tokens: 100, allowed_models: ['claude-*'] })
  const wrong = set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', model: 'gpt-4o' }, AGENT, T0))
  t.equal(wrong.reason, 'models: model "gpt-4o" is not in allowed_models')
  const big = set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', model: 'claude-3', tokens_requested: 101 }, AGENT, T0))
  t.equal(big.allowed, false)
  t.equal(big.reason, 'models: 101 tokens requested, more than max_tokens 100')
  t.same(big.restrictions, { max_tokens: 100, allowed_models: ['claude-*'] }, 'a blocked decision carries the restrictions too')
})

t.test('model_restriction restrictions: max_tokens and allowed_models of an enforced policy; denied_models adds none', async (t) => {
  t.same(compilePolicySet([mr({ max_tokens: 5 })]).restrictions, { max_tokens: 5 })
  t.same(compilePolicySet([mr({ allowed_models: ['a', 'b'] })]).restrictions, { allowed_models: ['a', 'b'] })
  t.same(compilePolicySet([mr({ denied_models: ['x'] })]).restrictions, {})
  t.same(compilePolicySet([mr({ max_tokens: 5 }, { enforcement: 'audit' })]).restrictions, {}, 'an audited policy restricts nothing')
  const config = { allowed_models: ['a'] }
  const set = compilePolicySet([mr(config)])
  config.allowed_models.push('b')
  t.same(set.restrictions, { allowed_models: ['a'] }, 'restrictions are a copy: later changes to the config do not leak in')
  t.ok(Object.isFrozen(set.restrictions) && Object.isFrozen(set.restrictions.allowed_models), 'and frozen')
})

t.test('model_restriction in audit mode: a refused model is a warning and the request is allowed', async (t) => {
  const d = compilePolicySet([mr({ allowed_models: ['a'] }, { enforcement: 'audit' })]).evaluate(llm({ model: 'b' }))
  t.equal(d.allowed, true)
  t.same(d.warnings, ['[audit] models: model "b" is not in allowed_models'])
})
