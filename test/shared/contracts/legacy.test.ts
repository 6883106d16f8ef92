import t from 'tap'
import fastJsonStringify from 'fast-json-stringify'
import { EvaluateResponse, evaluateResponseJson } from '../../../shared/contracts/legacy.js'
import type { Decision, PolicyResult } from '../../../shared/policy/index.js'

/** What fastify sends for the legacy route's response schema: the reference the hand-built text must equal. */
const schemaSerialiser = fastJsonStringify(EvaluateResponse as Parameters<typeof fastJsonStringify>[0])

function decision (over: Partial<Decision> = {}): Decision {
  return { allowed: true, reason: null, policies_evaluated: [], warnings: [], restrictions: {}, ...over }
}

const result = (id: string, outcome: 'pass' | 'fail' = 'pass'): PolicyResult => ({ id, name: id, type: 'custom', result: outcome, message: outcome === 'fail' ? 'no' : null })

t.test('legacy evaluateResponseJson: the EvaluateResponse schema serialisation, for every shape of decision', async (t) => {
  const cases: Array<[string, Decision]> = [
    ['nothing evaluated', decision()],
    ['passing policies (counted)', decision({ policies_evaluated: [result('a'), result('b')] })],
    ['a block with escapes', decision({ allowed: false, reason: 'tool "shell" is denied\nby \\ policy', policies_evaluated: [result('a', 'fail')] })],
    ['warnings', decision({ warnings: ['phone number found', 'emoji \u{1F600} and control \u0001'] })],
    ['both restrictions', decision({ restrictions: { max_tokens: 8000, allowed_models: ['gpt-4o*', 'claude-*'] } })],
    ['restrictions listed models first', decision({ restrictions: { allowed_models: ['x'], max_tokens: 10 } })],
    ['frozen restrictions (cached)', decision({ restrictions: Object.freeze({ max_tokens: 100 }) })]
  ]
  for (const [label, d] of cases) {
    const id = 'eval_AbC-123_xyz'
    const expected = schemaSerialiser({
      allowed: d.allowed, reason: d.reason, policies_evaluated: d.policies_evaluated.length, restrictions: d.restrictions, warnings: d.warnings, evaluation_id: id
    })
    t.equal(evaluateResponseJson(d, id), expected, label)
  }
})
