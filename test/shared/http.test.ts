import t, { type Test } from 'tap'
import Fastify, { type FastifyError } from 'fastify'
import { MAX_BODY_DEPTH, errorBody, jsonTextDepth, moreBracketsThan, renderError, useJsonBodies } from '../../shared/http.js'
import { ServiceError } from '../../shared/errors.js'

/** A fastify app with the servers' JSON body handling, echoing what it parsed. */
async function echoApp (t: Test) {
  const app = Fastify({ logger: false })
  useJsonBodies(app, 1 << 20)
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const body = errorBody(err)
    reply.code(body.statusCode).send(body)
  })
  app.post('/echo', async (req) => ({ parsed: req.body === undefined ? 'nothing' : req.body }))
  t.teardown(() => app.close())
  return app
}

async function post (app: Awaited<ReturnType<typeof echoApp>>, payload: string) {
  const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload })
  return { status: res.statusCode, body: res.json() as Record<string, unknown> }
}

t.test('moreBracketsThan: counts opening brackets of both kinds, strings included, against the limit', async (t) => {
  t.equal(moreBracketsThan('', 0), false, 'no text, no brackets')
  t.equal(moreBracketsThan('{"a":[1,{"b":[]}]}', 4), false, 'four brackets are not more than four')
  t.equal(moreBracketsThan('{"a":[1,{"b":[]}]}', 3), true, 'four brackets are more than three')
  t.equal(moreBracketsThan('[[[[', 3), true, 'square brackets alone count')
  t.equal(moreBracketsThan('{{{{', 3), true, 'curly brackets alone count')
  t.equal(moreBracketsThan('{"s":"[[[["}', 4), true, 'brackets inside strings count (the check only decides whether to walk)')
  t.equal(moreBracketsThan('}}]]', 0), false, 'closing brackets do not count')
})

t.test('jsonTextDepth: the deepest nesting outside strings', async (t) => {
  t.equal(jsonTextDepth('{"a":[1,{"b":[]}]}', MAX_BODY_DEPTH), 4)
  t.equal(jsonTextDepth('{"s":"[[[[ {{{{ \\" [[[["}', MAX_BODY_DEPTH), 1, 'brackets inside strings, escaped quotes included, do not nest')
  t.equal(jsonTextDepth('['.repeat(200), 10), 11, 'stops just past the limit')
})

t.test('useJsonBodies: an ordinary body is parsed as JSON', async (t) => {
  const app = await echoApp(t)
  const r = await post(app, '{"agent_id":"a","context":{"tool":"search","n":[1,2,3]}}')
  t.equal(r.status, 200)
  t.same(r.body.parsed, { agent_id: 'a', context: { tool: 'search', n: [1, 2, 3] } })
})

t.test('useJsonBodies: an empty or blank body is no body', async (t) => {
  const app = await echoApp(t)
  for (const payload of ['', '   \n']) t.same((await post(app, payload)).body, { parsed: 'nothing' }, JSON.stringify(payload))
})

t.test('useJsonBodies: prototype poisoning is refused (400), written plainly or with \\u escapes', async (t) => {
  const app = await echoApp(t)
  for (const payload of [
    '{"__proto__":{"admin":true}}',
    '{"a":{"__proto__":{"admin":true}}}',
    '{"\\u005f_proto__":{"admin":true}}',
    '{"__pr\\u006fto__":{"admin":true}}',
    '{"constructor":{"prototype":{"admin":true}}}',
    '{"c\\u006fnstructor":{"prototype":{"admin":true}}}'
  ]) {
    const r = await post(app, payload)
    t.equal(r.status, 400, `${payload} -> 400`)
    t.equal(r.body.error, 'bad_request', `${payload}: the error body`)
  }
})

t.test('useJsonBodies: texts that only mention the poisoned names, or hold escapes, are parsed by the careful parser', async (t) => {
  const app = await echoApp(t)
  const mention = await post(app, '{"text":"what is __proto__ and a constructor?"}')
  t.same(mention.body.parsed, { text: 'what is __proto__ and a constructor?' }, 'names inside a value are fine')
  const escaped = await post(app, '{"text":"caf\\u00e9 \\ud83d\\ude00"}')
  t.same(escaped.body.parsed, { text: 'caf\u00e9 \u{1F600}' }, '\\u escapes are decoded')
  const ctor = await post(app, '{"constructor":"a string, no prototype"}')
  t.same(ctor.body.parsed, { constructor: 'a string, no prototype' }, 'a constructor key without a prototype is allowed')
})

t.test('useJsonBodies: a byte order mark before the JSON is accepted', async (t) => {
  const app = await echoApp(t)
  t.same((await post(app, '\ufeff{"a":1}')).body, { parsed: { a: 1 } })
})

t.test('useJsonBodies: malformed JSON is 400 "malformed JSON", on the fast path and the careful one', async (t) => {
  const app = await echoApp(t)
  for (const payload of ['{"a":', '{a:1}', '{"a":"\\u12"}', '{"__proto__":']) {
    const r = await post(app, payload)
    t.equal(r.status, 400, `${payload} -> 400`)
    t.match(r.body.message, /^malformed JSON/, `${payload}: says the JSON is malformed`)
  }
})

t.test('useJsonBodies: nesting deeper than 64 is 400; 64 levels and many brackets inside strings are accepted', async (t) => {
  const app = await echoApp(t)
  const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n)
  const deep = await post(app, nested(MAX_BODY_DEPTH + 1))
  t.equal(deep.status, 400)
  t.match(deep.body.message, /nested deeper than 64/)
  t.equal((await post(app, nested(MAX_BODY_DEPTH))).status, 200, '64 levels')
  const brackets = await post(app, JSON.stringify({ text: '{['.repeat(200) }))
  t.equal(brackets.status, 200, '400 brackets inside a string, nesting 1')
})

t.test('useJsonBodies: a body that is not JSON is 415', async (t) => {
  const app = await echoApp(t)
  const res = await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'text/plain' }, payload: 'hello' })
  t.equal(res.statusCode, 415)
  t.equal(res.json().error, 'unsupported_media_type')
})

t.test('renderError: the catalogue body as text with Retry-After; a 5xx (only) goes to the log given', async (t) => {
  const logged: Array<[object, string]> = []
  const log = { error: (obj: object, msg: string) => { logged.push([obj, msg]) } }
  const limited = renderError(new ServiceError('rate_limited', 'slow down', undefined, 3), log)
  t.same(limited, { statusCode: 429, body: JSON.stringify({ statusCode: 429, error: 'rate_limited', message: 'slow down' }), headers: { 'retry-after': '3' } })
  const failed = renderError(new Error('disk on fire'), log)
  t.same(JSON.parse(failed.body), { statusCode: 500, error: 'internal', message: 'internal error' }, 'no detail in the answer')
  t.equal(logged.length, 1, 'the 5xx alone is logged')
  t.match(logged[0], [{ err: { message: 'disk on fire' } }, 'request failed'])
  t.doesNotThrow(() => renderError(new Error('x')), 'no log given: nothing logged')
})
