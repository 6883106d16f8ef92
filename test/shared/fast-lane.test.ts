/**
 * The fast lane (shared/fast-lane.ts) on a small app built as both servers build theirs: every answer
 * it gives over HTTP equals the answer fastify gives to the same request through `inject` (which never
 * takes the lane), status, headers and bytes, and every request it must not take reaches fastify
 * untouched.
 */
import t from 'tap'
import { request as httpRequest } from 'node:http'
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify'
import { FastLane } from '../../shared/fast-lane.js'
import { errorReply, renderError, useJsonBodies } from '../../shared/http.js'
import { ServiceError, rateLimited, unauthorized } from '../../shared/errors.js'

const LIMIT = 2048

const EchoBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', maxLength: 40 },
    n: { type: 'integer', default: 7 },
    tags: { type: 'array', items: { type: 'string' } },
    nested: { type: 'object' }
  }
}

interface Caller { token: string }

/** The onRequest check both paths run: token `ok` passes, `slow` is rate limited, anything else is 401. */
function admitToken (token: unknown): void {
  if (token === 'slow') throw rateLimited(3)
  if (token !== 'ok') throw unauthorized('bad token')
}

/** The handler both paths run. */
function answer (body: Record<string, unknown>): string | Promise<string> {
  if (body.name === 'boom') throw new Error('the handler failed')
  if (body.name === 'forbidden') throw new ServiceError('forbidden', 'not yours')
  const json = JSON.stringify({ name: body.name, n: body.n, keys: Object.keys(body).sort(), tags: body.tags ?? [] })
  return body.name === 'later' ? new Promise((resolve) => setTimeout(() => resolve(json), 5)) : json
}

interface Built {
  app: FastifyInstance
  lane: FastLane
  url: string
  served: number[]
}

async function build (enabled = true, options: { keepAliveTimeout?: number } = {}): Promise<Built> {
  const lane = new FastLane(enabled)
  const app = Fastify({ logger: false, bodyLimit: LIMIT, serverFactory: lane.serverFactory, forceCloseConnections: true, ajv: { customOptions: { coerceTypes: false } }, ...options })
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const { body, retryAfter } = errorReply(err)
    if (retryAfter !== undefined) reply.header('retry-after', retryAfter)
    reply.code(body.statusCode).send(body)
  })
  lane.attach(app, { bodyLimit: LIMIT, parse: useJsonBodies(app, LIMIT), renderError })
  const served: number[] = []
  await app.register(async (api) => {
    api.addHook('onRequest', async (req) => admitToken(req.headers['x-token']))
    api.post('/echo', { schema: { body: EchoBody } }, (req, reply) => {
      const out = answer(req.body as Record<string, unknown>)
      if (typeof out === 'string') {
        reply.type('application/json; charset=utf-8').send(out)
        return
      }
      return out.then((json) => { reply.type('application/json; charset=utf-8').send(json) })
    })
    lane.add<Caller>(api, {
      path: '/api/echo',
      bodySchema: EchoBody,
      claim: (req) => {
        if (req.headers['x-claim'] === 'throw') throw new Error('the claim failed')
        return req.headers['x-claim'] === 'no' ? undefined : { token: String(req.headers['x-token']) }
      },
      admit: (c) => admitToken(c.token),
      answer: (_c, body) => answer(body),
      served: (_c, status) => { served.push(status) }
    })
  }, { prefix: '/api' })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())
  return { app, lane, url, served }
}

interface Answer { status: number, type: string | undefined, retryAfter: string | undefined, body: string }

interface Sent {
  method?: string
  path?: string
  headers?: Record<string, string>
  body?: string
}

/** The request over a real connection (the lane may take it). */
async function overHttp (b: Built, s: Sent): Promise<Answer> {
  const target = new URL(s.path ?? '/api/echo', b.url)
  return await new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'x-token': 'ok', ...s.headers }
    if (s.body !== undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = Buffer.byteLength(s.body)
    const req = httpRequest(target, { method: s.method ?? 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode as number, type: res.headers['content-type'], retryAfter: res.headers['retry-after'] as string | undefined, body: text }))
    })
    req.on('error', reject)
    req.end(s.body)
  })
}

/** The same request through fastify alone. */
async function throughFastify (b: Built, s: Sent): Promise<Answer> {
  const res = await b.app.inject({
    method: (s.method ?? 'POST') as 'POST',
    url: s.path ?? '/api/echo',
    headers: { 'content-type': 'application/json', 'x-token': 'ok', ...s.headers },
    ...(s.body !== undefined ? { payload: s.body } : {})
  })
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, retryAfter: res.headers['retry-after'] as string | undefined, body: res.body }
}

const deep = '{"name":"deep","nested":' + '{"a":'.repeat(70) + '1' + '}'.repeat(70) + '}'

/** Requests the lane takes: its answer equals fastify's. */
const TAKEN: Array<[string, Sent, number]> = [
  ['a valid body', { body: JSON.stringify({ name: 'ada', n: 2 }) }, 200],
  ['a default filled in by the schema', { body: JSON.stringify({ name: 'ada' }) }, 200],
  ['an extra property removed by the schema', { body: JSON.stringify({ name: 'ada', extra: true }) }, 200],
  ['a charset parameter', { body: JSON.stringify({ name: 'ada' }), headers: { 'content-type': 'application/json; charset=utf-8' } }, 200],
  ['escaped and non-ASCII text', { body: '{"name":"caf\\u00e9 \u00e9t\u00e9 \ud83d\ude00"}' }, 200],
  ['a byte-order mark', { body: '\ufeff{"name":"bom"}' }, 200],
  ['a "constructor" inside a string value', { body: JSON.stringify({ name: 'the constructor' }) }, 200],
  ['an answer that is a promise', { body: JSON.stringify({ name: 'later' }) }, 200],
  ['a missing required field', { body: JSON.stringify({ n: 1 }) }, 400],
  ['a wrong type', { body: JSON.stringify({ name: 5 }) }, 400],
  ['a string too long', { body: JSON.stringify({ name: 'x'.repeat(41) }) }, 400],
  ['a body that is an array', { body: '[1,2]' }, 400],
  ['a blank body', { body: '   ' }, 400],
  ['malformed JSON', { body: '{"name": "ada"' }, 400],
  ['a __proto__ key', { body: '{"name":"p","__proto__":{"x":1}}' }, 400],
  ['an escaped __proto__ key', { body: '{"name":"p","\\u005f_proto__":{"x":1}}' }, 400],
  ['nesting deeper than 64 levels', { body: deep }, 400],
  ['a refused token (401)', { body: JSON.stringify({ name: 'ada' }), headers: { 'x-token': 'nope' } }, 401],
  ['a rate-limited token (429 with Retry-After)', { body: JSON.stringify({ name: 'ada' }), headers: { 'x-token': 'slow' } }, 429],
  ['a refusal thrown by the handler (403)', { body: JSON.stringify({ name: 'forbidden' }) }, 403],
  ['a handler that fails (500, no detail)', { body: JSON.stringify({ name: 'boom' }) }, 500]
]

t.test('requests the lane takes: the same status, content type, Retry-After and bytes as fastify', async (t) => {
  const b = await build()
  for (const [name, sent, status] of TAKEN) {
    const before = b.lane.served
    const lane = await overHttp(b, sent)
    t.equal(b.lane.served, before + 1, `${name}: answered by the lane`)
    const fastify = await throughFastify(b, sent)
    t.equal(lane.status, status, `${name}: status ${status}`)
    t.same(lane, fastify, `${name}: the lane's answer is fastify's`)
  }
  t.same(b.served, TAKEN.map(([, , status]) => status), 'the route\'s served hook saw every lane answer, with its status')
})

/** Requests the lane leaves to fastify, before reading their bodies. */
const LEFT: Array<[string, Sent, number]> = [
  ['a request the route does not claim', { body: JSON.stringify({ name: 'ada' }), headers: { 'x-claim': 'no' } }, 200],
  ['a claim that throws', { body: JSON.stringify({ name: 'ada' }), headers: { 'x-claim': 'throw' } }, 200],
  ['another media type (415)', { body: 'name=ada', headers: { 'content-type': 'text/plain' } }, 415],
  ['an unusual spelling of the JSON media type', { body: JSON.stringify({ name: 'ada' }), headers: { 'content-type': 'application/json; charset="utf-8"' } }, 200],
  ['a query string', { path: '/api/echo?x=1', body: JSON.stringify({ name: 'ada' }) }, 200],
  ['an empty body (content-length 0)', { body: '' }, 400],
  ['a body over the limit (413)', { body: JSON.stringify({ name: 'ada', tags: ['x'.repeat(LIMIT)] }) }, 413],
  ['another method (404)', { method: 'PUT', body: JSON.stringify({ name: 'ada' }) }, 404],
  ['another path (404)', { path: '/api/other', body: JSON.stringify({ name: 'ada' }) }, 404]
]

t.test('requests the lane leaves to fastify: fastify answers them, as it would alone', async (t) => {
  const b = await build()
  for (const [name, sent, status] of LEFT) {
    const before = b.lane.served
    const http = await overHttp(b, sent)
    t.equal(b.lane.served, before, `${name}: not taken by the lane`)
    t.equal(http.status, status, `${name}: status ${status}`)
    t.same(http, await throughFastify(b, sent), `${name}: fastify's answer`)
  }
  t.same(b.served, [], 'the lane\'s served hook never ran')
})

t.test('a chunked body (no content-length) is left to fastify', async (t) => {
  const b = await build()
  const sent = { body: JSON.stringify({ name: 'chunked' }), headers: { 'transfer-encoding': 'chunked' } }
  const res = await overHttp(b, sent)
  t.equal(res.status, 200)
  t.equal(b.lane.served, 0)
  t.same(JSON.parse(res.body), { name: 'chunked', n: 7, keys: ['n', 'name'], tags: [] })
})

t.test('a client that goes away mid-body: nothing is answered, the server keeps serving', async (t) => {
  const b = await build()
  await new Promise<void>((resolve) => {
    const req = httpRequest(new URL('/api/echo', b.url), { method: 'POST', headers: { 'content-type': 'application/json', 'x-token': 'ok', 'content-length': 100 } })
    req.on('error', () => resolve())
    req.write('{"name":')
    setTimeout(() => { req.destroy(); resolve() }, 50)
  })
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(b.lane.served, 0, 'no answer for the abandoned request')
  const next = await overHttp(b, { body: JSON.stringify({ name: 'after' }) })
  t.equal(next.status, 200)
  t.equal(b.lane.served, 1)
})

t.test('a lane built disabled (debug logging) takes nothing', async (t) => {
  const b = await build(false)
  t.equal(b.lane.open, false)
  const res = await overHttp(b, { body: JSON.stringify({ name: 'ada' }) })
  t.equal(res.status, 200)
  t.equal(b.lane.served, 0)
  t.same(res, await throughFastify(b, { body: JSON.stringify({ name: 'ada' }) }))
})

t.test('the lane closes with its app: from preClose on, it takes nothing', async (t) => {
  const b = await build()
  t.equal(b.lane.open, true)
  await b.app.close()
  t.equal(b.lane.open, false)
})

t.test('the server made for fastify keeps fastify\'s timeouts', async (t) => {
  const byDefault = await build()
  t.equal(byDefault.app.server.keepAliveTimeout, 72_000, 'fastify\'s default keep-alive timeout')
  const custom = await build(true, { keepAliveTimeout: 5_000 })
  t.equal(custom.app.server.keepAliveTimeout, 5_000, 'a configured keep-alive timeout')
})

t.test('a lane with no validator compiler in its context refuses with a 500, logged by the renderer', async (t) => {
  const lane = new FastLane(true)
  const app = Fastify({ logger: false, serverFactory: lane.serverFactory })
  const rendered: unknown[] = []
  lane.attach(app, {
    bodyLimit: LIMIT,
    parse: useJsonBodies(app, LIMIT),
    renderError: (err) => {
      rendered.push(err)
      return renderError(err)
    }
  })
  // A context without any schema route has no compiler.
  lane.add<Caller>(app, { path: '/bare', bodySchema: EchoBody, claim: () => ({ token: 'ok' }), admit: () => {}, answer: () => '{}', served: () => {} })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => await app.close())
  const res = await overHttp({ app, lane, url, served: [] }, { path: '/bare', body: '{"name":"x"}' })
  t.equal(res.status, 500)
  t.same(JSON.parse(res.body), { statusCode: 500, error: 'internal', message: 'internal error' })
  t.match(String(rendered[0]), /no validator compiler/)
})
