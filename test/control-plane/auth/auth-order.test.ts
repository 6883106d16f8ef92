import t from 'tap'
import { testApp } from '../helpers.js'

t.test('authentication comes before the body: no key with a bad body is 401, not 400', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const v1 = await ta.v1('POST', '/evaluate', { body: { nonsense: true } })
  t.equal(v1.statusCode, 401)
  const malformed = await ta.app.inject({ method: 'POST', url: '/api/service/v1/events', headers: { 'content-type': 'application/json' }, payload: '{"broken' })
  t.equal(malformed.statusCode, 401, 'an unauthenticated body is not even parsed')
  const legacy = await ta.legacy('POST', '/events', { body: { events: 'no' } })
  t.equal(legacy.statusCode, 401)
  const { key } = await ta.registerV1()
  const bad = await ta.v1('POST', '/evaluate', { key, body: { nonsense: true } })
  t.equal(bad.statusCode, 400, 'with a valid key the body is validated')
})
