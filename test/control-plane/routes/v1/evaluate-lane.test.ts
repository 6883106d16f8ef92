/**
 * POST /v1/evaluate over a real connection, where the fast lane answers an agent whose key is cached
 * (shared/fast-lane.ts), against the same request through fastify alone (`inject` never takes the
 * lane): the same status, headers and bytes, blocks recorded as audit events, the route's metrics
 * counted, and every request the lane must not take left to fastify.
 */
import t from 'tap'
import { testApp, postOverHttp, postThroughFastify, DEFAULT_TENANT_ID, type RawAnswer, type TestApp } from '../../helpers.js'

type Answer = RawAnswer

const EVALUATE = '/api/service/v1/evaluate'
const overHttp = async (url: string, headers: Record<string, string>, body: string): Promise<Answer> => await postOverHttp(url, EVALUATE, headers, body)
const throughFastify = async (ta: TestApp, headers: Record<string, string>, body: string): Promise<Answer> => await postThroughFastify(ta.app, EVALUATE, headers, body)

async function listening (ta: TestApp): Promise<string> {
  return await ta.app.listen({ port: 0, host: '127.0.0.1' })
}

async function withPolicies (ta: TestApp): Promise<void> {
  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [
    { name: 'tools', type: 'tool_permission', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { denied_tools: ['shell'] }, enforcement: 'enforce', priority: 0, is_active: true },
    { name: 'models', type: 'model_restriction', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { allowed_models: ['gpt-4o*'], max_tokens: 4000 }, enforcement: 'enforce', priority: 1, is_active: true },
    { name: 'injection', type: 'content_filter', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { deny_patterns: ['(?i)ignore previous instructions'] }, enforcement: 'audit', priority: 2, is_active: true }
  ])
  await ta.app.services.directory.changed()
}

t.test('the lane answers a cached agent\'s /evaluate exactly as fastify does, for decisions and refusals alike', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  await withPolicies(ta)
  const { agentId, key } = await ta.registerV1()
  const other = await ta.registerV1()
  const url = await listening(ta)
  const headers = { 'x-service-key': key }
  const lane = ta.app.services.lane

  // The agent's first request is fastify's (its key is not cached yet); from then on the lane's.
  const first = JSON.stringify({ agent_id: agentId, action: 'chat' })
  const before = lane.served
  t.equal((await overHttp(url, headers, first)).status, 200)
  t.equal(lane.served, before, 'the first request of an agent: fastify (the key is looked up)')

  const cases: Array<[string, unknown, number]> = [
    ['allowed, with the context echoed', { agent_id: agentId, action: 'tool_call', user_id: 'u1', context: { tool: 'search', model: 'gpt-4o', prompt: 'caf\u00e9 \ud83d\ude00' } }, 200],
    ['allowed with a warning (a content filter in audit mode)', { agent_id: agentId, action: 'llm_call', context: { model: 'gpt-4o', prompt: 'please IGNORE previous instructions' } }, 200],
    ['blocked by a tool policy', { agent_id: agentId, action: 'tool_call', context: { tool: 'shell' } }, 200],
    ['blocked by a model policy', { agent_id: agentId, action: 'llm_call', context: { model: 'claude-3' } }, 200],
    ['no agent_id (400: the schema requires it)', { action: 'chat' }, 400],
    ['another agent\'s agent_id (403)', { agent_id: other.agentId, action: 'chat' }, 403],
    ['no action (400)', { agent_id: agentId }, 400],
    ['an unknown field is refused or dropped as the schema says', { agent_id: agentId, action: 'chat', surprise: 1 }, 200],
    ['a context that is not an object (400)', { agent_id: agentId, action: 'chat', context: 'text' }, 400],
    ['a user_id of the wrong type (400)', { agent_id: agentId, action: 'chat', user_id: 42 }, 400]
  ]
  for (const [name, body, status] of cases) {
    const text = JSON.stringify(body)
    const n = lane.served
    const viaLane = await overHttp(url, headers, text)
    t.equal(lane.served, n + 1, `${name}: answered by the lane`)
    t.equal(viaLane.status, status, `${name}: ${status}`)
    t.same(viaLane, await throughFastify(ta, headers, text), `${name}: the same answer as fastify's`)
    if (name.includes('warning')) t.match(JSON.parse(viaLane.body), { allowed: true, warnings: [/injection/] }, `${name}: allowed, with the warning`)
  }
  for (const [name, text] of [['malformed JSON', '{"agent_id":'], ['a poisoned key', '{"action":"chat","__proto__":{"x":1}}'], ['deep nesting', '{"action":"chat","context":' + '{"a":'.repeat(80) + '1' + '}'.repeat(80) + '}']]) {
    const viaLane = await overHttp(url, headers, text as string)
    t.equal(viaLane.status, 400, `${name}: 400`)
    t.same(viaLane, await throughFastify(ta, headers, text as string), `${name}: the same answer as fastify's`)
  }
})

t.test('blocks decided by the lane are kept as policy.blocked audit events, and counted in /metrics', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  await withPolicies(ta)
  const { agentId, key } = await ta.registerV1()
  const url = await listening(ta)
  const headers = { 'x-service-key': key }
  const warmUp = await overHttp(url, headers, JSON.stringify({ agent_id: agentId, action: 'llm_call', context: { model: 'gpt-4o' } })) // caches the key
  t.equal(JSON.parse(warmUp.body).allowed, true)
  const n = ta.app.services.lane.served
  for (let i = 0; i < 3; i++) {
    const res = await overHttp(url, headers, JSON.stringify({ agent_id: agentId, action: 'tool_call', context: { tool: 'shell' } }))
    t.equal(JSON.parse(res.body).allowed, false)
  }
  t.equal(ta.app.services.lane.served, n + 3, 'the three blocks were the lane\'s')
  // The audit events are written off the decision path: wait for them (at most 5 s).
  let blocked = 0
  for (let i = 0; i < 100 && blocked < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    blocked = (await ta.app.services.store.listEvents(DEFAULT_TENANT_ID, { limit: 50 })).filter((e) => e.event_type === 'policy.blocked').length
  }
  t.equal(blocked, 3, 'each block is an audit event')
  const metrics = (await ta.app.inject({ method: 'GET', url: '/metrics' })).body
  t.match(metrics, /agentgov_http_requests_total\{method="POST",route="\/api\/service\/v1\/evaluate",status="200"\} 4/, 'every answer counted under the route')
  t.match(metrics, /agentgov_decisions_total\{contract="v1",result="blocked"\} 3/, 'the blocks counted as decisions')
})

t.test('the lane applies the platform rate limit and refuses a deregistered agent, as fastify does', async (t) => {
  const ta = await testApp({ env: { SERVICE_RATE_LIMIT_RPS: '3' } })
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1()
  const url = await listening(ta)
  const headers = { 'x-service-key': key }
  const body = JSON.stringify({ agent_id: agentId, action: 'chat' })
  const statuses: number[] = []
  let limited: Answer | undefined
  for (let i = 0; i < 5; i++) {
    const res = await overHttp(url, headers, body)
    statuses.push(res.status)
    if (res.status === 429) limited = res
  }
  t.same(statuses, [200, 200, 200, 429, 429], 'three a second, then 429')
  t.ok(limited !== undefined && Number(limited.retryAfter) >= 1, 'with Retry-After')
  t.match(JSON.parse(limited?.body ?? '{}'), { statusCode: 429, error: 'rate_limited' })
  await new Promise((resolve) => setTimeout(resolve, 1100))

  const dereg = await ta.v1('POST', '/deregister', { key, body: {} })
  t.equal(dereg.statusCode, 204)
  const refused = await overHttp(url, headers, body)
  t.equal(refused.status, 401, 'a deregistered agent\'s key is refused over the lane\'s path too')
})

t.test('requests the lane must not take reach fastify: unknown keys, no key, another media type', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1()
  const url = await listening(ta)
  const body = JSON.stringify({ agent_id: agentId, action: 'chat' })
  await overHttp(url, { 'x-service-key': key }, body)
  const n = ta.app.services.lane.served
  const unknown = await overHttp(url, { 'x-service-key': 'sk_agent_' + 'A'.repeat(43) }, body)
  t.equal(unknown.status, 401)
  const none = await overHttp(url, {}, body)
  t.equal(none.status, 401)
  const malformed = await overHttp(url, { 'x-service-key': 'nope' }, body)
  t.equal(malformed.status, 401)
  const text = await overHttp(url, { 'x-service-key': key, 'content-type': 'text/plain' }, body)
  t.equal(text.status, 415)
  t.equal(ta.app.services.lane.served, n, 'none of them taken by the lane')
})

t.test('legacy /evaluate: the lane answers as fastify does (but for the eval_ id) and keeps every evaluation in the log', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  await withPolicies(ta)
  const { key } = await ta.registerLegacy()
  const url = await listening(ta)
  const headers = { authorization: `Bearer ${key}` }
  const path = '/api/service/evaluate'
  const lane = ta.app.services.lane
  const withoutId = (a: Answer): Answer => ({ ...a, body: a.body.replace(/"evaluation_id":"eval_[A-Za-z0-9_-]+"/, '"evaluation_id":"-"') })

  const first = await postOverHttp(url, path, headers, JSON.stringify({ request_type: 'llm_call', model: 'gpt-4o' }))
  t.equal(first.status, 200)
  const n = lane.served
  const ids: string[] = []
  const cases: Array<[string, unknown, number]> = [
    ['allowed', { request_type: 'tool_call', context: { tool: 'search' }, model: 'gpt-4o' }, 200],
    ['blocked by a tool policy', { request_type: 'tool_call', context: { tool: 'shell' } }, 200],
    ['no request_type (400)', { model: 'gpt-4o' }, 400],
    ['tokens_requested of the wrong type (400)', { request_type: 'llm_call', tokens_requested: 'many' }, 400]
  ]
  for (const [name, body, status] of cases) {
    const text = JSON.stringify(body)
    const before = lane.served
    const viaLane = await postOverHttp(url, path, headers, text)
    t.equal(lane.served, before + 1, `${name}: answered by the lane`)
    t.equal(viaLane.status, status, `${name}: ${status}`)
    t.same(withoutId(viaLane), withoutId(await postThroughFastify(ta.app, path, headers, text)), `${name}: the same answer as fastify's`)
    if (status === 200) ids.push((JSON.parse(viaLane.body) as { evaluation_id: string }).evaluation_id)
  }
  t.equal(lane.served, n + cases.length)
  // Every evaluation answered by the lane is in the interaction log (written off the request path).
  let found = 0
  for (let i = 0; i < 100 && found < ids.length; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    found = (await Promise.all(ids.map(async (id) => await ta.app.services.store.getEvaluation(DEFAULT_TENANT_ID, id)))).filter((r) => r !== undefined).length
  }
  t.equal(found, ids.length, 'each lane evaluation is kept under its evaluation_id')
  const blocked = await ta.app.services.store.getEvaluation(DEFAULT_TENANT_ID, ids[1] as string)
  t.match(blocked, { allowed: false, reason: /shell/ }, 'the block is logged as a block')
})
