/**
 * tool_permission (policy-types.md): allowed_tools and denied_tools globs (denied checked first; an
 * absent allowed_tools allows all not denied) and argument_rules [{tool, deny_if, message}]. Fails when
 * a tool action names a denied tool, a tool outside a present allowed_tools, or a matching argument rule.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)

const tp = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'tp-id', name: 'tools', type: 'tool_permission', config, ...extra })

const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'tool_permission', config }).map((e) => `${e.path}: ${e.message}`)

const call = (tool: string | undefined, toolInput?: unknown, action = 'tool_call') =>
  buildInputV1({ agent_id: AGENT.id, action, user_id: 'u1', context: { ...(tool === undefined ? {} : { tool }), ...(toolInput === undefined ? {} : { tool_input: toolInput }) } }, AGENT, T0)

t.test('tool_permission validation: accepts each list alone, rules alone, and all together', async (t) => {
  t.same(errors({ allowed_tools: ['search', 'fs_*'] }), [])
  t.same(errors({ denied_tools: ['shell'] }), [])
  t.same(errors({ allowed_tools: [] }), [], 'an empty allow-list is valid (it allows no tool)')
  t.same(errors({ argument_rules: [{ tool: 'shell', deny_if: { in: ['rm', { var: 'tool_input.cmd' }] } }] }), [])
  t.same(errors({
    allowed_tools: ['*'],
    denied_tools: ['admin_*'],
    argument_rules: [{ tool: 'http_*', deny_if: { glob: [{ var: 'tool_input.method' }, ['DELETE']] }, message: 'no DELETE' }]
  }), [])
})

t.test('tool_permission validation: an empty config is refused at "config"', async (t) => {
  t.same(errors({}), ['config: needs at least one of allowed_tools, denied_tools, argument_rules'])
})

t.test('tool_permission validation: tool lists must be lists of non-empty strings; each bad item is named by index', async (t) => {
  t.same(errors({ allowed_tools: ['search', 'fs_read', 7] }), ['config.allowed_tools[2]: must be a string'])
  t.same(errors({ allowed_tools: ['a', null, '', '  '] }), [
    'config.allowed_tools[1]: must be a string',
    'config.allowed_tools[2]: must not be empty',
    'config.allowed_tools[3]: must not be empty'
  ])
  t.same(errors({ allowed_tools: 'search' }), ['config.allowed_tools: must be a list of strings'])
  t.same(errors({ denied_tools: { shell: true } }), ['config.denied_tools: must be a list of strings'])
  t.same(errors({ denied_tools: ['ok', ['nested']] }), ['config.denied_tools[1]: must be a string'])
  t.same(errors({ allowed_tools: ['x'.repeat(1001)] }), ['config.allowed_tools[0]: must be at most 1000 characters'])
  t.same(errors({ allowed_tools: ['x'.repeat(1000)] }), [], '1000 characters is the limit')
  t.same(errors({ denied_tools: Array.from({ length: 1001 }, (_, i) => `t${i}`) }), ['config.denied_tools: must have at most 1000 items'])
})

t.test('tool_permission validation: argument_rules must be a list of {tool, deny_if, message} with compiling rules', async (t) => {
  t.same(errors({ argument_rules: { tool: 'x', deny_if: true } }), ['config.argument_rules: must be a list of {tool, deny_if, message}'])
  t.same(errors({ argument_rules: 'x' }), ['config.argument_rules: must be a list of {tool, deny_if, message}'])
  t.same(errors({ argument_rules: [{ tool: 'sh', deny_if: true }, 'rule', null, []] }), [
    'config.argument_rules[1]: must be an object',
    'config.argument_rules[2]: must be an object',
    'config.argument_rules[3]: must be an object'
  ])
  t.same(errors({ argument_rules: [{ deny_if: true }] }), ['config.argument_rules[0].tool: must be a string'], 'tool is required')
  t.same(errors({ argument_rules: [{ tool: 'sh' }] }), ['config.argument_rules[0].deny_if: must be a JSON-logic rule'], 'deny_if is required')
  t.same(errors({ argument_rules: [{ tool: 'sh', deny_if: true, message: '' }] }), ['config.argument_rules[0].message: must not be empty'])
  t.same(errors({ argument_rules: [{ tool: 'sh', deny_if: true, message: 3 }] }), ['config.argument_rules[0].message: must be a string'])
  t.same(errors({ argument_rules: [{ tool: 'sh', deny_if: true, when: 'always' }] }), ['config.argument_rules[0].when: unknown field (expected one of: tool, deny_if, message)'])
  t.same(errors({ argument_rules: [{ tool: 'sh', deny_if: true }, { tool: 'sh', deny_if: { and: [true, { frob: [1] }] } }] }), [
    'config.argument_rules[1].deny_if.and[1].frob: unknown operation "frob"'
  ], 'a rule that does not compile is named down to the operation')
  t.same(errors({ argument_rules: [{ tool: 'sh', deny_if: { var: 'tool_input.constructor' } }] }), [
    'config.argument_rules[0].deny_if.var: path segment "constructor" is not allowed'
  ])
})

t.test('tool_permission validation: unknown fields and non-object configs are refused', async (t) => {
  t.same(errors({ allowed_tools: ['a'], tools: ['b'] }), ['config.tools: unknown field (expected one of: allowed_tools, denied_tools, argument_rules)'])
  t.same(errors(['search']), ['config: must be an object'])
  t.same(errors(null), ['config: must be an object'])
  t.same(errors(undefined), ['config: is required'])
})

t.test('tool_permission decision: a tool in allowed_tools passes; one outside it fails naming the tool', async (t) => {
  const set = compilePolicySet([tp({ allowed_tools: ['search', 'fs_*'] })])
  t.same(set.evaluate(call('search')).policies_evaluated, [{ id: 'tp-id', name: 'tools', type: 'tool_permission', result: 'pass', message: null }])
  t.equal(set.evaluate(call('fs_read')).allowed, true, 'glob fs_* matches fs_read')
  t.equal(set.evaluate(call('fs_')).allowed, true, '* matches an empty run')
  const d = set.evaluate(call('email'))
  t.equal(d.allowed, false)
  t.equal(d.reason, 'tools: tool "email" is not in allowed_tools')
  t.same(d.policies_evaluated, [{ id: 'tp-id', name: 'tools', type: 'tool_permission', result: 'fail', message: 'tool "email" is not in allowed_tools' }])
  t.equal(set.evaluate(call('Search')).allowed, false, 'globs are case-sensitive')
  t.equal(set.evaluate(call('xsearch')).allowed, false, 'a glob without * matches the whole name only')
})

t.test('tool_permission decision: a tool action that names no tool fails when allowed_tools is present', async (t) => {
  const set = compilePolicySet([tp({ allowed_tools: ['search'] })])
  t.equal(set.evaluate(call(undefined)).reason, 'tools: tool action names no tool, and only allowed_tools may run')
  t.equal(set.evaluate(call('')).reason, 'tools: tool action names no tool, and only allowed_tools may run', 'an empty tool name is no tool')
})

t.test('tool_permission decision: an empty allowed_tools allows no tool', async (t) => {
  const set = compilePolicySet([tp({ allowed_tools: [] })])
  t.equal(set.evaluate(call('search')).reason, 'tools: tool "search" is not in allowed_tools')
})

t.test('tool_permission decision: denied_tools is checked first, even for a tool the allow-list matches', async (t) => {
  const set = compilePolicySet([tp({ allowed_tools: ['search_*'], denied_tools: ['search_admin'] })])
  t.equal(set.evaluate(call('search_web')).allowed, true)
  t.equal(set.evaluate(call('search_admin')).reason, 'tools: tool "search_admin" is denied')
})

t.test('tool_permission decision: without allowed_tools every tool not denied passes, and no tool passes', async (t) => {
  const set = compilePolicySet([tp({ denied_tools: ['shell', 'rm_*'] })])
  t.equal(set.evaluate(call('search')).allowed, true)
  t.equal(set.evaluate(call(undefined)).allowed, true, 'no tool named: nothing is denied')
  t.equal(set.evaluate(call('rm_rf')).reason, 'tools: tool "rm_rf" is denied')
  t.equal(set.evaluate(call('shell')).reason, 'tools: tool "shell" is denied')
  t.equal(compilePolicySet([tp({ denied_tools: [] })]).evaluate(call('shell')).allowed, true, 'an empty deny-list denies nothing')
})

t.test('tool_permission decision: only tool actions (tool_call, tool.invoked, tool_use) are checked', async (t) => {
  const set = compilePolicySet([tp({ allowed_tools: ['search'] })])
  t.equal(set.evaluate(call('email', undefined, 'tool_call')).allowed, false, 'tool_call')
  t.equal(set.evaluate(call('email', undefined, 'tool.invoked')).allowed, false, 'tool.invoked')
  t.equal(set.evaluate(call('email', undefined, 'tool_use')).allowed, false, 'tool_use')
  t.equal(set.evaluate(call('email', undefined, 'llm_call')).allowed, true, 'an LLM action naming a tool is not checked')
  t.equal(set.evaluate(call('email', undefined, 'tool')).allowed, true, 'an action that merely looks like one is not checked')
})

t.test('tool_permission decision: v1 context.tool_name and legacy context.tool name the tool', async (t) => {
  const set = compilePolicySet([tp({ allowed_tools: ['search'] })])
  const v1 = set.evaluate(buildInputV1({ action: 'tool_call', context: { tool_name: 'email' } }, AGENT, T0))
  t.equal(v1.reason, 'tools: tool "email" is not in allowed_tools')
  const legacyBlocked = set.evaluate(buildInputLegacy({ request_type: 'tool.invoked', context: { tool: 'email' } }, AGENT, T0))
  t.equal(legacyBlocked.allowed, false)
  t.equal(legacyBlocked.reason, 'tools: tool "email" is not in allowed_tools')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'tool.invoked', context: { tool: 'search' } }, AGENT, T0)).allowed, true)
})

t.test('tool_permission decision: an argument rule fails its tool when deny_if holds, with its message', async (t) => {
  const set = compilePolicySet([tp({
    argument_rules: [
      { tool: 'shell', deny_if: { in: ['rm ', { var: 'tool_input.cmd' }] }, message: 'no rm in shell' },
      { tool: 'search_*', deny_if: { '>': [{ var: 'tool_input.limit' }, 100] } }
    ]
  })])
  t.equal(set.evaluate(call('shell', { cmd: 'ls -la' })).allowed, true, 'deny_if false')
  t.equal(set.evaluate(call('shell', { cmd: 'rm -rf /' })).reason, 'tools: no rm in shell')
  t.equal(set.evaluate(call('search_web', { limit: 500 })).reason, 'tools: arguments of tool "search_web" are denied by argument_rules[1]', 'default message names the rule index')
  t.equal(set.evaluate(call('search_web', { limit: 50 })).allowed, true)
  t.equal(set.evaluate(call('other', { cmd: 'rm -rf /', limit: 500 })).allowed, true, 'rules of other tools do not apply')
  t.equal(set.evaluate(call(undefined, { cmd: 'rm -rf /' })).allowed, true, 'no tool named: no rule applies')
  t.equal(set.evaluate(call('shell', { cmd: 'rm -rf /' }, 'llm_call')).allowed, true, 'not a tool action')
})

t.test('tool_permission decision: argument rules read the whole input document', async (t) => {
  const set = compilePolicySet([tp({
    argument_rules: [{ tool: '*', deny_if: { and: [{ '==': [{ var: 'user_id' }, 'guest'] }, { '==': [{ var: 'tool_input.write' }, true] }] }, message: 'guests cannot write' }]
  })])
  t.equal(set.evaluate(buildInputV1({ action: 'tool_call', user_id: 'guest', context: { tool: 'fs', tool_input: { write: true } } }, AGENT, T0)).reason, 'tools: guests cannot write')
  t.equal(set.evaluate(buildInputV1({ action: 'tool_call', user_id: 'admin', context: { tool: 'fs', tool_input: { write: true } } }, AGENT, T0)).allowed, true)
})

t.test('tool_permission decision: checks run denied, then allow-list, then argument rules, and the first failure is the message', async (t) => {
  const set = compilePolicySet([tp({
    allowed_tools: ['shell', 'sudo'],
    denied_tools: ['sudo'],
    argument_rules: [{ tool: '*', deny_if: true, message: 'argument rule' }]
  })])
  t.equal(set.evaluate(call('sudo')).reason, 'tools: tool "sudo" is denied', 'denied before rules')
  t.equal(set.evaluate(call('curl')).reason, 'tools: tool "curl" is not in allowed_tools', 'allow-list before rules')
  t.equal(set.evaluate(call('shell')).reason, 'tools: argument rule', 'rules last')
})
