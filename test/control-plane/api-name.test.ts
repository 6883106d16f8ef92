import t from 'tap'
import { testApp } from './helpers.js'
import { loadConfig } from '../../control-plane/config.js'

t.test('SERVICE_API_NAME=acme renames paths and headers together', async (t) => {
  const ta = await testApp({ env: { SERVICE_API_NAME: 'acme' } })
  t.teardown(() => ta.close())
  const reg = await ta.app.inject({
    method: 'POST', url: '/api/acme/v1/register', headers: { 'x-acme-bootstrap': ta.token }, payload: { agent_type: 'custom', agent_id: 'a1' }
  })
  t.equal(reg.statusCode, 201)
  const key = reg.json().api_key as string
  const cfg = await ta.app.inject({ method: 'GET', url: '/api/acme/v1/config/a1', headers: { 'X-Acme-Key': key } })
  t.equal(cfg.statusCode, 200, 'the X-Acme-Key header authenticates')
  const old = await ta.app.inject({ method: 'GET', url: '/api/acme/v1/config/a1', headers: { 'x-service-key': key } })
  t.equal(old.statusCode, 401, 'the X-Service-Key header is not read')
  const oldPath = await ta.app.inject({ method: 'GET', url: '/api/service/v1/config/a1', headers: { 'x-acme-key': key } })
  t.equal(oldPath.statusCode, 404, '/api/service is not served')
  const legacy = await ta.app.inject({ method: 'POST', url: '/api/acme/register', headers: { authorization: `Bearer ${ta.tenantKey}` }, payload: { name: 'l' } })
  t.equal(legacy.statusCode, 201, 'the legacy contract moves too')
  const doc = await ta.app.inject({ method: 'GET', url: '/api/acme/v1/openapi.json' })
  t.equal(doc.statusCode, 200)
  t.ok(doc.json().paths['/api/acme/v1/evaluate'])
})

t.test('SERVICE_API_NAME=acme reads ACME_ variables first and falls back to SERVICE_ ones', async (t) => {
  const dir = t.testdir()
  const base = { SERVICE_DATA_DIR: dir, SERVICE_MASTER_KEY: Buffer.alloc(32, 1).toString('base64'), SERVICE_API_NAME: 'acme' }
  t.equal(loadConfig([], { ...base, ACME_BOOTSTRAP_SECRET: 'acme-secret-0123456789', SERVICE_BOOTSTRAP_SECRET: 'service-secret-0123456789' }).bootstrapSecret, 'acme-secret-0123456789')
  t.equal(loadConfig([], { ...base, SERVICE_BOOTSTRAP_SECRET: 'service-secret-0123456789' }).bootstrapSecret, 'service-secret-0123456789')
  t.throws(() => loadConfig([], { ...base, ACME_BOOTSTRAP_SECRET: 'short' }), /ACME_BOOTSTRAP_SECRET: must be at least 16/)
})
