/**
 * LLM provider keys (/api/service/v1/settings/llm-providers): set, rotate, list, switch, delete; the
 * key never leaves in plaintext and is not in the database file; viewers and other tenants fail.
 */
import t, { type Test } from 'tap'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from '../../helpers.js'
import { mintUserToken, type Role } from '../../../../control-plane/graphql/auth.js'
import { providerAad } from '../../../../control-plane/routes/v1/settings.js'

const SECRET = 'settings-test-jwt-secret-0123456789abcdef'
const OTHER_TENANT = '00000000-0000-4000-8000-0000000000c3'
const OPENAI_KEY = 'sk-proj-PLAINTEXT-openai-key-0123456789'
const ANTHROPIC_KEY = 'sk-ant-PLAINTEXT-anthropic-key-9876543210'

type Call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, as?: { role?: Role, tenantId?: string, cookie?: boolean, none?: boolean }) =>
Promise<{ status: number, body: Record<string, any>, raw: string }>

async function setup (t: Test, env: Record<string, string> = {}): Promise<TestApp & { call: Call }> {
  const ta = await testApp({ env: { SERVICE_JWT_SECRET: SECRET, ...env } })
  t.teardown(() => ta.close())
  await ta.app.services.store.createTenant({ id: OTHER_TENANT, name: 'other' })
  const call: Call = async (method, path, body, as = {}) => {
    const headers: Record<string, string> = {}
    if (as.none !== true) {
      const token = await mintUserToken(SECRET, { sub: 'settings-tester', tenantId: as.tenantId ?? DEFAULT_TENANT_ID, role: as.role ?? 'admin' }, 600)
      if (as.cookie === true) headers.cookie = `theme=dark; agentgov_session=${token}`
      else headers.authorization = `Bearer ${token}`
    }
    const res = await ta.app.inject({ method, url: `/api/service/v1/settings/llm-providers${path}`, headers, ...(body === undefined ? {} : { payload: body as Record<string, unknown> }) })
    return { status: res.statusCode, body: res.body === '' ? {} : res.json() as Record<string, any>, raw: res.body }
  }
  return { ...ta, call }
}

t.test('POST sets a key (201), again rotates it (200); GET lists records with a prefix only; the key is sealed under the master key', async (t) => {
  const a = await setup(t)
  const created = await a.call('POST', '', { provider: 'openai', apiKey: OPENAI_KEY })
  t.equal(created.status, 201, created.raw)
  t.match(created.body, { provider: 'openai', keyPrefix: 'sk-proj-', baseUrl: null, isActive: true, enabledForAssistant: true, lastUsedAt: null })
  t.notMatch(created.raw, 'PLAINTEXT', 'no plaintext in the answer')
  const rotated = await a.call('POST', '', { provider: 'openai', apiKey: 'sk-proj-ROTATED-key-000000000000' })
  t.equal(rotated.status, 200, 'a second key for the same provider rotates it')
  t.equal((await a.call('POST', '', { provider: 'anthropic', apiKey: ANTHROPIC_KEY })).status, 201)
  const list = await a.call('GET', '')
  t.equal(list.status, 200)
  t.strictSame(list.body.providers.map((p: { provider: string }) => p.provider), ['anthropic', 'openai'])
  t.notMatch(list.raw, /PLAINTEXT|ROTATED/, 'no key in the list')

  const stored = await a.app.services.store.getProviderKey(DEFAULT_TENANT_ID, 'openai')
  t.equal(a.app.services.box.open(stored?.key_sealed as string, providerAad(DEFAULT_TENANT_ID, 'openai')), 'sk-proj-ROTATED-key-000000000000', 'the rotated key is what is stored, sealed')
  t.throws(() => a.app.services.box.open(stored?.key_sealed as string, providerAad(OTHER_TENANT, 'openai')), 'bound to its tenant: it does not open as another tenant\'s')
  const first = (await a.app.services.store.getProviderKey(DEFAULT_TENANT_ID, 'anthropic'))?.key_sealed
  await a.call('POST', '', { provider: 'anthropic', apiKey: ANTHROPIC_KEY })
  t.not((await a.app.services.store.getProviderKey(DEFAULT_TENANT_ID, 'anthropic'))?.key_sealed, first, 'the same key sealed again: a fresh nonce, another ciphertext')

  const files = readdirSync(a.dir).filter((n) => n.startsWith('agentgov.db'))
  t.ok(files.length >= 1, 'the database file (and its WAL) are scanned')
  for (const f of files) {
    t.notOk(readFileSync(join(a.dir, f)).includes('PLAINTEXT'), `${f}: no plaintext key in the database file`)
    t.notOk(readFileSync(join(a.dir, f)).includes('ROTATED'), `${f}: nor the rotated one`)
  }
})

t.test('an OpenAI-compatible endpoint needs a baseUrl (shown back); bad input is 400 with the error body', async (t) => {
  const a = await setup(t)
  const ollama = await a.call('POST', '', { provider: 'ollama', apiKey: 'ollama-local-key', baseUrl: 'http://127.0.0.1:11434/v1/' })
  t.equal(ollama.status, 201, ollama.raw)
  t.equal(ollama.body.baseUrl, 'http://127.0.0.1:11434/v1', 'normalised, shown back')
  for (const [label, body] of [
    ['no baseUrl for a compatible endpoint', { provider: 'vllm', apiKey: 'k' }],
    ['a baseUrl that is not a URL', { provider: 'vllm', apiKey: 'k', baseUrl: 'not a url' }],
    ['a baseUrl that is not http', { provider: 'vllm', apiKey: 'k', baseUrl: 'file:///etc/passwd' }],
    ['credentials in the baseUrl', { provider: 'vllm', apiKey: 'k', baseUrl: 'http://user:pw@host/v1' }],
    ['a blank key', { provider: 'openai', apiKey: '   ' }],
    ['no key', { provider: 'openai' }],
    ['a provider id that is not a slug', { provider: 'Open AI', apiKey: 'k' }],
    ['no provider', { apiKey: 'k' }]
  ] as const) {
    const r = await a.call('POST', '', body)
    t.equal(r.status, 400, `${label}: 400`)
    t.equal(r.body.error, 'bad_request', label)
    t.notMatch(r.raw, /"apiKey":"k"/, `${label}: the key is not echoed`)
  }
  t.equal((await a.call('PATCH', '', { provider: 'ollama' })).status, 400, 'a PATCH that changes nothing')
})

t.test('PATCH switches a provider for the assistant or off without removing the key; DELETE removes it (404 when absent)', async (t) => {
  const a = await setup(t)
  await a.call('POST', '', { provider: 'openai', apiKey: OPENAI_KEY })
  const off = await a.call('PATCH', '', { provider: 'openai', enabledForAssistant: false })
  t.match(off, { status: 200, body: { enabledForAssistant: false, isActive: true } })
  const inactive = await a.call('PATCH', '', { provider: 'openai', isActive: false })
  t.match(inactive.body, { enabledForAssistant: false, isActive: false }, 'each switch on its own')
  t.equal((await a.call('POST', '', { provider: 'openai', apiKey: 'sk-proj-new-0000000000' })).body.isActive, false, 'rotating keeps the switches')
  t.equal((await a.call('PATCH', '', { provider: 'anthropic', isActive: true })).status, 404, 'no key for that provider')
  t.equal((await a.call('DELETE', '/openai')).status, 204)
  t.equal((await a.call('DELETE', '/openai')).status, 404, 'gone')
  t.strictSame((await a.call('GET', '')).body.providers, [])
})

t.test('auth: a viewer may only read; another tenant neither sees nor changes a key; no token is 401; the session cookie and open mode work', async (t) => {
  const a = await setup(t)
  await a.call('POST', '', { provider: 'openai', apiKey: OPENAI_KEY })
  t.equal((await a.call('GET', '', undefined, { role: 'viewer' })).body.providers.length, 1, 'a viewer reads')
  for (const [method, path, body] of [['POST', '', { provider: 'openai', apiKey: 'x' }], ['PATCH', '', { provider: 'openai', isActive: false }], ['DELETE', '/openai', undefined]] as const) {
    const r = await a.call(method, path, body, { role: 'viewer' })
    t.equal(r.status, 403, `a viewer's ${method}: 403`)
    t.equal(r.body.error, 'forbidden')
  }
  t.strictSame((await a.call('GET', '', undefined, { tenantId: OTHER_TENANT })).body.providers, [], 'another tenant sees none')
  t.equal((await a.call('PATCH', '', { provider: 'openai', isActive: false }, { tenantId: OTHER_TENANT })).status, 404, 'nor switches it')
  t.equal((await a.call('DELETE', '/openai', undefined, { tenantId: OTHER_TENANT })).status, 404, 'nor deletes it')
  t.match(await a.app.services.store.getProviderKey(DEFAULT_TENANT_ID, 'openai'), { is_active: true }, 'the owner\'s key is untouched')
  const none = await a.call('GET', '', undefined, { none: true })
  t.equal(none.status, 401)
  t.equal(none.body.error, 'unauthorized')
  t.equal((await a.call('GET', '', undefined, { cookie: true })).status, 200, 'the agentgov_session cookie carries the JWT')

  const open = await setup(t, { SERVICE_AUTH_MODE: 'open' })
  t.equal((await open.call('POST', '', { provider: 'anthropic', apiKey: ANTHROPIC_KEY }, { none: true })).status, 201, 'open mode: admin of the default tenant')
})

t.test('an active provider key is handed to the tenant\'s agents by GET /v1/secrets (providers); an inactive one is not', async (t) => {
  const a = await setup(t)
  await a.call('POST', '', { provider: 'openai', apiKey: OPENAI_KEY })
  await a.call('POST', '', { provider: 'ollama', apiKey: 'ollama-key', baseUrl: 'http://127.0.0.1:11434/v1' })
  const { key } = await a.registerV1({ agent_type: 'custom', agent_id: 'consumer' })
  const providers = async (): Promise<Record<string, unknown>> => (await a.v1('GET', '/secrets', { key })).json().providers as Record<string, unknown>
  t.strictSame(await providers(), { openai: { api_key: OPENAI_KEY, base_url: null }, ollama: { api_key: 'ollama-key', base_url: 'http://127.0.0.1:11434/v1' } })
  await a.call('PATCH', '', { provider: 'ollama', isActive: false })
  t.strictSame(Object.keys(await providers()), ['openai'], 'switched off: not handed out')
  await a.call('PATCH', '', { provider: 'openai', enabledForAssistant: false })
  t.strictSame(Object.keys(await providers()), ['openai'], 'disabled for the assistant only: agents still get it')
})
