/** The sidecar's decision log (sidecar/decision-log.ts): blocks queued, then spooled as policy.blocked audit events. */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Spool } from '../../sidecar/spool.js'
import { DecisionLog } from '../../sidecar/decision-log.js'
import type { EvaluateResponse } from '../../shared/contracts/v1.js'

function spool (t: Test): Spool {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-dlog-'))
  const s = new Spool(join(dir, 'spool.db'))
  t.teardown(() => { s.close(); rmSync(dir, { recursive: true, force: true }) })
  return s
}

const blocked: EvaluateResponse = {
  allowed: false,
  reason: 'tools: tool "shell" is denied',
  policies_evaluated: [
    { id: '1', name: 'tools', type: 'tool_permission', result: 'fail', message: 'tool "shell" is denied' },
    { id: '2', name: 'models', type: 'model_restriction', result: 'pass', message: null }
  ],
  warnings: [],
  restrictions: {},
  context: {}
}

t.test('a block is spooled as a policy.blocked audit event of its agent; an allow is not', async (t) => {
  const s = spool(t)
  const log = new DecisionLog(s, { intervalMs: 60_000 })
  log.record('h1', 'bot', { agent_id: 'bot', action: 'tool_call', user_id: 'u1', context: { tool: 'shell' } }, blocked)
  log.record('h1', 'bot', { agent_id: 'bot', action: 'chat' }, { ...blocked, allowed: true, reason: null })
  log.record('h2', 'other', { agent_id: 'other', action: 'llm_call', context: { model: 'gpt-4o', tool_name: 't' } }, blocked)
  t.equal(log.queued, 2, 'the allow was not queued')
  t.equal(s.status().depth, 0, 'nothing is written on the request path')
  t.equal(log.flush(), 2)
  const [a] = s.eventsOf('h1', 'v1', 10)
  t.match(a?.event, {
    type: 'policy.blocked',
    category: 'audit',
    user_id: 'u1',
    payload: { action: 'tool_call', tool: 'shell', model: null, reason: 'tools: tool "shell" is denied', failed: ['tools'], decided_by: 'sidecar' }
  })
  t.match(s.eventsOf('h2', 'v1', 10)[0]?.event, { user_id: null, payload: { tool: 't', model: 'gpt-4o' } })
  t.equal(log.flush(), 0, 'an empty flush writes nothing')
})

t.test('the queue goes to the spool on its own: after the interval, or at once when it is full', async (t) => {
  const s = spool(t)
  const timed = new DecisionLog(s, { intervalMs: 20 })
  timed.record('h', 'a', { action: 'x' }, blocked)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal(s.status().depth, 1, 'after the interval')
  const full = new DecisionLog(s, { intervalMs: 60_000, maxQueued: 2 })
  full.record('h', 'a', { action: 'x' }, blocked)
  full.record('h', 'a', { action: 'x' }, blocked)
  t.equal(s.status().depth, 3, 'at maxQueued')
  t.equal(full.queued, 0)
})
