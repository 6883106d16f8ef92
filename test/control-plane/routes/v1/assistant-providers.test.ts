/**
 * The assistant answering through model providers: fake OpenAI and Anthropic servers on loopback
 * speaking their streaming wire formats; a stream that breaks, a refusal, a client that goes away.
 */
import t, { type Test } from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { request } from 'undici'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from '../../helpers.js'
import { mintUserToken } from '../../../../control-plane/graphql/auth.js'

const SECRET = 'assistant-providers-jwt-secret-0123456789'
const KEY = 'sk-test-PLAINTEXT-provider-key-42'

interface Seen { path: string, headers: IncomingMessage['headers'], body: Record<string, any>, closed: Promise<void> }

async function fakeProvider (t: Test, handle: (req: IncomingMessage, res: ServerResponse, body: Record<string, any>) => void): Promise<{ url: string, seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (c: Buffer) => { raw += c.toString() })
    req.on('end', () => {
      const body = JSON.parse(raw === '' ? '{}' : raw) as Record<string, any>
      seen.push({ path: req.url ?? '', headers: req.headers, body, closed: new Promise((resolve) => res.on('close', () => resolve())) })
      handle(req, res, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const sse = (res: ServerResponse): void => { res.writeHead(200, { 'content-type': 'text/event-stream' }) }
const openaiChunk = (text: string): string => `data: ${JSON.stringify({ choices: [{ delta: { content: text } }] })}\n\n`
const anthropicEvent = (event: string, data: Record<string, unknown>): string => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`

async function setup (t: Test): Promise<TestApp & { token: string, chat: (body: Record<string, unknown>) => Promise<{ status: number, events: Array<Record<string, any> | string> }> }> {
  const ta = await testApp({ env: { SERVICE_JWT_SECRET: SECRET } })
  t.teardown(() => ta.close())
  const token = await mintUserToken(SECRET, { sub: 'asker', tenantId: DEFAULT_TENANT_ID, role: 'admin' }, 600)
  const chat = async (body: Record<string, unknown>): Promise<{ status: number, events: Array<Record<string, any> | string> }> => {
    const res = await ta.app.inject({ method: 'POST', url: '/api/service/v1/assistant/chat', headers: { authorization: `Bearer ${token}` }, payload: body })
    if (res.statusCode !== 200) return { status: res.statusCode, events: [res.json() as Record<string, any>] }
    const events = res.body.split('\n\n').filter((b) => b !== '').map((b) => b === 'data: [DONE]' ? '[DONE]' : JSON.parse(b.slice(6)) as Record<string, any>)
    return { status: res.statusCode, events }
  }
  return { ...ta, token, chat }
}

async function addProvider (a: TestApp & { token: string }, body: Record<string, unknown>): Promise<void> {
  const r = await a.app.inject({ method: 'POST', url: '/api/service/v1/settings/llm-providers', headers: { authorization: `Bearer ${a.token}` }, payload: body })
  if (r.statusCode !== 201) throw new Error(r.body)
}

t.test('OpenAI (and compatible): the answer streams chunk by chunk; the request carries the key, the model, the history and the tenant as system context', async (t) => {
  const fake = await fakeProvider(t, (_req, res) => {
    sse(res)
    for (const part of ['You have ', '2 agents', '.']) res.write(openaiChunk(part))
    res.end('data: [DONE]\n\n')
  })
  const a = await setup(t)
  await a.registerV1({ agent_type: 'custom', agent_id: 'alpha-bot' })
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${fake.url}/v1` })
  const r = await a.chat({ message: 'how many agents?', history: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], page_context: '/agents' })
  t.equal(r.status, 200)
  t.strictSame(r.events, [{ content: 'You have ' }, { content: '2 agents' }, { content: '.' }, '[DONE]'])
  const call = fake.seen[0] as Seen
  t.equal(call.path, '/v1/chat/completions')
  t.equal(call.headers.authorization, `Bearer ${KEY}`, 'the key is sent to the provider')
  t.match(call.body, { model: 'gpt-4o-mini', stream: true })
  t.strictSame(call.body.messages.slice(1), [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'how many agents?' }])
  t.match(call.body.messages[0], { role: 'system', content: /alpha-bot.*status active/s })
  t.match(call.body.messages[0].content, /portal page \/agents/)

  const used = (await a.app.inject({ method: 'GET', url: '/api/service/v1/settings/llm-providers', headers: { authorization: `Bearer ${a.token}` } })).json().providers[0]
  t.match(used, { provider: 'openai', lastUsedAt: /^\d{4}-/ }, 'the key\'s record shows when the assistant last used it')
  await addProvider(a, { provider: 'ollama', apiKey: 'local-key', baseUrl: `${fake.url}/v1` })
  t.equal((await a.chat({ message: 'hi', provider: 'ollama' })).status, 400, 'a compatible endpoint needs a model named')
  const viaOllama = await a.chat({ message: 'hi', provider: 'ollama', model: 'llama3.1' })
  t.equal(viaOllama.events.at(-1), '[DONE]')
  t.equal((fake.seen[1] as Seen).body.model, 'llama3.1')
})

t.test('Anthropic: the messages API stream (content_block_delta text) becomes the same content events', async (t) => {
  const fake = await fakeProvider(t, (_req, res) => {
    sse(res)
    res.write(anthropicEvent('message_start', { message: { id: 'm1' } }))
    res.write(anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }))
    res.write('event: ping\ndata: {"type": "ping"}\n\n')
    for (const text of ['Nothing ', 'was blocked.']) res.write(anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }))
    res.write(anthropicEvent('content_block_stop', { index: 0 }))
    res.write(anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn' } }))
    res.end(anthropicEvent('message_stop', {}))
  })
  const a = await setup(t)
  await addProvider(a, { provider: 'anthropic', apiKey: KEY, baseUrl: fake.url })
  const r = await a.chat({ message: 'what was blocked?', model: 'claude-sonnet-4-5' })
  t.strictSame(r.events, [{ content: 'Nothing ' }, { content: 'was blocked.' }, '[DONE]'])
  const call = fake.seen[0] as Seen
  t.equal(call.path, '/v1/messages')
  t.equal(call.headers['x-api-key'], KEY)
  t.equal(call.headers['anthropic-version'], '2023-06-01')
  t.match(call.body, { model: 'claude-sonnet-4-5', stream: true, system: /agentgov/, messages: [{ role: 'user', content: 'what was blocked?' }] })
})

t.test('a stream that breaks mid-answer ends with data: {"error"} then [DONE]; a refusal too, never with the key', async (t) => {
  let mode: 'break' | 'refuse' | 'short' = 'break'
  const fake = await fakeProvider(t, (_req, res) => {
    if (mode === 'refuse') {
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }))
      return
    }
    sse(res)
    res.write(openaiChunk('Partial '))
    if (mode === 'break') setTimeout(() => res.destroy(), 20)
    else res.end()
  })
  const a = await setup(t)
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${fake.url}/v1` })
  const broken = await a.chat({ message: 'hi' })
  t.equal(broken.events[0]?.constructor, Object)
  t.strictSame(broken.events[0], { content: 'Partial ' })
  t.match(broken.events[1], { error: /stream broke|ended before/ })
  t.equal(broken.events[2], '[DONE]')
  mode = 'short'
  const short = await a.chat({ message: 'hi' })
  t.match(short.events, [{ content: 'Partial ' }, { error: /ended before the answer was complete/ }, '[DONE]'], 'a stream without its end marker is an error too')
  mode = 'refuse'
  const refused = await a.chat({ message: 'hi' })
  t.match(refused.events, [{ error: /answered 401: Incorrect API key provided: \[key\]/ }, '[DONE]'])
  t.notMatch(JSON.stringify(refused.events), /PLAINTEXT/, 'the key never reaches the client')
})

t.test('a client that goes away aborts the upstream call', async (t) => {
  const fake = await fakeProvider(t, (_req, res) => {
    sse(res)
    res.write(openaiChunk('thinking'))
    // then silence: the answer never ends on its own
  })
  const a = await setup(t)
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${fake.url}/v1` })
  const address = await a.app.listen({ port: 0, host: '127.0.0.1' })
  const abort = new AbortController()
  const res = await request(`${address}/api/service/v1/assistant/chat`, {
    method: 'POST', headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hi' }), signal: abort.signal
  })
  const first = await new Promise<string>((resolve) => res.body.once('data', (c: Buffer) => resolve(c.toString())))
  t.match(first, /thinking/, 'the answer began')
  abort.abort()
  res.body.on('error', () => {})
  const closed = await Promise.race([(fake.seen[0] as Seen).closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 3000))])
  t.equal(closed, true, 'the provider\'s stream was closed by the control plane')
})

t.test('provider choice: the first enabled (openai before anthropic); a disabled provider is skipped; none enabled -> the local provider', async (t) => {
  const fake = await fakeProvider(t, (req, res) => {
    sse(res)
    if (req.url === '/v1/messages') {
      res.write(anthropicEvent('content_block_delta', { delta: { type: 'text_delta', text: 'from anthropic' } }))
      res.end(anthropicEvent('message_stop', {}))
    } else {
      res.write(openaiChunk('from openai'))
      res.end('data: [DONE]\n\n')
    }
  })
  const a = await setup(t)
  await addProvider(a, { provider: 'anthropic', apiKey: KEY, baseUrl: fake.url })
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${fake.url}/v1` })
  t.match((await a.chat({ message: 'hi' })).events, [{ content: 'from openai' }])
  t.match((await a.chat({ message: 'hi', provider: 'anthropic' })).events, [{ content: 'from anthropic' }])
  await a.app.inject({ method: 'PATCH', url: '/api/service/v1/settings/llm-providers', headers: { authorization: `Bearer ${a.token}` }, payload: { provider: 'openai', enabledForAssistant: false } })
  t.match((await a.chat({ message: 'hi' })).events, [{ content: 'from anthropic' }], 'openai disabled for the assistant: anthropic answers')
  t.equal((await a.chat({ message: 'hi', provider: 'openai' })).status, 400, 'asking for a disabled provider: 400')
  await a.app.inject({ method: 'PATCH', url: '/api/service/v1/settings/llm-providers', headers: { authorization: `Bearer ${a.token}` }, payload: { provider: 'anthropic', isActive: false } })
  t.match((await a.chat({ message: 'how many agents?' })).events, [{ content: /no agents registered yet/ }], 'none enabled: the local provider')
  t.match((await a.chat({ message: 'how many agents?', provider: 'local' })).events, [{ content: /no agents/ }])
})

t.test('GET /assistant/providers: each enabled provider with its models (live, or the registry with live=false), the local one last', async (t) => {
  const fake = await fakeProvider(t, () => {})
  const models = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ data: req.url === '/v1/models' ? [{ id: 'gpt-4o-mini' }, { id: 'o-custom' }] : [] }))
  })
  await new Promise<void>((resolve) => models.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { models.closeAllConnections(); models.close(() => resolve()) }))
  const base = `http://127.0.0.1:${(models.address() as AddressInfo).port}`
  t.ok(fake.url)
  const a = await setup(t)
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${base}/v1` })
  await addProvider(a, { provider: 'ollama', apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1' })
  const get = async (query: string): Promise<Array<Record<string, any>>> =>
    (await a.app.inject({ method: 'GET', url: `/api/service/v1/assistant/providers${query}`, headers: { authorization: `Bearer ${a.token}` } })).json().providers as Array<Record<string, any>>
  const all = await get('')
  t.strictSame(all.map((p) => [p.id, p.source]), [['openai', 'live'], ['ollama', 'registry'], ['local', 'builtin']], 'openai live; ollama unreachable: its registry section; local last')
  t.strictSame(all[0]?.models.map((m: { value: string }) => m.value), ['gpt-4o-mini', 'o-custom'])
  t.match(all[1], { name: 'ollama (OpenAI-compatible)' })
  const offline = await get('?live=false')
  t.equal(offline[0]?.source, 'registry', 'live=false: the registry')
  const tools = await get('?require_tools=true')
  t.strictSame(tools[0]?.models.map((m: { value: string }) => m.value), ['gpt-4o-mini'], 'require_tools: only models with function calling')
  t.notMatch(JSON.stringify(all), /PLAINTEXT/, 'no key in the list')
})

t.test('tools with OpenAI: the model calls a read-only tool, gets the store\'s answer, and answers in words', async (t) => {
  const fake = await fakeProvider(t, (_req, res, body) => {
    sse(res)
    const toolMessage = (body.messages as Array<{ role: string, content: string }>).find((m) => m.role === 'tool')
    if (toolMessage === undefined) {
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'call_1', function: { name: 'effective_policies', arguments: '{"agent_' } }] } }] })}\n\n`)
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: 'id":"tool-bot"}' } }] } }] })}\n\n`)
      res.end('data: [DONE]\n\n')
      return
    }
    const names = (JSON.parse(toolMessage.content) as Array<{ name: string }>).map((p) => p.name)
    res.write(openaiChunk(`tool-bot runs ${names.join(', ')}.`))
    res.end('data: [DONE]\n\n')
  })
  const a = await setup(t)
  await a.registerV1({ agent_type: 'custom', agent_id: 'tool-bot' })
  await a.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [{ name: 'no-shell', type: 'tool_permission', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { denied_tools: ['shell'] }, enforcement: 'enforce', priority: 0, is_active: true }])
  await a.app.services.directory.changed()
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${fake.url}/v1` })
  const r = await a.chat({ message: 'which policies apply to tool-bot?' })
  t.strictSame(r.events, [{ content: 'tool-bot runs no-shell.' }, '[DONE]'])
  t.equal(fake.seen.length, 2, 'two rounds: the tool call, then the answer')
  const first = fake.seen[0] as Seen
  t.strictSame(first.body.tools.map((x: { function: { name: string } }) => x.function.name), ['list_agents', 'get_agent', 'list_policies', 'effective_policies', 'recent_events', 'recent_blocks'], 'the read-only tools are offered')
  const second = (fake.seen[1] as Seen).body.messages as Array<Record<string, any>>
  t.match(second.at(-2), { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'effective_policies', arguments: '{"agent_id":"tool-bot"}' } }] })
  t.match(second.at(-1), { role: 'tool', tool_call_id: 'call_1' })
})

t.test('tools with Anthropic: tool_use blocks (input streamed as JSON deltas) are run and answered with tool_result', async (t) => {
  const fake = await fakeProvider(t, (_req, res, body) => {
    sse(res)
    const last = (body.messages as Array<{ role: string, content: unknown }>).at(-1)
    if (!Array.isArray(last?.content)) {
      res.write(anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }))
      res.write(anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Let me look. ' } }))
      res.write(anthropicEvent('content_block_start', { index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'list_agents', input: {} } }))
      res.write(anthropicEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }))
      res.write(anthropicEvent('message_delta', { delta: { stop_reason: 'tool_use' } }))
      res.end(anthropicEvent('message_stop', {}))
      return
    }
    const result = (last.content as Array<{ type: string, tool_use_id: string, content: string }>)[0]
    const count = (JSON.parse(result?.content ?? '[]') as unknown[]).length
    res.write(anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `${count} agents (${result?.tool_use_id}).` } }))
    res.end(anthropicEvent('message_stop', {}))
  })
  const a = await setup(t)
  await a.registerV1({ agent_type: 'custom', agent_id: 'one' })
  await a.registerV1({ agent_type: 'custom', agent_id: 'two' })
  await addProvider(a, { provider: 'anthropic', apiKey: KEY, baseUrl: fake.url })
  const r = await a.chat({ message: 'how many agents?' })
  t.strictSame(r.events, [{ content: 'Let me look. ' }, { content: '2 agents (toolu_1).' }, '[DONE]'])
  const second = (fake.seen[1] as Seen).body.messages as Array<Record<string, any>>
  t.match(second.at(-2), { role: 'assistant', content: [{ type: 'text', text: 'Let me look. ' }, { type: 'tool_use', id: 'toolu_1', name: 'list_agents', input: {} }] })
  t.match(second.at(-1), { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] })
  t.match((fake.seen[0] as Seen).body.tools[0], { name: 'list_agents', input_schema: { type: 'object' } })
})

t.test('tools: a model that never stops calling them is cut off with an error; a model without tool support is offered none', async (t) => {
  const fake = await fakeProvider(t, (_req, res) => {
    sse(res)
    res.write(`data: ${JSON.stringify({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c', function: { name: 'list_agents', arguments: '{}' } }] } }] })}\n\n`)
    res.end('data: [DONE]\n\n')
  })
  const a = await setup(t)
  await addProvider(a, { provider: 'openai', apiKey: KEY, baseUrl: `${fake.url}/v1` })
  const r = await a.chat({ message: 'loop' })
  t.match(r.events, [{ error: /kept calling tools/ }, '[DONE]'])
  t.equal(fake.seen.length, 5, 'the first round and four more, then no more')
  await addProvider(a, { provider: 'ollama', apiKey: 'k', baseUrl: `${fake.url}/v1` })
  await a.chat({ message: 'hi', provider: 'ollama', model: 'mistral' })
  t.equal((fake.seen.at(-1) as Seen).body.tools, undefined, 'mistral (no function calling in the registry): no tools offered')
})
