import t from 'tap'
import {
  ERROR_CODES, ServiceError, badRequest, codeForStatus, conflict, ensureOwnAgentId, forbidden, notFound, rateLimited, unauthorized, unavailable,
  type ErrorCode
} from '../../shared/errors.js'

t.test('ERROR_CODES: exactly the codes and statuses of decisions.md', async (t) => {
  t.same(ERROR_CODES, {
    bad_request: 400,
    unauthorized: 401,
    forbidden: 403,
    not_found: 404,
    conflict: 409,
    payload_too_large: 413,
    unsupported_media_type: 415,
    rate_limited: 429,
    internal: 500,
    service_unavailable: 503
  })
})

t.test('ServiceError: carries code, status, message and is an Error', async (t) => {
  for (const [code, status] of Object.entries(ERROR_CODES) as Array<[ErrorCode, number]>) {
    const e = new ServiceError(code, `msg ${code}`)
    t.ok(e instanceof Error, `${code} is an Error`)
    t.equal(e.name, 'ServiceError')
    t.equal(e.code, code)
    t.equal(e.statusCode, status, `${code} -> ${status}`)
    t.equal(e.message, `msg ${code}`)
    t.same(e.toBody(), { statusCode: status, error: code, message: `msg ${code}` }, `${code} body`)
  }
})

t.test('ServiceError.toBody: details are included when non-empty, left out when empty or absent', async (t) => {
  const details = [{ path: '/events/0/category', message: 'must be one of ...' }]
  t.same(new ServiceError('bad_request', 'invalid', details).toBody(),
    { statusCode: 400, error: 'bad_request', message: 'invalid', details })
  const empty = new ServiceError('bad_request', 'invalid', []).toBody()
  t.notOk('details' in empty, 'an empty details list is left out')
  const none = new ServiceError('bad_request', 'invalid').toBody()
  t.notOk('details' in none, 'no details, no key')
})

t.test('ServiceError.toBody: never carries the stack, retryAfter or any other field', async (t) => {
  const body = new ServiceError('rate_limited', 'slow down', undefined, 7).toBody()
  t.same(Object.keys(body).sort(), ['error', 'message', 'statusCode'])
  t.notOk(JSON.stringify(body).includes('at '), 'no stack frames')
})

t.test('helpers: each builds the right code, status and message', async (t) => {
  const details = [{ path: '/x', message: 'bad' }]
  t.match(badRequest('nope', details), { code: 'bad_request', statusCode: 400, message: 'nope', details })
  t.equal(badRequest('nope').details, undefined)
  t.match(unauthorized(), { code: 'unauthorized', statusCode: 401, message: 'missing or invalid API key' }, 'default message')
  t.match(unauthorized('bad token'), { code: 'unauthorized', statusCode: 401, message: 'bad token' })
  t.match(forbidden('not yours'), { code: 'forbidden', statusCode: 403, message: 'not yours' })
  t.match(notFound('no such agent'), { code: 'not_found', statusCode: 404, message: 'no such agent' })
  t.match(conflict('agent_id exists'), { code: 'conflict', statusCode: 409, message: 'agent_id exists' })
  for (const e of [badRequest('x'), unauthorized(), forbidden('x'), notFound('x'), conflict('x')]) {
    t.equal(e.retryAfter, undefined, `${e.code} has no Retry-After`)
  }
})

t.test('rateLimited: 429 with the given Retry-After seconds', async (t) => {
  const e = rateLimited(3)
  t.match(e, { code: 'rate_limited', statusCode: 429, retryAfter: 3 })
  t.match(e.message, /rate limit/)
})

t.test('unavailable: 503 with Retry-After 1 by default, or the given seconds', async (t) => {
  t.match(unavailable('store down'), { code: 'service_unavailable', statusCode: 503, message: 'store down', retryAfter: 1 })
  t.match(unavailable('store down', 30), { retryAfter: 30 })
})

t.test('codeForStatus: each catalogue status maps back to its code', async (t) => {
  for (const [code, status] of Object.entries(ERROR_CODES)) t.equal(codeForStatus(status), code, `${status}`)
})

t.test('codeForStatus: statuses outside the catalogue fall back to internal (5xx) or bad_request (4xx)', async (t) => {
  t.equal(codeForStatus(405), 'bad_request')
  t.equal(codeForStatus(406), 'bad_request')
  t.equal(codeForStatus(422), 'bad_request')
  t.equal(codeForStatus(499), 'bad_request')
  t.equal(codeForStatus(500), 'internal')
  t.equal(codeForStatus(501), 'internal')
  t.equal(codeForStatus(502), 'internal')
  t.equal(codeForStatus(504), 'internal')
})

t.test('ensureOwnAgentId: no claim or the same id passes; another id is 403', async (t) => {
  t.doesNotThrow(() => ensureOwnAgentId('bot-1', undefined), 'no agent_id given')
  t.doesNotThrow(() => ensureOwnAgentId('bot-1', 'bot-1'), 'the same agent')
  t.throws(() => ensureOwnAgentId('bot-1', 'bot-2'), { code: 'forbidden', statusCode: 403, message: 'agent_id does not match the authenticated agent' })
  t.throws(() => ensureOwnAgentId('bot-1', ''), { statusCode: 403, message: 'agent_id does not match the authenticated agent' }, 'an empty id is another id')
})
