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

t.test('recordLegacy: a legacy block -> spooled under contract legacy as a legacy policy.blocked event with its evaluation_id', async (t) => {
  const s = spool(t)
  const log = new DecisionLog(s, { intervalMs: 60_000 })
  const before = Date.now()
  log.recordLegacy('h1', 'bot', { request_type: 'tool.invoke', model: 'gpt-4o', context: { tool: 'shell', tool_name: 'ignored', user_id: 'u1' } }, blocked, 'eval_abc')
  t.equal(log.queued, 1)
  t.equal(s.status().depth, 0, 'nothing is written on the request path')
  t.equal(log.flush(), 1)
  t.strictSame(s.eventsOf('h1', 'v1', 10), [], 'nothing under the v1 contract')
  const spooled = s.eventsOf('h1', 'legacy', 10)
  t.equal(spooled.length, 1)
  const event = spooled[0]?.event as Record<string, unknown>
  t.strictSame(Object.keys(event).sort(), ['data', 'evaluation_id', 'id', 'timestamp', 'type'], 'legacy shape: no category, user_id or payload at the top')
  t.equal(event.type, 'policy.blocked')
  t.equal(event.evaluation_id, 'eval_abc')
  t.equal(typeof event.timestamp, 'string')
  const at = Date.parse(event.timestamp as string)
  t.ok(at >= before - 1 && at <= Date.now() + 1, 'timestamp is the time of the decision, as ISO 8601')
  t.strictSame(event.data, {
    action: 'tool.invoke',
    tool: 'shell',
    model: 'gpt-4o',
    reason: 'tools: tool "shell" is denied',
    failed: ['tools'],
    decided_by: 'sidecar',
    user_id: 'u1'
  })
  t.strictSame(s.agents(), [{ keyHash: 'h1', contract: 'legacy', agentId: 'bot' }])
})

t.test('recordLegacy: no context, no model, or a non-string user_id -> tool and model null, no user_id in data', async (t) => {
  const s = spool(t)
  const log = new DecisionLog(s, { intervalMs: 60_000 })
  log.recordLegacy('h1', 'bot', { request_type: 'llm.invoke' }, blocked, 'eval_1')
  log.recordLegacy('h1', 'bot', { request_type: 'llm.invoke', context: { user_id: 42 } }, blocked, 'eval_2')
  log.recordLegacy('h1', 'bot', { request_type: 'llm.invoke', context: { user_id: null, model: 'in-context-not-used' } }, blocked, 'eval_3')
  t.equal(log.flush(), 3)
  const events = s.eventsOf('h1', 'legacy', 10).map((e) => e.event)
  t.strictSame(events.map((e) => e.evaluation_id), ['eval_1', 'eval_2', 'eval_3'], 'in order, each with its own evaluation_id')
  for (const e of events) {
    t.strictSame(e.data, { action: 'llm.invoke', tool: null, model: null, reason: 'tools: tool "shell" is denied', failed: ['tools'], decided_by: 'sidecar' })
  }
})

t.test('recordLegacy: an allowed legacy decision -> nothing queued or spooled', async (t) => {
  const s = spool(t)
  const log = new DecisionLog(s, { intervalMs: 20 })
  log.recordLegacy('h1', 'bot', { request_type: 'llm.invoke', context: { tool: 'shell' } }, { ...blocked, allowed: true, reason: null }, 'eval_ok')
  t.equal(log.queued, 0)
  await new Promise((resolve) => setTimeout(resolve, 60))
  t.equal(s.status().depth, 0, 'no timer wrote anything either')
  t.equal(log.flush(), 0)
  t.strictSame(s.agents(), [])
})

t.test('flush: v1 and legacy blocks of the same key hash, interleaved -> separate spool groups, each with its contract and its events in order', async (t) => {
  const s = spool(t)
  const log = new DecisionLog(s, { intervalMs: 60_000 })
  log.record('h1', 'bot', { agent_id: 'bot', action: 'tool_call', context: { tool: 'a' } }, blocked)
  log.recordLegacy('h1', 'bot', { request_type: 'tool.invoke', context: { tool: 'b' } }, blocked, 'eval_b')
  log.record('h1', 'bot', { agent_id: 'bot', action: 'tool_call', context: { tool: 'c' } }, blocked)
  log.recordLegacy('h1', 'bot', { request_type: 'tool.invoke', context: { tool: 'd' } }, blocked, 'eval_d')
  log.recordLegacy('h2', 'other', { request_type: 'tool.invoke', context: { tool: 'e' } }, blocked, 'eval_e')
  t.equal(log.flush(), 5)
  t.equal(s.status().depth, 5)
  const groups = s.agents().map((a) => `${a.contract} ${a.keyHash} ${a.agentId}`).sort()
  t.strictSame(groups, ['legacy h1 bot', 'legacy h2 other', 'v1 h1 bot'], 'one group per (contract, key hash)')
  const v1 = s.eventsOf('h1', 'v1', 10).map((e) => e.event)
  t.strictSame(v1.map((e) => (e.payload as { tool: unknown }).tool), ['a', 'c'], 'the v1 group holds the v1 blocks only')
  for (const e of v1) {
    t.match(e, { type: 'policy.blocked', category: 'audit', payload: { decided_by: 'sidecar' } })
    t.notOk('evaluation_id' in e, 'a v1 event has no evaluation_id')
  }
  const legacy = s.eventsOf('h1', 'legacy', 10).map((e) => e.event)
  t.strictSame(legacy.map((e) => (e.data as { tool: unknown }).tool), ['b', 'd'], 'the legacy group holds the legacy blocks only')
  t.strictSame(legacy.map((e) => e.evaluation_id), ['eval_b', 'eval_d'])
  for (const e of legacy) t.notOk('payload' in e || 'category' in e, 'a legacy event has neither payload nor category')
  t.strictSame(s.eventsOf('h2', 'legacy', 10).map((e) => e.event.evaluation_id), ['eval_e'])
  t.strictSame(s.eventsOf('h2', 'v1', 10), [])
})

t.test('recordLegacy: the queue reaching maxQueued -> flushed at once, legacy events included', async (t) => {
  const s = spool(t)
  const log = new DecisionLog(s, { intervalMs: 60_000, maxQueued: 2 })
  log.record('h1', 'bot', { action: 'x' }, blocked)
  t.equal(s.status().depth, 0)
  log.recordLegacy('h1', 'bot', { request_type: 'y' }, blocked, 'eval_y')
  t.equal(log.queued, 0)
  t.equal(s.eventsOf('h1', 'v1', 10).length, 1)
  t.equal(s.eventsOf('h1', 'legacy', 10).length, 1)
})
