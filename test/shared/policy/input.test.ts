import t from 'tap'
import { buildInputLegacy, buildInputV1, nowInfo, type AgentInfo } from '../../../shared/policy/input.js'

const agent: AgentInfo = { id: 'a1', type: 'custom', capabilities: ['chat'], metadata: { team: 'x' }, deployment_id: 'd1', team: 'x' }
const NOW = Date.UTC(2026, 10, 22, 14, 30, 5, 123) // a Sunday

t.test('buildInputV1: maps every field of the v1 body', async (t) => {
  const doc = buildInputV1({
    agent_id: 'a1',
    action: 'tool_call',
    user_id: 'u1',
    context: { tool: 'http_get', tool_input: { url: 'https://x.example', q: 'find this' }, model: 'gpt-4o', tokens: 12, prompt: 'hello', input: 'world' }
  }, agent, NOW)
  t.equal(doc.action, 'tool_call')
  t.equal(doc.agent, agent)
  t.equal(doc.user_id, 'u1')
  t.equal(doc.tool, 'http_get')
  t.same(doc.tool_input, { url: 'https://x.example', q: 'find this' })
  t.equal(doc.model, 'gpt-4o')
  t.equal(doc.tokens, 12)
  t.equal(doc.text, 'hello\nworld\nhttps://x.example\nfind this')
  t.same(doc.context.tool, 'http_get')
  t.same(doc.now, { iso: '2026-11-22T14:30:05.000Z', hour: 14, weekday: 'sunday' })
})

t.test('buildInputV1: tool_name and tokens_requested are the fallbacks', async (t) => {
  const doc = buildInputV1({ action: 'tool_use', context: { tool_name: 'calc', tokens_requested: 7 } }, agent, NOW)
  t.equal(doc.tool, 'calc')
  t.equal(doc.tokens, 7)
})

t.test('buildInputV1: missing or mistyped fields become null, empty text, empty context', async (t) => {
  const doc = buildInputV1({ action: 5, user_id: 9, context: 'nope' }, agent, NOW)
  t.equal(doc.action, '')
  t.equal(doc.user_id, null)
  t.equal(doc.tool, null)
  t.equal(doc.tool_input, null)
  t.equal(doc.model, null)
  t.equal(doc.tokens, null)
  t.equal(doc.text, '')
  t.same(doc.context, {})
  const odd = buildInputV1({ action: 'llm_call', context: { tokens: Infinity, model: 3, tool: ['x'] } }, agent, NOW)
  t.equal(odd.tokens, null)
  t.equal(odd.model, null)
  t.equal(odd.tool, null)
})

t.test('buildInputV1: text gathers nested strings of tool_input, and stops at depth 16', async (t) => {
  const doc = buildInputV1({ action: 'tool_call', context: { tool_input: { a: ['x', { b: 'y', n: 3, e: '' }], c: null } } }, agent, NOW)
  t.equal(doc.text, 'x\ny')
  let deep: unknown = 'too deep'
  for (let i = 0; i < 20; i++) deep = { d: deep }
  t.equal(buildInputV1({ action: 'tool_call', context: { tool_input: deep } }, agent, NOW).text, '')
  t.equal(buildInputV1({ action: 'tool_call', context: { tool_input: 'plain string' } }, agent, NOW).text, 'plain string')
})

t.test('buildInputLegacy: maps request_type, model, tokens_requested, messages and context', async (t) => {
  const doc = buildInputLegacy({
    request_type: 'llm.invoke',
    model: 'claude-3-5-sonnet',
    tokens_requested: 500,
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'part one' }, { type: 'image', url: 'x' }, 'part two'] },
      'bare string',
      42,
      { role: 'user' }
    ],
    context: { user_id: 'u9', session_id: 's1', tool: 'search', tool_input: { q: 'x' } }
  }, agent, NOW)
  t.equal(doc.action, 'llm.invoke')
  t.equal(doc.model, 'claude-3-5-sonnet')
  t.equal(doc.tokens, 500)
  t.equal(doc.user_id, 'u9')
  t.equal(doc.tool, 'search')
  t.same(doc.tool_input, { q: 'x' })
  t.equal(doc.text, 'be brief\npart one\npart two\nbare string')
  t.equal(doc.context.session_id, 's1')
})

t.test('buildInputLegacy: a body with nothing gives empty defaults', async (t) => {
  const doc = buildInputLegacy({ messages: 'not a list' }, agent, NOW)
  t.equal(doc.action, '')
  t.equal(doc.model, null)
  t.equal(doc.tokens, null)
  t.equal(doc.text, '')
  t.equal(doc.tool_input, null)
  t.same(doc.context, {})
})

t.test('nowInfo: one frozen object per second, recomputed when the second changes', async (t) => {
  const a = nowInfo(NOW)
  t.equal(nowInfo(NOW + 500), a, 'same second, same object')
  t.ok(Object.isFrozen(a))
  const b = nowInfo(Date.UTC(2026, 10, 23, 0, 0, 0))
  t.same(b, { iso: '2026-11-23T00:00:00.000Z', hour: 0, weekday: 'monday' })
})

t.test('buildInputV1: now defaults to the current time', async (t) => {
  const before = Math.floor(Date.now() / 1000) * 1000
  const doc = buildInputV1({ action: 'chat' }, agent)
  t.ok(Date.parse(doc.now.iso) >= before)
})
