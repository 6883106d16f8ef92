/**
 * Bad input on every agent endpoint that takes a body (v1 register, evaluate, events, heartbeat,
 * deregister; legacy register, evaluate, events, heartbeat), per decisions.md "Errors" and "Limits":
 * malformed JSON, non-object JSON, wrong types, missing fields, unknown enum values, bad timestamps,
 * non-slug agent_id, too many events (1,000 max), bodies over 1 MiB (413), non-JSON content types (415),
 * nesting deeper than 64 levels (400) and odd Unicode (accepted or a clean 4xx, never 5xx). Every error
 * body is `{statusCode, error, message}`, validation failures add `details: [{path, message}]` with a
 * JSON pointer. Unknown routes give a 404 `not_found` body.
 */
import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from './helpers.js'

type Body = Record<string, unknown>

interface Agent { agentId: string, key: string }

interface Ctx {
  ta: TestApp
  v1: Agent
  legacy: Agent
}

interface BodyEndpoint {
  name: string
  url: string
  /** Status of a successful call. */
  ok: number
  /** Credentials and the agent_id to name; deregister gets a fresh agent per request. */
  who: (c: Ctx) => Promise<{ headers: Record<string, string>, agentId: string }>
  valid: (agentId: string) => Body
  /** `valid` with `value` (an object) in a free-form field enclosed by `freeDepth` containers. */
  free: (agentId: string, value: Body) => Body
  freeDepth: number
  /** A valid body with `s` in every free-form string (and key) it has. */
  odd: (agentId: string, s: string) => Body
}

const MiB = 1024 * 1024
const now = (): string => new Date().toISOString()

const v1Auth = async (c: Ctx): Promise<{ headers: Record<string, string>, agentId: string }> =>
  ({ headers: { 'x-service-key': c.v1.key }, agentId: c.v1.agentId })
const legacyAuth = async (c: Ctx): Promise<{ headers: Record<string, string>, agentId: string }> =>
  ({ headers: { authorization: `Bearer ${c.legacy.key}` }, agentId: c.legacy.agentId })

const v1Event = (extra: Body = {}): Body => ({ type: 'tool.called', category: 'telemetry', timestamp: now(), user_id: 'u1', payload: { tool: 'search' }, ...extra })
const legacyEvent = (extra: Body = {}): Body => ({ type: 'llm.invoke', timestamp: now(), data: { model: 'gpt-4o' }, ...extra })
const metrics = { requests_processed: 10, errors_last_5min: 0, avg_latency_ms: 12.5 }

const ENDPOINTS: BodyEndpoint[] = [
  {
    name: 'v1 POST /register',
    url: '/api/service/v1/register',
    ok: 201,
    who: async (c) => ({ headers: { 'x-service-bootstrap': c.ta.token }, agentId: '' }),
    valid: () => ({ agent_type: 'custom' }),
    free: (_id, value) => ({ agent_type: 'custom', metadata: value }),
    freeDepth: 1,
    odd: (_id, s) => ({ agent_type: 'custom', name: s, capabilities: [s], deployment_id: s, metadata: { note: s, [s]: s } })
  },
  {
    name: 'v1 POST /evaluate',
    url: '/api/service/v1/evaluate',
    ok: 200,
    who: v1Auth,
    valid: (id) => ({ agent_id: id, action: 'tool_call', user_id: 'u1', context: { tool: 'search' } }),
    free: (id, value) => ({ agent_id: id, action: 'tool_call', context: value }),
    freeDepth: 1,
    odd: (id, s) => ({ agent_id: id, action: s, user_id: s, context: { tool: s, [s]: s, tool_input: { query: s } } })
  },
  {
    name: 'v1 POST /events',
    url: '/api/service/v1/events',
    ok: 202,
    who: v1Auth,
    valid: (id) => ({ agent_id: id, events: [v1Event()] }),
    free: (id, value) => ({ agent_id: id, events: [v1Event({ payload: value })] }),
    freeDepth: 3,
    odd: (id, s) => ({ agent_id: id, events: [v1Event({ id: `${s}-1`, type: s, user_id: s, payload: { note: s, [s]: s } })] })
  },
  {
    name: 'v1 POST /heartbeat',
    url: '/api/service/v1/heartbeat',
    ok: 202,
    who: v1Auth,
    valid: (id) => ({ agent_id: id, status: 'healthy', metrics }),
    free: (id, value) => ({ agent_id: id, status: 'healthy', telemetry: value }),
    freeDepth: 1,
    odd: (id, s) => ({ agent_id: id, status: 'healthy', metrics, version: s, telemetry: { note: s, [s]: s } })
  },
  {
    name: 'v1 POST /deregister',
    url: '/api/service/v1/deregister',
    ok: 204,
    who: async (c) => {
      const a = await c.ta.registerV1()
      return { headers: { 'x-service-key': a.key }, agentId: a.agentId }
    },
    valid: (id) => ({ agent_id: id }),
    free: (id, value) => ({ agent_id: id, extra: value }),
    freeDepth: 1,
    odd: (id, s) => ({ agent_id: id, note: s, [s]: s })
  },
  {
    name: 'legacy POST /register',
    url: '/api/service/register',
    ok: 201,
    who: async (c) => ({ headers: { authorization: `Bearer ${c.ta.tenantKey}` }, agentId: '' }),
    valid: () => ({ name: 'bad input agent' }),
    free: (_id, value) => ({ name: 'bad input agent', metadata: value }),
    freeDepth: 1,
    odd: (_id, s) => ({ name: s, capabilities: [s], deployment_id: s, metadata: { note: s, [s]: s } })
  },
  {
    name: 'legacy POST /evaluate',
    url: '/api/service/evaluate',
    ok: 200,
    who: legacyAuth,
    valid: () => ({ request_type: 'llm.invoke', model: 'gpt-4o', tokens_requested: 100, messages: [{ role: 'user', content: 'hi' }], context: { user_id: 'u1' } }),
    free: (_id, value) => ({ request_type: 'llm.invoke', context: value }),
    freeDepth: 1,
    odd: (_id, s) => ({ request_type: s, model: s, tokens_requested: 1, messages: [{ role: 'user', content: s }], context: { user_id: s, session_id: s, [s]: s } })
  },
  {
    name: 'legacy POST /events',
    url: '/api/service/events',
    ok: 202,
    who: legacyAuth,
    valid: () => ({ events: [legacyEvent()] }),
    free: (_id, value) => ({ events: [legacyEvent({ data: value })] }),
    freeDepth: 3,
    odd: (_id, s) => ({ events: [legacyEvent({ id: `${s}-1`, data: { user_id: s, note: s, [s]: s } })] })
  },
  {
    name: 'legacy POST /heartbeat',
    url: '/api/service/heartbeat',
    ok: 200,
    who: legacyAuth,
    valid: () => ({ status: 'healthy', metrics }),
    free: (_id, value) => ({ status: 'healthy', metrics: { ...metrics, extra: value } }),
    freeDepth: 2,
    odd: (_id, s) => ({ status: 'healthy', metrics: { ...metrics, [s]: s } })
  }
]

function endpoint (name: string): BodyEndpoint {
  const e = ENDPOINTS.find((x) => x.name === name)
  if (e === undefined) throw new Error(`no endpoint ${name}`)
  return e
}

async function setup (t: Test): Promise<Ctx> {
  // Many registrations below (deregister needs a fresh agent per request): lift the registration limit.
  const ta = await testApp({ env: { SERVICE_REGISTER_RATE_PER_MINUTE: '100000' } })
  t.teardown(() => ta.close())
  return { ta, v1: await ta.registerV1(), legacy: await ta.registerLegacy() }
}

async function send (c: Ctx, e: BodyEndpoint, payload: string | Buffer, opts: { contentType?: string | null, agentHeaders?: Record<string, string> } = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...(opts.agentHeaders ?? (await e.who(c)).headers) }
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'application/json'
  return await c.ta.app.inject({ method: 'POST', url: e.url, headers, payload })
}

/** Sends `body(agentId)` as JSON with the endpoint's credentials. */
async function sendJson (c: Ctx, e: BodyEndpoint, body: (agentId: string) => unknown): Promise<LightMyRequestResponse> {
  const who = await e.who(c)
  return await send(c, e, JSON.stringify(body(who.agentId)), { agentHeaders: who.headers })
}

function parsed (res: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(res.body)
  } catch {
    return undefined
  }
}

/** An error answer: status, `{statusCode, error, message}`, JSON content type; with `path`, details naming it. */
function expectError (t: Test, res: LightMyRequestResponse, status: number, code: string, label: string, path?: string): void {
  t.equal(res.statusCode, status, `${label} -> ${status}`)
  const body = parsed(res) as { details?: unknown } | undefined
  t.match(body, { statusCode: status, error: code, message: String }, `${label} -> body {statusCode: ${status}, error: "${code}", message}`)
  t.match(String(res.headers['content-type']), /^application\/json/, `${label} -> JSON content type`)
  if (path !== undefined) expectDetails(t, body, path, label)
}

function expectDetails (t: Test, body: { details?: unknown } | undefined, path: string, label: string): void {
  const details = body?.details
  const wellFormed = Array.isArray(details) && details.length > 0 &&
    details.every((d: { path?: unknown, message?: unknown }) => typeof d.path === 'string' && d.path.startsWith('/') && typeof d.message === 'string')
  t.ok(wellFormed, `${label} -> details is a non-empty list of {path: JSON pointer, message}`)
  const paths = Array.isArray(details) ? details.map((d: { path?: unknown }) => d.path) : []
  t.ok(paths.includes(path), `${label} -> details name path ${path} (got ${JSON.stringify(paths)})`)
}

/** Any 4xx must be a clean error body; a 5xx is never acceptable. */
function expectNo5xx (t: Test, res: LightMyRequestResponse, okStatus: number, label: string): void {
  t.ok(res.statusCode < 500, `${label} -> no 5xx (got ${res.statusCode})`)
  if (res.statusCode >= 400) {
    t.match(parsed(res), { statusCode: res.statusCode, error: String, message: String }, `${label} -> refused with a clean {statusCode, error, message} body`)
  } else {
    t.equal(res.statusCode, okStatus, `${label} -> accepted with ${okStatus}`)
    if (okStatus !== 204) t.not(parsed(res), undefined, `${label} -> the accepted answer is valid JSON`)
  }
}

/** `n` nested containers: objects, or (after the first object) arrays. */
function nest (n: number, kind: 'object' | 'array' = 'object'): Body {
  let inner: unknown = 'leaf'
  for (let i = 1; i < n; i++) inner = kind === 'object' ? { a: inner } : [inner]
  return { a: inner }
}

async function waitForCount (ta: TestApp, expected: number): Promise<number> {
  let n = await ta.app.services.store.countEvents(DEFAULT_TENANT_ID)
  for (let i = 0; i < 100 && n < expected; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    n = await ta.app.services.store.countEvents(DEFAULT_TENANT_ID)
  }
  return n
}

t.test('control: the valid body of every endpoint is accepted', async (t) => {
  const c = await setup(t)
  for (const e of ENDPOINTS) {
    const res = await sendJson(c, e, e.valid)
    t.equal(res.statusCode, e.ok, `${e.name}, valid body -> ${e.ok}`)
  }
})

t.test('malformed JSON on every body endpoint -> 400 bad_request with the error body shape', async (t) => {
  const c = await setup(t)
  const cases = [
    { name: 'truncated object', payload: '{"agent_id":' },
    { name: 'lone opening brace', payload: '{' },
    { name: 'trailing comma', payload: '{"a": 1,}' },
    { name: 'single-quoted keys', payload: "{'a': 1}" },
    { name: 'garbage after the object', payload: '{"a": 1} trailing' },
    { name: 'bare word', payload: 'hello' },
    { name: 'unescaped control character in a string', payload: '{"a": "x\u0001y"}' }
  ]
  for (const e of ENDPOINTS) {
    for (const k of cases) {
      expectError(t, await send(c, e, k.payload), 400, 'bad_request', `${e.name}, malformed JSON (${k.name})`)
    }
  }
})

t.test('malformed JSON -> 400 with details (decisions.md: "Malformed JSON ...: 400 with details")', async (t) => {
  const c = await setup(t)
  for (const e of ENDPOINTS) {
    const res = await send(c, e, '{"agent_id":')
    t.equal(res.statusCode, 400, `${e.name}, truncated JSON -> 400`)
    expectDetails(t, parsed(res) as { details?: unknown }, '/', `${e.name}, truncated JSON`)
  }
})

t.test('JSON that is not an object (array, string, number, boolean, null, empty body) -> 400 bad_request with details at "/"', async (t) => {
  const c = await setup(t)
  const cases = [
    { name: 'an empty array', payload: '[]' },
    { name: 'an array holding the valid body', payload: null },
    { name: 'a string', payload: '"text"' },
    { name: 'a number', payload: '42' },
    { name: 'a boolean', payload: 'true' },
    { name: 'null', payload: 'null' },
    { name: 'an empty body', payload: '' }
  ]
  for (const e of ENDPOINTS) {
    for (const k of cases) {
      // Deregister takes an empty body (decisions.md); `null` is checked separately (below).
      if (e.name === 'v1 POST /deregister' && (k.name === 'an empty body' || k.name === 'null')) continue
      const who = await e.who(c)
      const payload = k.payload ?? JSON.stringify([e.valid(who.agentId)])
      expectError(t, await send(c, e, payload, { agentHeaders: who.headers }), 400, 'bad_request', `${e.name}, body is ${k.name}`, '/')
    }
  }
})

t.test('v1 POST /deregister with the JSON body null -> 400 (decisions.md: "empty body or {}")', async (t) => {
  const c = await setup(t)
  const e = endpoint('v1 POST /deregister')
  const who = await e.who(c)
  expectError(t, await send(c, e, 'null', { agentHeaders: who.headers }), 400, 'bad_request', 'v1 POST /deregister, body null', '/')
  const agent = await c.ta.app.services.store.getAgent(DEFAULT_TENANT_ID, who.agentId)
  t.equal(agent?.status, 'active', 'v1 POST /deregister with body null leaves the agent active')
})

interface FieldCase {
  endpoint: string
  name: string
  body: (agentId: string) => unknown
  path: string
}

const v1Reg = (extra: Body): Body => ({ agent_type: 'custom', ...extra })
const legacyReg = (extra: Body): Body => ({ name: 'bad input agent', ...extra })
const v1Eval = (id: string, extra: Body): Body => ({ agent_id: id, action: 'tool_call', user_id: 'u1', context: {}, ...extra })
const legacyEval = (extra: Body): Body => ({ request_type: 'llm.invoke', ...extra })
const v1Events = (id: string, ...events: Body[]): Body => ({ agent_id: id, events })
const v1Hb = (id: string, extra: Body): Body => ({ agent_id: id, status: 'healthy', ...extra })
const legacyHb = (extra: Body): Body => ({ status: 'healthy', ...extra })
const without = (b: Body, key: string): Body => Object.fromEntries(Object.entries(b).filter(([k]) => k !== key))

const BAD_TIMESTAMPS: Array<[string, unknown]> = [
  ['a word', 'yesterday'],
  ['month 13', '2024-13-01T00:00:00Z'],
  ['February 30', '2024-02-30T10:00:00Z'],
  ['hour 25', '2024-01-01T25:00:00Z'],
  ['an empty string', ''],
  ['epoch seconds as a number', 1_700_000_000],
  ['null', null]
]

const NOT_SLUGS: Array<[string, unknown]> = [
  ['with a space', 'bad agent'],
  ['upper case', 'BadAgent'],
  ['leading hyphen', '-agent'],
  ['leading underscore', '_agent'],
  ['with a slash', 'a/b'],
  ['with a dot', 'a.b'],
  ['with an accent', 'agént'],
  ['an empty string', ''],
  ['101 characters', 'a'.repeat(101)],
  ['a number', 42]
]

const FIELD_CASES: FieldCase[] = [
  // v1 register
  { endpoint: 'v1 POST /register', name: 'agent_type missing', body: () => ({ name: 'x' }), path: '/agent_type' },
  { endpoint: 'v1 POST /register', name: 'unknown agent_type "skynet"', body: () => v1Reg({ agent_type: 'skynet' }), path: '/agent_type' },
  { endpoint: 'v1 POST /register', name: 'agent_type in the wrong case "Custom"', body: () => v1Reg({ agent_type: 'Custom' }), path: '/agent_type' },
  { endpoint: 'v1 POST /register', name: 'agent_type a number', body: () => v1Reg({ agent_type: 1 }), path: '/agent_type' },
  { endpoint: 'v1 POST /register', name: 'agent_type null', body: () => v1Reg({ agent_type: null }), path: '/agent_type' },
  ...NOT_SLUGS.map(([n, v]): FieldCase => ({ endpoint: 'v1 POST /register', name: `agent_id not a slug (${n})`, body: () => v1Reg({ agent_id: v }), path: '/agent_id' })),
  { endpoint: 'v1 POST /register', name: 'name a number', body: () => v1Reg({ name: 42 }), path: '/name' },
  { endpoint: 'v1 POST /register', name: 'capabilities a string, not a list', body: () => v1Reg({ capabilities: 'chat' }), path: '/capabilities' },
  { endpoint: 'v1 POST /register', name: 'capabilities holding a number', body: () => v1Reg({ capabilities: ['chat', 7] }), path: '/capabilities/1' },
  { endpoint: 'v1 POST /register', name: 'metadata a list', body: () => v1Reg({ metadata: ['x'] }), path: '/metadata' },
  { endpoint: 'v1 POST /register', name: 'metadata a string', body: () => v1Reg({ metadata: 'x' }), path: '/metadata' },
  { endpoint: 'v1 POST /register', name: 'deployment_id a number', body: () => v1Reg({ deployment_id: 5 }), path: '/deployment_id' },
  // v1 evaluate
  { endpoint: 'v1 POST /evaluate', name: 'agent_id missing', body: (id) => without(v1Eval(id, {}), 'agent_id'), path: '/agent_id' },
  { endpoint: 'v1 POST /evaluate', name: 'action missing', body: (id) => without(v1Eval(id, {}), 'action'), path: '/action' },
  { endpoint: 'v1 POST /evaluate', name: 'agent_id a number', body: (id) => v1Eval(id, { agent_id: 42 }), path: '/agent_id' },
  { endpoint: 'v1 POST /evaluate', name: 'action a number', body: (id) => v1Eval(id, { action: 42 }), path: '/action' },
  { endpoint: 'v1 POST /evaluate', name: 'action an object', body: (id) => v1Eval(id, { action: { a: 1 } }), path: '/action' },
  { endpoint: 'v1 POST /evaluate', name: 'user_id an object', body: (id) => v1Eval(id, { user_id: { id: 1 } }), path: '/user_id' },
  { endpoint: 'v1 POST /evaluate', name: 'context a string', body: (id) => v1Eval(id, { context: 'tool=shell' }), path: '/context' },
  { endpoint: 'v1 POST /evaluate', name: 'context a list', body: (id) => v1Eval(id, { context: [] }), path: '/context' },
  // v1 events
  { endpoint: 'v1 POST /events', name: 'agent_id missing', body: () => ({ events: [v1Event()] }), path: '/agent_id' },
  { endpoint: 'v1 POST /events', name: 'events missing', body: (id) => ({ agent_id: id }), path: '/events' },
  { endpoint: 'v1 POST /events', name: 'events an object', body: (id) => ({ agent_id: id, events: { 0: v1Event() } }), path: '/events' },
  { endpoint: 'v1 POST /events', name: 'an event that is a string', body: (id) => v1Events(id, 'event' as unknown as Body), path: '/events/0' },
  { endpoint: 'v1 POST /events', name: 'category missing', body: (id) => v1Events(id, without(v1Event(), 'category')), path: '/events/0/category' },
  { endpoint: 'v1 POST /events', name: 'unknown category "debug"', body: (id) => v1Events(id, v1Event({ category: 'debug' })), path: '/events/0/category' },
  { endpoint: 'v1 POST /events', name: 'category in upper case "AUDIT"', body: (id) => v1Events(id, v1Event({ category: 'AUDIT' })), path: '/events/0/category' },
  { endpoint: 'v1 POST /events', name: 'category a number', body: (id) => v1Events(id, v1Event({ category: 1 })), path: '/events/0/category' },
  { endpoint: 'v1 POST /events', name: 'unknown category in the third event', body: (id) => v1Events(id, v1Event(), v1Event(), v1Event({ category: 'debug' })), path: '/events/2/category' },
  { endpoint: 'v1 POST /events', name: 'type missing', body: (id) => v1Events(id, without(v1Event(), 'type')), path: '/events/0/type' },
  { endpoint: 'v1 POST /events', name: 'type a number', body: (id) => v1Events(id, v1Event({ type: 5 })), path: '/events/0/type' },
  { endpoint: 'v1 POST /events', name: 'timestamp missing', body: (id) => v1Events(id, without(v1Event(), 'timestamp')), path: '/events/0/timestamp' },
  ...BAD_TIMESTAMPS.map(([n, v]): FieldCase => ({ endpoint: 'v1 POST /events', name: `bad timestamp (${n})`, body: (id) => v1Events(id, v1Event({ timestamp: v })), path: '/events/0/timestamp' })),
  { endpoint: 'v1 POST /events', name: 'payload a list', body: (id) => v1Events(id, v1Event({ payload: [1, 2] })), path: '/events/0/payload' },
  { endpoint: 'v1 POST /events', name: 'payload a string', body: (id) => v1Events(id, v1Event({ payload: 'x' })), path: '/events/0/payload' },
  { endpoint: 'v1 POST /events', name: 'user_id a number', body: (id) => v1Events(id, v1Event({ user_id: 5 })), path: '/events/0/user_id' },
  { endpoint: 'v1 POST /events', name: '1001 events (more than 1,000)', body: (id) => ({ agent_id: id, events: Array.from({ length: 1001 }, () => v1Event()) }), path: '/events' },
  // v1 heartbeat
  { endpoint: 'v1 POST /heartbeat', name: 'agent_id missing', body: () => ({ status: 'healthy' }), path: '/agent_id' },
  { endpoint: 'v1 POST /heartbeat', name: 'status missing', body: (id) => ({ agent_id: id }), path: '/status' },
  { endpoint: 'v1 POST /heartbeat', name: 'unknown status "sleepy"', body: (id) => v1Hb(id, { status: 'sleepy' }), path: '/status' },
  { endpoint: 'v1 POST /heartbeat', name: 'status in upper case "HEALTHY"', body: (id) => v1Hb(id, { status: 'HEALTHY' }), path: '/status' },
  { endpoint: 'v1 POST /heartbeat', name: 'status a boolean', body: (id) => v1Hb(id, { status: true }), path: '/status' },
  { endpoint: 'v1 POST /heartbeat', name: 'metrics a string', body: (id) => v1Hb(id, { metrics: 'ok' }), path: '/metrics' },
  { endpoint: 'v1 POST /heartbeat', name: 'metrics.requests_processed a string', body: (id) => v1Hb(id, { metrics: { requests_processed: 'many' } }), path: '/metrics/requests_processed' },
  { endpoint: 'v1 POST /heartbeat', name: 'metrics.avg_latency_ms a list', body: (id) => v1Hb(id, { metrics: { avg_latency_ms: [1] } }), path: '/metrics/avg_latency_ms' },
  { endpoint: 'v1 POST /heartbeat', name: 'config_hash not of the form sha256:<hex>', body: (id) => v1Hb(id, { config_hash: 'md5:abc' }), path: '/config_hash' },
  { endpoint: 'v1 POST /heartbeat', name: 'secrets_hash a number', body: (id) => v1Hb(id, { secrets_hash: 5 }), path: '/secrets_hash' },
  { endpoint: 'v1 POST /heartbeat', name: 'version a number', body: (id) => v1Hb(id, { version: 1.2 }), path: '/version' },
  { endpoint: 'v1 POST /heartbeat', name: 'telemetry a list', body: (id) => v1Hb(id, { telemetry: [] }), path: '/telemetry' },
  // v1 deregister
  { endpoint: 'v1 POST /deregister', name: 'agent_id a number', body: () => ({ agent_id: 42 }), path: '/agent_id' },
  { endpoint: 'v1 POST /deregister', name: 'agent_id an object', body: (id) => ({ agent_id: { id } }), path: '/agent_id' },
  // legacy register
  { endpoint: 'legacy POST /register', name: 'name missing', body: () => ({ capabilities: ['llm:invoke'] }), path: '/name' },
  { endpoint: 'legacy POST /register', name: 'name a number', body: () => legacyReg({ name: 5 }), path: '/name' },
  ...NOT_SLUGS.map(([n, v]): FieldCase => ({ endpoint: 'legacy POST /register', name: `agent_id not a slug (${n})`, body: () => legacyReg({ agent_id: v }), path: '/agent_id' })),
  { endpoint: 'legacy POST /register', name: 'capabilities a string, not a list', body: () => legacyReg({ capabilities: 'llm:invoke' }), path: '/capabilities' },
  { endpoint: 'legacy POST /register', name: 'deployment_id a number', body: () => legacyReg({ deployment_id: 5 }), path: '/deployment_id' },
  { endpoint: 'legacy POST /register', name: 'metadata a list', body: () => legacyReg({ metadata: [] }), path: '/metadata' },
  // legacy evaluate
  { endpoint: 'legacy POST /evaluate', name: 'request_type missing', body: () => ({ model: 'gpt-4o' }), path: '/request_type' },
  { endpoint: 'legacy POST /evaluate', name: 'request_type a number', body: () => legacyEval({ request_type: 5 }), path: '/request_type' },
  { endpoint: 'legacy POST /evaluate', name: 'tokens_requested a numeric string', body: () => legacyEval({ tokens_requested: '100' }), path: '/tokens_requested' },
  { endpoint: 'legacy POST /evaluate', name: 'tokens_requested a fraction', body: () => legacyEval({ tokens_requested: 1.5 }), path: '/tokens_requested' },
  { endpoint: 'legacy POST /evaluate', name: 'model a number', body: () => legacyEval({ model: 4 }), path: '/model' },
  { endpoint: 'legacy POST /evaluate', name: 'messages a string', body: () => legacyEval({ messages: 'hi' }), path: '/messages' },
  { endpoint: 'legacy POST /evaluate', name: 'context a list', body: () => legacyEval({ context: [] }), path: '/context' },
  // legacy events
  { endpoint: 'legacy POST /events', name: 'events missing', body: () => ({}), path: '/events' },
  { endpoint: 'legacy POST /events', name: 'events a string', body: () => ({ events: 'x' }), path: '/events' },
  { endpoint: 'legacy POST /events', name: 'type missing', body: () => ({ events: [without(legacyEvent(), 'type')] }), path: '/events/0/type' },
  { endpoint: 'legacy POST /events', name: 'unknown event type "llm.exploded"', body: () => ({ events: [legacyEvent({ type: 'llm.exploded' })] }), path: '/events/0/type' },
  { endpoint: 'legacy POST /events', name: 'a v1-style free-form type "tool.called"', body: () => ({ events: [legacyEvent({ type: 'tool.called' })] }), path: '/events/0/type' },
  { endpoint: 'legacy POST /events', name: 'type a number', body: () => ({ events: [legacyEvent({ type: 3 })] }), path: '/events/0/type' },
  { endpoint: 'legacy POST /events', name: 'timestamp missing', body: () => ({ events: [without(legacyEvent(), 'timestamp')] }), path: '/events/0/timestamp' },
  ...BAD_TIMESTAMPS.map(([n, v]): FieldCase => ({ endpoint: 'legacy POST /events', name: `bad timestamp (${n})`, body: () => ({ events: [legacyEvent({ timestamp: v })] }), path: '/events/0/timestamp' })),
  { endpoint: 'legacy POST /events', name: 'data a list', body: () => ({ events: [legacyEvent({ data: [] })] }), path: '/events/0/data' },
  { endpoint: 'legacy POST /events', name: 'evaluation_id a number', body: () => ({ events: [legacyEvent({ evaluation_id: 7 })] }), path: '/events/0/evaluation_id' },
  { endpoint: 'legacy POST /events', name: '1001 events (more than 1,000)', body: () => ({ events: Array.from({ length: 1001 }, () => legacyEvent()) }), path: '/events' },
  // legacy heartbeat
  { endpoint: 'legacy POST /heartbeat', name: 'status missing', body: () => ({ metrics }), path: '/status' },
  { endpoint: 'legacy POST /heartbeat', name: 'unknown status "sleepy"', body: () => legacyHb({ status: 'sleepy' }), path: '/status' },
  { endpoint: 'legacy POST /heartbeat', name: 'status a number', body: () => legacyHb({ status: 1 }), path: '/status' },
  { endpoint: 'legacy POST /heartbeat', name: 'metrics a string', body: () => legacyHb({ metrics: 'ok' }), path: '/metrics' },
  { endpoint: 'legacy POST /heartbeat', name: 'metrics.errors_last_5min a string', body: () => legacyHb({ metrics: { errors_last_5min: 'none' } }), path: '/metrics/errors_last_5min' }
]

t.test('wrong field types, missing required fields, unknown enum values, bad timestamps, non-slug agent_id, >1000 events -> 400 bad_request with details naming the JSON pointer', async (t) => {
  const c = await setup(t)
  const countBefore = await c.ta.app.services.store.countEvents(DEFAULT_TENANT_ID)
  const agentsBefore = (await c.ta.app.services.store.listAgents(DEFAULT_TENANT_ID)).length
  let deregisterAgents = 0
  for (const k of FIELD_CASES) {
    const e = endpoint(k.endpoint)
    if (e.name === 'v1 POST /deregister') deregisterAgents++
    expectError(t, await sendJson(c, e, k.body), 400, 'bad_request', `${k.endpoint}, ${k.name}`, k.path)
  }
  t.equal(await c.ta.app.services.store.countEvents(DEFAULT_TENANT_ID), countBefore + deregisterAgents,
    'no event from a refused batch is stored (only the registration audit events of the fresh deregister agents)')
  t.equal((await c.ta.app.services.store.listAgents(DEFAULT_TENANT_ID)).length, agentsBefore + deregisterAgents,
    'no refused register request creates an agent')
})

t.test('exactly 1,000 events in one batch is accepted on both contracts (the limit is inclusive)', async (t) => {
  const c = await setup(t)
  const v1 = await sendJson(c, endpoint('v1 POST /events'), (id) => ({ agent_id: id, events: Array.from({ length: 1000 }, () => v1Event()) }))
  t.equal(v1.statusCode, 202, 'v1 POST /events, 1000 events -> 202')
  t.equal(v1.json().accepted, 1000, 'v1 POST /events, 1000 events -> accepted 1000')
  const legacy = await sendJson(c, endpoint('legacy POST /events'), () => ({ events: Array.from({ length: 1000 }, () => legacyEvent()) }))
  t.equal(legacy.statusCode, 202, 'legacy POST /events, 1000 events -> 202')
  t.equal(legacy.json().accepted, 1000, 'legacy POST /events, 1000 events -> accepted 1000')
})

t.test('one bad event in a batch of 10 rejects the whole batch on both contracts: nothing is stored', async (t) => {
  const c = await setup(t)
  const { ta } = c
  const cases = [
    { e: endpoint('v1 POST /events'), bad: (id: string) => ({ agent_id: id, events: Array.from({ length: 10 }, (_, i) => v1Event(i === 7 ? { category: 'debug' } : { id: `ev-${i}` })) }), path: '/events/7/category', good: (id: string) => ({ agent_id: id, events: Array.from({ length: 10 }, (_, i) => v1Event({ id: `ev-${i}` })) }) },
    { e: endpoint('legacy POST /events'), bad: () => ({ events: Array.from({ length: 10 }, (_, i) => legacyEvent(i === 7 ? { type: 'llm.exploded' } : { id: `lev-${i}` })) }), path: '/events/7/type', good: () => ({ events: Array.from({ length: 10 }, (_, i) => legacyEvent({ id: `lev-${i}` })) }) }
  ]
  for (const k of cases) {
    const before = await ta.app.services.store.countEvents(DEFAULT_TENANT_ID)
    expectError(t, await sendJson(c, k.e, k.bad), 400, 'bad_request', `${k.e.name}, batch of 10 with event 7 invalid`, k.path)
    t.equal(await ta.app.services.store.countEvents(DEFAULT_TENANT_ID), before, `${k.e.name}, batch of 10 with one bad event -> event count unchanged`)
    // The same batch, fixed: exactly 10 more events, so none of the refused batch arrived late either.
    const ok = await sendJson(c, k.e, k.good)
    t.equal(ok.statusCode, 202, `${k.e.name}, the same batch of 10 without the bad event -> 202`)
    t.equal(await waitForCount(ta, before + 10), before + 10, `${k.e.name}, after the refused batch and the fixed one exactly 10 events are stored`)
  }
})

t.test('a body over 1 MiB -> 413 payload_too_large on every body endpoint; exactly 1 MiB is accepted', async (t) => {
  const c = await setup(t)
  for (const e of ENDPOINTS) {
    for (const [size, expectOk] of [[MiB + 1, false], [MiB, true], [5 * MiB, false]] as Array<[number, boolean]>) {
      const who = await e.who(c)
      const base = JSON.stringify(e.free(who.agentId, { pad: '' }))
      const payload = JSON.stringify(e.free(who.agentId, { pad: 'x'.repeat(size - Buffer.byteLength(base)) }))
      t.equal(Buffer.byteLength(payload), size, `${e.name}: setup body is ${size} bytes`)
      const res = await send(c, e, payload, { agentHeaders: who.headers })
      if (expectOk) t.equal(res.statusCode, e.ok, `${e.name}, body of exactly 1 MiB -> ${e.ok}`)
      else expectError(t, res, 413, 'payload_too_large', `${e.name}, body of ${size} bytes (over 1 MiB)`)
    }
  }
})

t.test('a non-JSON or missing content type -> 415 unsupported_media_type on every body endpoint; application/json with a charset is accepted', async (t) => {
  const c = await setup(t)
  const types: Array<string | null> = ['application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=xyz', 'application/octet-stream', 'image/png', null]
  for (const e of ENDPOINTS) {
    for (const type of types) {
      const who = await e.who(c)
      const res = await send(c, e, JSON.stringify(e.valid(who.agentId)), { contentType: type, agentHeaders: who.headers })
      expectError(t, res, 415, 'unsupported_media_type', `${e.name}, content-type ${type ?? '(none)'} with a JSON body`)
    }
    const who = await e.who(c)
    const res = await send(c, e, JSON.stringify(e.valid(who.agentId)), { contentType: 'application/json; charset=utf-8', agentHeaders: who.headers })
    t.equal(res.statusCode, e.ok, `${e.name}, content-type application/json; charset=utf-8 -> ${e.ok}`)
  }
})

t.test('content-type text/plain -> 415 unsupported_media_type (bodies are JSON)', async (t) => {
  const c = await setup(t)
  for (const e of ENDPOINTS) {
    const who = await e.who(c)
    const res = await send(c, e, JSON.stringify(e.valid(who.agentId)), { contentType: 'text/plain', agentHeaders: who.headers })
    expectError(t, res, 415, 'unsupported_media_type', `${e.name}, content-type text/plain with a JSON body`)
  }
})

t.test('JSON nested deeper than 64 levels -> 400 bad_request on every body endpoint; 64 levels and brackets inside strings are accepted', async (t) => {
  const c = await setup(t)
  for (const e of ENDPOINTS) {
    // 100,000 levels are written as text: JSON.stringify itself cannot go that deep.
    const hostile = 100_000 - e.freeDepth - 1
    const cases: Array<{ name: string, value: Body, raw?: string, status: number }> = [
      { name: '65 levels of objects', value: nest(65 - e.freeDepth), status: 400 },
      { name: '65 levels of arrays', value: nest(65 - e.freeDepth, 'array'), status: 400 },
      { name: '100,000 levels of arrays', value: { a: 'DEEP' }, raw: '['.repeat(hostile) + '1' + ']'.repeat(hostile), status: 400 },
      { name: 'exactly 64 levels of objects', value: nest(64 - e.freeDepth), status: e.ok },
      { name: 'exactly 64 levels of arrays', value: nest(64 - e.freeDepth, 'array'), status: e.ok },
      { name: '200 opening brackets inside a string', value: { text: '{['.repeat(200) }, status: e.ok }
    ]
    for (const k of cases) {
      const who = await e.who(c)
      const text = JSON.stringify(e.free(who.agentId, k.value))
      const payload = k.raw === undefined ? text : text.replace('"DEEP"', k.raw)
      const res = await send(c, e, payload, { agentHeaders: who.headers })
      if (k.status === 400) expectError(t, res, 400, 'bad_request', `${e.name}, ${k.name}`)
      else t.equal(res.statusCode, k.status, `${e.name}, ${k.name} -> ${k.status}`)
    }
  }
})

t.test('odd Unicode in free-form fields (lone surrogates, NUL, RTL marks, emoji, noncharacters, invalid UTF-8) -> accepted or a clean 4xx, never 5xx', async (t) => {
  const c = await setup(t)
  const odd: Array<[string, string]> = [
    ['lone high surrogate \\ud800', '\ud800'],
    ['lone low surrogate \\udfff between letters', 'x\udfffy'],
    ['reversed surrogate pair', '\udc00\ud800'],
    ['NUL \\u0000', 'a\u0000b'],
    ['RTL override, RLM and LRM', '\u202eevil\u202c\u200f\u200e'],
    ['emoji with ZWJ, skin tone and a flag', '👩🏽‍💻🇺🇳'],
    ['BOM and noncharacters', '\ufeff\uffff\ufffe'],
    ['stacked combining marks', 'e\u0301\u0302\u0303\u0304'],
    ['C1 control and line/paragraph separators', '\u0085\u2028\u2029']
  ]
  for (const e of ENDPOINTS) {
    for (const [name, s] of odd) {
      const who = await e.who(c)
      const payload = JSON.stringify(e.odd(who.agentId, s))
      if (name.includes('surrogate')) t.match(payload, /\\ud[89a-f][0-9a-f]{2}/, `${e.name}: setup, the lone surrogate travels escaped in the JSON text`)
      const res = await send(c, e, payload, { agentHeaders: who.headers })
      expectNo5xx(t, res, e.ok, `${e.name}, ${name} in free-form fields`)
      // v1 evaluate echoes the request context: the odd string comes back unchanged.
      if (e.name === 'v1 POST /evaluate' && res.statusCode === 200) {
        t.same(res.json().context, (JSON.parse(payload) as Body).context, `${e.name}, ${name}: the context is echoed unchanged`)
      }
      // A registered agent with an odd name still gets its config.
      if (res.statusCode === 201) {
        const key = res.json().api_key as string
        const cfg = e.name.startsWith('v1')
          ? await c.ta.v1('GET', `/config/${res.json().agent_id as string}`, { key })
          : await c.ta.legacy('GET', '/config', { key })
        t.equal(cfg.statusCode, 200, `${e.name}, ${name}: the new agent's config -> 200`)
      }
    }
    // Bytes that are not UTF-8 at all inside a JSON string.
    const who = await e.who(c)
    const text = JSON.stringify(e.odd(who.agentId, 'INVALID_UTF8'))
    const [head, ...rest] = text.split('INVALID_UTF8')
    const payload = Buffer.concat([Buffer.from(head ?? ''), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from(rest.join('INVALID_UTF8'))])
    expectNo5xx(t, await send(c, e, payload, { agentHeaders: who.headers }), e.ok, `${e.name}, invalid UTF-8 bytes inside JSON strings`)
  }
  // The service still answers normally afterwards.
  const after = await c.ta.v1('GET', `/config/${c.v1.agentId}`, { key: c.v1.key })
  t.equal(after.statusCode, 200, 'after the odd-Unicode requests v1 GET /config still answers 200')
})

t.test('unknown routes and unknown methods -> 404 not_found with the error body shape', async (t) => {
  const c = await setup(t)
  const routes: Array<{ method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, body?: string }> = [
    { method: 'GET', url: '/api/service/v1/nope' },
    { method: 'POST', url: '/api/service/v1/nope', body: '{}' },
    { method: 'GET', url: '/api/service/v1/config' },
    { method: 'GET', url: '/api/service/v1/config/a/b' },
    { method: 'GET', url: '/api/service/v1/evaluate' },
    { method: 'GET', url: '/api/service/v1/register' },
    { method: 'PUT', url: '/api/service/v1/heartbeat', body: '{}' },
    { method: 'DELETE', url: `/api/service/v1/config/${c.v1.agentId}` },
    { method: 'PATCH', url: '/api/service/v1/events', body: '{}' },
    { method: 'GET', url: '/api/service/v2/config/x' },
    { method: 'GET', url: '/api/service/nope' },
    { method: 'GET', url: '/api/service/config/x' },
    { method: 'POST', url: '/api/service/deregister', body: '{}' },
    { method: 'GET', url: '/api/other/v1/secrets' },
    { method: 'GET', url: '/api/service/v1/nope?x=1' }
  ]
  for (const r of routes) {
    const res = await c.ta.app.inject({
      method: r.method,
      url: r.url,
      headers: { 'x-service-key': c.v1.key, ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(r.body === undefined ? {} : { payload: r.body })
    })
    expectError(t, res, 404, 'not_found', `${r.method} ${r.url} (no such route)`)
  }
})
