/**
 * The assistant with the built-in `local` provider: the exact server-sent event format, and each kind
 * of question answered from the store's contents.
 */
import t, { type Test } from 'tap'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from '../../helpers.js'
import { mintUserToken } from '../../../../control-plane/graphql/auth.js'
import { chunksOf } from '../../../../control-plane/assistant/local.js'

const SECRET = 'assistant-test-jwt-secret-0123456789abcd'

async function setup (t: Test): Promise<TestApp & { ask: (message: unknown, extra?: Record<string, unknown>) => Promise<{ status: number, raw: string, text: string, events: unknown[] }> }> {
  const ta = await testApp({ env: { SERVICE_JWT_SECRET: SECRET } })
  t.teardown(() => ta.close())
  const token = await mintUserToken(SECRET, { sub: 'asker', tenantId: DEFAULT_TENANT_ID, role: 'viewer' }, 600)
  const ask = async (message: unknown, extra: Record<string, unknown> = {}): Promise<{ status: number, raw: string, text: string, events: unknown[] }> => {
    const res = await ta.app.inject({ method: 'POST', url: '/api/service/v1/assistant/chat', headers: { authorization: `Bearer ${token}` }, payload: { message, ...extra } as Record<string, unknown> })
    const events = res.statusCode === 200 ? res.body.split('\n\n').filter((b) => b !== '').map((b) => b.startsWith('data: ') && b !== 'data: [DONE]' ? JSON.parse(b.slice(6)) as unknown : b) : []
    const text = events.map((e) => (e as { content?: string }).content ?? '').join('')
    return { status: res.statusCode, raw: res.body, text, events }
  }
  return { ...ta, ask }
}

t.test('chat: an answer streams as `data: {"content": ...}` events and ends with `data: [DONE]`', async (t) => {
  const a = await setup(t)
  const r = await a.ask('how many agents are there?')
  t.equal(r.status, 200)
  t.match(r.raw, /^(data: \{"content":"[^\n]*"\}\n\n)+data: \[DONE\]\n\n$/, 'exactly: data lines, each followed by a blank line, then [DONE]')
  t.equal(r.events.at(-1), 'data: [DONE]')
  t.match(r.text, /no agents registered yet/)
})

t.test('chat: bad input is 400 before any stream; no token is 401', async (t) => {
  const a = await setup(t)
  for (const [label, message, extra] of [
    ['no message', undefined, {}],
    ['an empty message', '', {}],
    ['a blank message', '   ', {}],
    ['a message that is not a string', 42, {}],
    ['a history entry with another role', 'hi', { history: [{ role: 'system', content: 'x' }] }],
    ['a provider this release does not call', 'hi', { provider: 'openai' }]
  ] as const) {
    const r = await a.ask(message, extra)
    t.equal(r.status, 400, label)
    t.match(JSON.parse(r.raw), { error: 'bad_request' }, label)
  }
  const anon = await a.app.inject({ method: 'POST', url: '/api/service/v1/assistant/chat', payload: { message: 'hi' } })
  t.equal(anon.statusCode, 401)
})

t.test('local answers: agent counts, unhealthy agents, policies of an agent, what a policy does, recent blocks, and help', async (t) => {
  const a = await setup(t)
  const { store } = a.app.services
  const bot = await a.registerV1({ agent_type: 'custom', agent_id: 'support-bot', deployment_id: 'prod' })
  await a.registerV1({ agent_type: 'custom', agent_id: 'batch-job' })
  await a.registerV1({ agent_type: 'custom', agent_id: 'old-one' })
  const batch = await store.getAgent(DEFAULT_TENANT_ID, 'batch-job')
  const old = await store.getAgent(DEFAULT_TENANT_ID, 'old-one')
  await store.setAgentStatus(batch?.id as string, 'active', 'unhealthy')
  await store.setAgentStatus(old?.id as string, 'suspended', 'unknown')
  await store.upsertPolicies(DEFAULT_TENANT_ID, [
    { name: 'no-shell', type: 'tool_permission', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { denied_tools: ['shell'] }, enforcement: 'enforce', priority: 5, is_active: true },
    { name: 'prod-models', type: 'model_restriction', scope_type: 'DEPLOYMENT', scope_id: 'prod', config: { allowed_models: ['gpt-4o*'] }, enforcement: 'audit', priority: 1, is_active: true },
    { name: 'dev-only', type: 'rate_limit', scope_type: 'DEPLOYMENT', scope_id: 'dev', config: { requests_per_minute: 5 }, enforcement: 'enforce', priority: 0, is_active: true }
  ])
  await a.app.services.directory.changed()

  t.equal((await a.ask('How many agents do we have?')).text, 'There are 3 agents: 2 active and 1 suspended.')
  const sick = (await a.ask('which agents are unhealthy?')).text
  t.match(sick, /^1 of 3 agents is unhealthy or degraded:\n- batch-job: unhealthy, last heartbeat never/)
  t.equal((await a.ask('Which policies apply to support-bot?')).text,
    '2 policies apply to support-bot, in evaluation order: no-shell (tool_permission) and prod-models (model_restriction, audit).',
    'its deployment\'s and the tenant\'s, by priority; not another deployment\'s')
  t.match((await a.ask('what does no-shell do?')).text, /^"no-shell" \(tool_permission\) decides which tools an agent may call.*whole tenant.*"denied_tools":\["shell"\]/)
  t.match((await a.ask('list the policies')).text, /^There are 3 policies: /)
  t.equal((await a.ask('what was blocked recently?')).text, 'Nothing was blocked recently.')

  const blocked = await a.v1('POST', '/evaluate', { key: bot.key, body: { agent_id: 'support-bot', action: 'tool_call', context: { tool: 'shell' } } })
  t.equal(blocked.json().allowed, false)
  let answer = ''
  for (let i = 0; i < 50; i++) {
    answer = (await a.ask('What was blocked recently, and why?')).text
    if (!answer.startsWith('Nothing')) break
    await new Promise((resolve) => setTimeout(resolve, 20)) // the block is written by the ingest writer's next commit
  }
  t.match(answer, /^1 blocked decision; the latest:\n- \S+ support-bot: tool shell: no-shell: tool "shell" is denied/)
  t.equal((await a.ask('anything blocked for batch-job?')).text, 'Nothing was blocked recently for batch-job.', 'for one agent')
  t.match((await a.ask('tell me a joke')).text, /^I am the built-in assistant .* I can answer:/)
})

t.test('local answers never hold a secret', async (t) => {
  const a = await setup(t)
  await a.registerV1({ agent_type: 'custom', agent_id: 'holder' })
  await a.app.services.store.setSecret({ tenant_id: DEFAULT_TENANT_ID, scope_type: 'agent', scope_id: 'holder', name: 'TOKEN', value_sealed: a.app.services.box.seal('s3cr3t-value', 'x'), updated_at: new Date().toISOString() })
  for (const q of ['how many agents', 'policies for holder', 'what was blocked', 'which are unhealthy', 'secrets?']) {
    t.notMatch((await a.ask(q)).raw, /s3cr3t|TOKEN|v1:/, q)
  }
})

t.test('providers: the built-in local provider is always listed; require_tools leaves it no model', async (t) => {
  const a = await setup(t)
  const token = await mintUserToken(SECRET, { sub: 'asker', tenantId: DEFAULT_TENANT_ID, role: 'viewer' }, 600)
  const list = await a.app.inject({ method: 'GET', url: '/api/service/v1/assistant/providers', headers: { authorization: `Bearer ${token}` } })
  t.equal(list.statusCode, 200)
  t.match(list.json(), { providers: [{ id: 'local', source: 'builtin', models: [{ value: 'local', supportsTools: false }] }] })
  const tools = await a.app.inject({ method: 'GET', url: '/api/service/v1/assistant/providers?require_tools=true', headers: { authorization: `Bearer ${token}` } })
  t.strictSame(tools.json().providers[0].models, [])
  const bad = await a.app.inject({ method: 'GET', url: '/api/service/v1/assistant/providers?live=maybe', headers: { authorization: `Bearer ${token}` } })
  t.equal(bad.statusCode, 400, 'a query parameter that is not a boolean')
})

t.test('chunksOf: lines stay whole with their breaks; a long line is cut near 200 characters; nothing is lost', async (t) => {
  const text = `first line\nsecond ${'word '.repeat(100)}\nlast`
  const chunks = chunksOf(text)
  t.equal(chunks.join(''), text)
  t.ok(chunks.every((c) => c.length <= 201), 'no chunk much over 200')
  t.equal(chunks[0], 'first line\n')
})
