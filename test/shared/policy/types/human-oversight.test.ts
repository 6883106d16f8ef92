/**
 * human_oversight (policy-types.md): require_approval_for, globs over tool names and actions. Fails when
 * the action or tool matches and context.approval_id does not name an approved, unused approval of
 * this agent. An approval is used up only by a decision that allows the request.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'
import { MemoryApprovals, type ApprovalSource, type ApprovalState } from '../../../../shared/policy/counters.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)
const NEEDS = 'requires human approval: context.approval_id must name an approved, unused approval'

const ho = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'ho-id', name: 'oversight', type: 'human_oversight', config, ...extra })

const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'human_oversight', config }).map((e) => `${e.path}: ${e.message}`)

const req = (action: string, context: Record<string, unknown> = {}, agent = AGENT) =>
  buildInputV1({ agent_id: agent.id, action, user_id: 'u1', context }, agent, T0)

t.test('human_oversight validation: accepts a non-empty list of globs', async (t) => {
  t.same(errors({ require_approval_for: ['delete_*'] }), [])
  t.same(errors({ require_approval_for: ['deploy', 'tool_call', 'payments.*'] }), [])
})

t.test('human_oversight validation: require_approval_for is required, a list, not empty, of non-empty strings', async (t) => {
  t.same(errors({}), ['config.require_approval_for: is required'])
  t.same(errors({ require_approval_for: [] }), ['config.require_approval_for: must not be empty'])
  t.same(errors({ require_approval_for: 'deploy' }), ['config.require_approval_for: must be a list of strings'])
  t.same(errors({ require_approval_for: ['deploy', 3, ''] }), ['config.require_approval_for[1]: must be a string', 'config.require_approval_for[2]: must not be empty'])
})

t.test('human_oversight validation: unknown fields and non-object configs are refused', async (t) => {
  t.same(errors({ require_approval_for: ['x'], approvers: ['alice'] }), ['config.approvers: unknown field (expected one of: require_approval_for)'])
  t.same(errors(['deploy']), ['config: must be an object'])
})

t.test('human_oversight decision: a matching tool without an approval fails, naming the tool', async (t) => {
  const set = compilePolicySet([ho({ require_approval_for: ['delete_*'] })], { approvals: new MemoryApprovals() })
  t.same(set.evaluate(req('tool_call', { tool: 'read_file' })).policies_evaluated, [{ id: 'ho-id', name: 'oversight', type: 'human_oversight', result: 'pass', message: null }], 'not matched')
  const d = set.evaluate(req('tool_call', { tool: 'delete_user' }))
  t.equal(d.allowed, false)
  t.equal(d.reason, `oversight: tool "delete_user" ${NEEDS}`)
  t.same(d.policies_evaluated, [{ id: 'ho-id', name: 'oversight', type: 'human_oversight', result: 'fail', message: `tool "delete_user" ${NEEDS}` }])
})

t.test('human_oversight decision: a matching action fails; the message names the tool when there is one, else the action', async (t) => {
  const set = compilePolicySet([ho({ require_approval_for: ['deploy', 'tool_call'] })], { approvals: new MemoryApprovals() })
  t.equal(set.evaluate(req('deploy')).reason, `oversight: action "deploy" ${NEEDS}`)
  t.equal(set.evaluate(req('tool_call', { tool: 'search' })).reason, `oversight: tool "search" ${NEEDS}`, 'the action matched; the tool is named')
  t.equal(set.evaluate(req('tool_call')).reason, `oversight: action "tool_call" ${NEEDS}`)
  t.equal(set.evaluate(req('chat')).allowed, true, 'neither matches')
  t.equal(set.evaluate(req('Deploy')).allowed, true, 'globs are case-sensitive')
})

t.test('human_oversight decision: an approved approval of this agent allows the request once', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap-1', 'bot-1', 'approved')
  const set = compilePolicySet([ho({ require_approval_for: ['delete_*'] })], { approvals })
  const d = set.evaluate(req('tool_call', { tool: 'delete_user', approval_id: 'ap-1' }))
  t.equal(d.allowed, true)
  t.same(d.warnings, [])
  t.equal(approvals.state('ap-1', 'bot-1'), 'used', 'the allowed decision used the approval')
  const again = set.evaluate(req('tool_call', { tool: 'delete_user', approval_id: 'ap-1' }))
  t.equal(again.allowed, false, 'a used approval does not allow a second time')
  t.equal(again.reason, `oversight: tool "delete_user" ${NEEDS}`)
})

t.test('human_oversight decision: pending, rejected, used, unknown and other agents\' approvals do not allow', async (t) => {
  const approvals = new MemoryApprovals()
  const states: ApprovalState[] = ['pending', 'rejected', 'used', 'unknown']
  for (const s of states) approvals.set(`ap-${s}`, 'bot-1', s)
  approvals.set('ap-other', 'bot-2', 'approved')
  const set = compilePolicySet([ho({ require_approval_for: ['deploy'] })], { approvals })
  for (const s of states) t.equal(set.evaluate(req('deploy', { approval_id: `ap-${s}` })).allowed, false, s)
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-other' })).allowed, false, 'an approval of another agent')
  t.equal(approvals.state('ap-other', 'bot-2'), 'approved', 'and it is left unused')
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-nope' })).allowed, false, 'an id nobody knows')
  t.equal(set.evaluate(req('deploy', { approval_id: 42 })).allowed, false, 'an approval_id that is not a string')
  t.equal(set.evaluate(req('deploy', { approval_id: ['ap-other'] })).allowed, false, 'nor a list')
})

t.test('human_oversight decision: the other agent can use its own approval', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap-2', 'bot-2', 'approved')
  const set = compilePolicySet([ho({ require_approval_for: ['deploy'] })], { approvals })
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-2' }, { ...AGENT, id: 'bot-2' })).allowed, true)
})

t.test('human_oversight counters: an approval is not used when another policy blocks the request', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap-1', 'bot-1', 'approved')
  const set = compilePolicySet([
    ho({ require_approval_for: ['deploy'] }),
    { id: 'x', name: 'freeze', type: 'custom', config: { deny_if: { '==': [{ var: 'context.env' }, 'prod'] }, message: 'change freeze' } }
  ], { approvals })
  const blocked = set.evaluate(req('deploy', { approval_id: 'ap-1', env: 'prod' }))
  t.equal(blocked.allowed, false)
  t.equal(blocked.reason, 'freeze: change freeze')
  t.equal(approvals.state('ap-1', 'bot-1'), 'approved', 'still unused')
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-1', env: 'staging' })).allowed, true, 'so it can still allow a later request')
  t.equal(approvals.state('ap-1', 'bot-1'), 'used')
})

t.test('human_oversight counters: an approval is not used by a request that did not need it', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap-1', 'bot-1', 'approved')
  const set = compilePolicySet([ho({ require_approval_for: ['deploy'] })], { approvals })
  t.equal(set.evaluate(req('chat', { approval_id: 'ap-1' })).allowed, true)
  t.equal(approvals.state('ap-1', 'bot-1'), 'approved')
})

t.test('human_oversight decision: without an approval source every matching request is blocked', async (t) => {
  const set = compilePolicySet([ho({ require_approval_for: ['deploy'] })])
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-1' })).reason, `oversight: action "deploy" ${NEEDS}`)
  t.equal(set.evaluate(req('chat')).allowed, true)
})

t.test('human_oversight decision: the approval source is asked with this agent\'s id and consumed once', async (t) => {
  const calls: string[] = []
  const approvals: ApprovalSource = {
    state (id, agent) { calls.push(`state ${id} ${agent}`); return 'approved' },
    consume (id, agent) { calls.push(`consume ${id} ${agent}`) }
  }
  const set = compilePolicySet([ho({ require_approval_for: ['deploy'] })], { approvals })
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-9' })).allowed, true)
  t.same(calls, ['state ap-9 bot-1', 'consume ap-9 bot-1'])
})

t.test('human_oversight decision: legacy requests match their request_type and context.tool', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap-1', 'bot-1', 'approved')
  const set = compilePolicySet([ho({ require_approval_for: ['llm.*', 'wire_money'] })], { approvals })
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke' }, AGENT, T0)).reason, `oversight: action "llm.invoke" ${NEEDS}`)
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'tool.invoked', context: { tool: 'wire_money' } }, AGENT, T0)).reason, `oversight: tool "wire_money" ${NEEDS}`)
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'tool.invoked', context: { tool: 'wire_money', approval_id: 'ap-1' } }, AGENT, T0)).allowed, true)
})

t.test('human_oversight in audit mode: a missing approval warns; an approval it accepts is still used', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap-1', 'bot-1', 'approved')
  const set = compilePolicySet([ho({ require_approval_for: ['deploy'] }, { enforcement: 'audit' })], { approvals })
  const d = set.evaluate(req('deploy'))
  t.equal(d.allowed, true)
  t.same(d.warnings, [`[audit] oversight: action "deploy" ${NEEDS}`])
  t.equal(set.evaluate(req('deploy', { approval_id: 'ap-1' })).warnings.length, 0)
  t.equal(approvals.state('ap-1', 'bot-1'), 'used')
})

t.test('MemoryApprovals: consume only turns an approved approval of the same agent into used', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('a', 'bot-1', 'approved')
  approvals.set('p', 'bot-1', 'pending')
  approvals.consume('a', 'bot-2')
  t.equal(approvals.state('a', 'bot-1'), 'approved', 'another agent cannot use it')
  t.equal(approvals.state('a', 'bot-2'), 'unknown', 'and does not see it')
  approvals.consume('p', 'bot-1')
  t.equal(approvals.state('p', 'bot-1'), 'pending', 'a pending approval is not used')
  approvals.consume('missing', 'bot-1')
  t.equal(approvals.state('missing', 'bot-1'), 'unknown')
  approvals.consume('a', 'bot-1')
  t.equal(approvals.state('a', 'bot-1'), 'used')
})
