/**
 * The sidecar's control-plane client (sidecar/upstream.ts): answers passed through, timeouts, refused
 * connections, and the circuit breaker's states (closed, open, half-open probe) against a real local
 * server.
 */
import t, { type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import { createServer } from 'node:net'
import { Upstream, UpstreamError, classify } from '../../sidecar/upstream.js'

interface Fake {
  app: FastifyInstance
  url: string
  /** Status the /status route answers with. */
  status: number
  calls: number
}

async function fakeControlPlane (t: Test): Promise<Fake> {
  const app = Fastify()
  const fake: Fake = { app, url: '', status: 200, calls: 0 }
  app.get('/api/service/v1/ok', async () => ({ ok: true }))
  app.post('/api/service/v1/echo', async (req) => ({ got: req.body, key: req.headers['x-service-key'] ?? null }))
  app.get('/api/service/v1/status', async (_req, reply) => {
    fake.calls++
    reply.code(fake.status)
    return { status: fake.status }
  })
  app.get('/api/service/v1/text', async (_req, reply) => reply.type('text/plain').send('plain words'))
  app.get('/api/service/v1/empty', async (_req, reply) => reply.code(204).send())
  app.get('/api/service/v1/slow', async () => await new Promise((resolve) => setTimeout(() => resolve({ late: true }), 2_000)))
  fake.url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/api/service/v1`
  t.teardown(() => app.close())
  return fake
}

async function upstream (t: Test, url: string, opts: ConstructorParameters<typeof Upstream>[1] = {}): Promise<Upstream> {
  const u = new Upstream(url, { requestTimeoutMs: 1_000, connectTimeoutMs: 500, ...opts })
  t.teardown(() => u.close())
  return u
}

async function rejection (p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p
  } catch (err) {
    if (err instanceof UpstreamError) return err
    throw err
  }
  throw new Error('expected a rejection')
}

t.test('answers below 500 are passed through with status, headers, parsed JSON and text; the base path is kept', async (t) => {
  const fake = await fakeControlPlane(t)
  const u = await upstream(t, fake.url)
  const ok = await u.request({ method: 'GET', path: '/ok' })
  t.equal(ok.status, 200)
  t.strictSame(ok.json, { ok: true })
  t.match(ok.headers['content-type'], /application\/json/)
  const echo = await u.request({ method: 'POST', path: '/echo', headers: { 'x-service-key': 'k' }, body: { a: [1, 2] } })
  t.strictSame(echo.json, { got: { a: [1, 2] }, key: 'k' }, 'a JSON body and the headers arrive')
  fake.status = 404
  const missing = await u.request({ method: 'GET', path: '/status' })
  t.equal(missing.status, 404, 'a 4xx is an answer, not a failure')
  const text = await u.request({ method: 'GET', path: '/text' })
  t.equal(text.json, undefined, 'a body that is not JSON has no json')
  t.equal(text.text, 'plain words')
  const empty = await u.request({ method: 'GET', path: '/empty' })
  t.equal(empty.status, 204)
  t.equal(empty.json, undefined)
  t.strictSame(u.status(), { state: 'closed', consecutiveFailures: 0, failures: 0, shortCircuited: 0 })
})

t.test('a control plane that does not answer in time fails with "timeout"', async (t) => {
  const fake = await fakeControlPlane(t)
  const u = await upstream(t, fake.url, { requestTimeoutMs: 200 })
  const started = Date.now()
  const err = await rejection(u.request({ method: 'GET', path: '/slow' }))
  t.equal(err.kind, 'timeout')
  t.ok(Date.now() - started < 1_500, 'well before the answer would have come')
  t.equal(u.status().failures, 1)
})

t.test('a port nobody listens on fails with "connect"', async (t) => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise((resolve) => server.close(resolve))
  const u = await upstream(t, `http://127.0.0.1:${port}/api/service/v1`)
  const err = await rejection(u.request({ method: 'GET', path: '/ok' }))
  t.equal(err.kind, 'connect')
  t.match(err.message, /ECONNREFUSED/)
})

t.test('breaker: consecutive 5xx open it; open, calls fail at once; a success in between resets the count', async (t) => {
  const fake = await fakeControlPlane(t)
  let now = 1_000_000
  const u = await upstream(t, fake.url, { failureThreshold: 3, openMs: 10_000, now: () => now })
  fake.status = 503
  for (let i = 0; i < 2; i++) t.equal((await rejection(u.request({ method: 'GET', path: '/status' }))).kind, 'server_error')
  fake.status = 200
  await u.request({ method: 'GET', path: '/status' })
  t.equal(u.status().consecutiveFailures, 0, 'a success resets the run of failures')
  fake.status = 500
  for (let i = 0; i < 3; i++) {
    const err = await rejection(u.request({ method: 'GET', path: '/status' }))
    t.equal(err.status, 500)
  }
  t.equal(u.status().state, 'open', 'three in a row open it')
  const callsWhenOpened = fake.calls
  const err = await rejection(u.request({ method: 'GET', path: '/status' }))
  t.equal(err.kind, 'circuit_open')
  t.equal(fake.calls, callsWhenOpened, 'the control plane was not called')
  t.strictSame(u.status(), { state: 'open', consecutiveFailures: 3, failures: 5, shortCircuited: 1 })
  now += 9_999
  t.equal(u.status().state, 'open', 'still open just before openMs')
})

t.test('breaker: after openMs one probe goes through; its success closes the breaker, its failure reopens it', async (t) => {
  const fake = await fakeControlPlane(t)
  let now = 1_000_000
  const u = await upstream(t, fake.url, { failureThreshold: 1, openMs: 5_000, now: () => now })
  fake.status = 502
  await rejection(u.request({ method: 'GET', path: '/status' }))
  t.equal(u.status().state, 'open')
  now += 5_000
  t.equal(u.status().state, 'half_open')
  const probe = rejection(u.request({ method: 'GET', path: '/status' }))
  const second = await rejection(u.request({ method: 'GET', path: '/status' }))
  t.equal(second.kind, 'circuit_open', 'only one probe at a time')
  t.equal((await probe).kind, 'server_error')
  t.equal(u.status().state, 'open', 'a failed probe opens the breaker again')
  now += 5_000
  fake.status = 200
  const ok = await u.request({ method: 'GET', path: '/status' })
  t.equal(ok.status, 200)
  t.equal(u.status().state, 'closed', 'a successful probe closes it')
  t.equal((await u.request({ method: 'GET', path: '/ok' })).status, 200, 'and calls flow again')
})

t.test('a control plane URL that is not http or https is refused', async (t) => {
  t.throws(() => new Upstream('ftp://example.com'), /must be http or https/)
  t.throws(() => new Upstream('not a url'), TypeError)
})

t.test('classify: undici and network errors map to a failure kind with a message that names the cause', async (t) => {
  const { errors } = await import('undici')
  t.equal(classify(new errors.ConnectTimeoutError()).kind, 'connect')
  t.equal(classify(new errors.HeadersTimeoutError()).kind, 'timeout')
  t.equal(classify(new errors.BodyTimeoutError()).kind, 'timeout')
  t.equal(classify(Object.assign(new Error('aborted'), { name: 'AbortError' })).kind, 'timeout')
  for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ECONNRESET']) {
    const e = classify(Object.assign(new Error('x'), { code }))
    t.equal(e.kind, 'connect')
    t.match(e.message, code)
  }
  t.strictSame([classify(new Error('socket hang up')).kind, classify(new Error('socket hang up')).message], ['network', 'control plane call failed: socket hang up'])
  t.equal(classify('a string').message, 'control plane call failed: a string')
})
