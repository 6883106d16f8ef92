import t from 'tap'
import { Writable } from 'node:stream'
import Fastify from 'fastify'
import { fastifyLogging, processLogger } from '../../shared/logging.js'

/** A destination that keeps the JSON lines written to it. */
function sink (): { stream: Writable, lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = []
  const stream = new Writable({ write (chunk: Buffer, _enc, done) { chunks.push(chunk.toString()); done() } })
  return { stream, lines: () => chunks.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>) }
}

t.test('processLogger: writes at its level and above, with key and token headers redacted', async (t) => {
  const out = sink()
  const log = processLogger('info', ['x-service-key', 'authorization'], undefined, out.stream)
  log.debug('not written')
  log.info({ req: { headers: { 'x-service-key': 'sk_agent_secret', authorization: 'Bearer zk_live_secret', host: 'h' } } }, 'written')
  const lines = out.lines()
  t.equal(lines.length, 1, 'debug is below info')
  t.equal(lines[0]?.msg, 'written')
  t.same((lines[0]?.req as { headers: unknown }).headers, { 'x-service-key': '[Redacted]', authorization: '[Redacted]', host: 'h' }, 'keys redacted, other headers kept')
})

t.test('processLogger: false gives a logger that writes nothing', async (t) => {
  const log = processLogger('info', [], false)
  t.equal(log.isLevelEnabled('fatal'), false)
})

t.test('fastifyLogging: fastify gets the logger only at debug and trace', async (t) => {
  for (const level of ['fatal', 'error', 'warn', 'info']) {
    t.same(fastifyLogging(processLogger(level, [], { level })), { logger: false }, `${level}: no fastify logger`)
  }
  for (const level of ['debug', 'trace']) {
    const log = processLogger(level, [], { level })
    t.equal(fastifyLogging(log).loggerInstance, log, `${level}: fastify logs through the process logger`)
  }
})

t.test('fastifyLogging: at debug every request is logged; at info none is', async (t) => {
  for (const [level, expected] of [['debug', true], ['info', false]] as const) {
    const out = sink()
    const log = processLogger(level, ['x-service-key'], undefined, out.stream)
    const app = Fastify({ ...fastifyLogging(log) })
    app.get('/x', async () => ({ ok: true }))
    await app.inject({ method: 'GET', url: '/x', headers: { 'x-service-key': 'sk_agent_secret' } })
    await app.close()
    const lines = out.lines()
    const requestLines = lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')
    t.equal(requestLines.length > 0, expected, `${level}: per-request lines ${expected ? 'written' : 'not written'}`)
    t.notMatch(JSON.stringify(lines), /sk_agent_secret/, `${level}: the key never reaches the log`)
  }
})
