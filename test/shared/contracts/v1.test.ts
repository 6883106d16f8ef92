import t, { type Test } from 'tap'
import fastJsonStringify from 'fast-json-stringify'
import { EvaluateResponse, evaluateResponse, evaluateResponseBytes, evaluateResponseJson } from '../../../shared/contracts/v1.js'
import { buildInputV1, compilePolicySet, type AgentInfo, type Decision, type PolicyResult } from '../../../shared/policy/index.js'

/** What fastify would have sent for the route's response schema: the reference the fast path must equal. */
const schemaSerialiser = fastJsonStringify(EvaluateResponse as Parameters<typeof fastJsonStringify>[0])

function decision (over: Partial<Decision> = {}): Decision {
  return { allowed: true, reason: null, policies_evaluated: [], warnings: [], restrictions: {}, ...over }
}

const pass = (id: string, name: string, type = 'custom'): PolicyResult =>
  Object.freeze({ id, name, type, result: 'pass' as const, message: null })

function same (t: Test, d: Decision, context: unknown, label: string): void {
  const json = evaluateResponseJson(d, context)
  t.equal(json, schemaSerialiser(evaluateResponse(d, context)), `${label}: the schema serialiser's exact text`)
  t.same(JSON.parse(json), JSON.parse(JSON.stringify(evaluateResponse(d, context))), `${label}: the same value as evaluateResponse`)
  t.ok(Buffer.from(evaluateResponseBytes(d, context)).equals(Buffer.from(json, 'utf8')), `${label}: evaluateResponseBytes gives the text's UTF-8 bytes`)
}

t.test('evaluateResponseJson: equals the EvaluateResponse schema serialisation for every shape of decision', async (t) => {
  same(t, decision(), undefined, 'no policies, no context')
  same(t, decision(), { model: 'gpt-4o', tokens: 12, nested: { list: [1, 'two', null, { deep: true }] } }, 'context echoed whole')
  same(t, decision({ policies_evaluated: [pass('p1', 'tools', 'tool_permission'), pass('p2', 'models', 'model_restriction')] }), {}, 'passing policies')
  same(t, decision({
    allowed: false,
    reason: 'tool "shell" is denied\nby policy',
    policies_evaluated: [
      pass('p1', 'first'),
      { id: 'p2', name: 'quotes " and \\ backslash', type: 'tool_permission', result: 'fail', message: 'tool "shell" is denied\nby policy' }
    ],
    warnings: ['phone number found', 'emoji \u{1F600} and control \u0001 character']
  }), { tool: 'shell' }, 'a block with escapes in every string')
  same(t, decision({ restrictions: { max_tokens: 8000, allowed_models: ['gpt-4o*', 'claude-*'] } }), {}, 'both restrictions')
  same(t, decision({ restrictions: { allowed_models: [] } }), {}, 'an empty model list')
  same(t, decision({ restrictions: Object.freeze({ max_tokens: 100 }) }), {}, 'frozen restrictions')
  same(t, decision({ restrictions: Object.freeze({ max_tokens: 100 }) }), {}, 'frozen restrictions again (cached)')
})

t.test('evaluateResponseJson: a context that is not an object (absent, null, an array, a string) is sent as {}', async (t) => {
  for (const context of [undefined, null, [1, 2], 'text', 5]) {
    t.same(JSON.parse(evaluateResponseJson(decision(), context)).context, {}, `context ${JSON.stringify(context)}`)
  }
})

t.test('evaluateResponseJson: the same frozen results give the same text; a new list is serialised anew', async (t) => {
  const a = [pass('a1', 'alpha'), pass('a2', 'beta')]
  const b = [pass('b1', 'gamma')]
  const first = evaluateResponseJson(decision({ policies_evaluated: a.slice() }), {})
  t.equal(evaluateResponseJson(decision({ policies_evaluated: a.slice() }), {}), first, 'same objects in a new array: same text')
  const other = JSON.parse(evaluateResponseJson(decision({ policies_evaluated: b }), {}))
  t.same(other.policies_evaluated.map((r: PolicyResult) => r.name), ['gamma'], 'another list is not answered from the last one')
  const reordered = JSON.parse(evaluateResponseJson(decision({ policies_evaluated: [a[1] as PolicyResult, a[0] as PolicyResult] }), {}))
  t.same(reordered.policies_evaluated.map((r: PolicyResult) => r.id), ['a2', 'a1'], 'the same results in another order keep that order')
  const shorter = JSON.parse(evaluateResponseJson(decision({ policies_evaluated: [a[1] as PolicyResult] }), {}))
  t.same(shorter.policies_evaluated.map((r: PolicyResult) => r.id), ['a2'], 'a prefix of the last list is not the last list')
})

t.test('evaluateResponseJson: results that are not frozen are serialised every time (a change shows)', async (t) => {
  const r: PolicyResult = { id: 'm1', name: 'mutable', type: 'custom', result: 'pass', message: null }
  const list = [r]
  t.equal(JSON.parse(evaluateResponseJson(decision({ policies_evaluated: list }), {})).policies_evaluated[0].message, null)
  r.result = 'fail'
  r.message = 'changed'
  const again = JSON.parse(evaluateResponseJson(decision({ policies_evaluated: list }), {})).policies_evaluated[0]
  t.same([again.result, again.message], ['fail', 'changed'], 'the changed object is serialised again')
  const restrictions: Decision['restrictions'] = { max_tokens: 10 }
  evaluateResponseJson(decision({ restrictions }), {})
  restrictions.max_tokens = 20
  t.equal(JSON.parse(evaluateResponseJson(decision({ restrictions }), {})).restrictions.max_tokens, 20, 'unfrozen restrictions are not cached')
})

t.test('evaluateResponseJson: real decisions of a compiled policy set, passing then blocking, match the schema serialisation', async (t) => {
  const set = compilePolicySet([
    { id: 'p-tools', name: 'tools', type: 'tool_permission', config: { denied_tools: ['shell'] } },
    { id: 'p-models', name: 'models', type: 'model_restriction', config: { allowed_models: ['gpt-4o*'], max_tokens: 4000 } }
  ])
  const agent: AgentInfo = { id: 'a', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
  for (const [label, tool] of [['allowed', 'search'], ['allowed again', 'search'], ['blocked', 'shell'], ['allowed after a block', 'search']] as const) {
    const body = { agent_id: 'a', action: 'tool_call', context: { tool, model: 'gpt-4o' } }
    const d = set.evaluate(buildInputV1(body, agent))
    t.equal(d.allowed, tool !== 'shell', `${label}: the decision`)
    same(t, d, body.context, label)
  }
})

t.test('evaluateResponseBytes: the cached bytes of a list of results follow the list (a new list, a non-ASCII name, a block)', async (t) => {
  const a = [pass('a1', 'alpha'), pass('a2', 'b\u00eata \u{1F600}')]
  const b = [pass('b1', 'gamma')]
  const cases: Array<[string, Decision, unknown]> = [
    ['a first list', decision({ policies_evaluated: a.slice() }), { prompt: 'caf\u00e9' }],
    ['the same list again (cached bytes)', decision({ policies_evaluated: a.slice() }), { n: 1 }],
    ['another list', decision({ policies_evaluated: b }), {}],
    ['the first list once more', decision({ policies_evaluated: a.slice() }), {}],
    ['a block', decision({ allowed: false, reason: 'no', policies_evaluated: [pass('a1', 'alpha'), { id: 'f', name: 'f', type: 'custom', result: 'fail', message: 'no' }] }), {}],
    ['no results', decision(), { x: [1, 2] }]
  ]
  for (const [label, d, context] of cases) {
    t.equal(Buffer.from(evaluateResponseBytes(d, context)).toString('utf8'), evaluateResponseJson(d, context), label)
  }
})
