/**
 * The authentication and authorisation matrix of every agent-facing endpoint of both REST contracts
 * (interface.md sections 4.1, 4.2, 5, 7; decisions.md "Errors" and "Limits"):
 *
 * - missing, malformed, unknown and wrong-kind keys, and keys of agents that are no longer active: 401
 *   `unauthorized`;
 * - a valid key naming another agent's `agent_id` (path or body): 403 `forbidden`;
 * - a v1 key on legacy routes and a legacy key on v1 routes: 401;
 * - an agent key on legacy register: 403; a bootstrap token with a bad signature: 401;
 * - one tenant's agents never see another tenant's secrets or agents;
 * - the platform rate limit: 429 `rate_limited` with `Retry-After`.
 */
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { testApp, TEST_BOOTSTRAP_SECRET, DEFAULT_TENANT_ID, type TestApp } from '../helpers.js'
import { bootstrapToken, mintKey } from '../../../shared/keys.js'
import { secretAad } from '../../../control-plane/agents/service.js'
import type { AgentStatus, SecretScope } from '../../../control-plane/store/store.js'

type Tap = Test
type Method = 'GET' | 'POST'

interface Endpoint {
  /** e.g. `v1 POST /events`: names the endpoint in every assertion. */
  name: string
  method: Method
  path: (agentId: string) => string
  body?: (agentId: string) => unknown
  /** The status of a successful call. */
  ok: number
  /** True when the agent_id of the request (path or body) can name another agent. */
  namesAgent: boolean
}

const now = (): string => new Date().toISOString()

const V1_ENDPOINTS: Endpoint[] = [
  { name: 'v1 GET /config/{agent_id}', method: 'GET', path: (id) => `/config/${id}`, ok: 200, namesAgent: true },
  { name: 'v1 GET /secrets', method: 'GET', path: () => '/secrets', ok: 200, namesAgent: false },
  { name: 'v1 GET /secrets/{agent_id}', method: 'GET', path: (id) => `/secrets/${id}`, ok: 200, namesAgent: true },
  {
    name: 'v1 POST /evaluate',
    method: 'POST',
    path: () => '/evaluate',
    body: (id) => ({ agent_id: id, action: 'tool_call', user_id: 'u1', context: { tool: 'search' } }),
    ok: 200,
    namesAgent: true
  },
  {
    name: 'v1 POST /events',
    method: 'POST',
    path: () => '/events',
    body: (id) => ({ agent_id: id, events: [{ type: 'tool.called', category: 'telemetry', timestamp: now(), user_id: 'u1', payload: { tool: 'search' } }] }),
    ok: 202,
    namesAgent: true
  },
  {
    name: 'v1 POST /heartbeat',
    method: 'POST',
    path: () => '/heartbeat',
    body: (id) => ({ agent_id: id, status: 'healthy', metrics: { requests_processed: 1, errors_last_5min: 0, avg_latency_ms: 3 } }),
    ok: 202,
    namesAgent: true
  },
  // Last: a successful call terminates the agent.
  { name: 'v1 POST /deregister', method: 'POST', path: () => '/deregister', body: (id) => ({ agent_id: id }), ok: 204, namesAgent: true }
]

const LEGACY_ENDPOINTS: Endpoint[] = [
  {
    name: 'legacy POST /evaluate',
    method: 'POST',
    path: () => '/evaluate',
    body: () => ({ request_type: 'llm.invoke', model: 'gpt-4o', tokens_requested: 100, messages: [{ role: 'user', content: 'hi' }], context: { user_id: 'u1' } }),
    ok: 200,
    namesAgent: false
  },
  { name: 'legacy GET /config', method: 'GET', path: () => '/config', ok: 200, namesAgent: false },
  {
    name: 'legacy POST /events',
    method: 'POST',
    path: () => '/events',
    body: () => ({ events: [{ type: 'llm.invoke', timestamp: now(), data: { model: 'gpt-4o' } }] }),
    ok: 202,
    namesAgent: false
  },
  {
    name: 'legacy POST /heartbeat',
    method: 'POST',
    path: () => '/heartbeat',
    body: () => ({ status: 'healthy', metrics: { requests_processed: 1, errors_last_5min: 0, avg_latency_ms: 3 } }),
    ok: 200,
    namesAgent: false
  },
  { name: 'legacy GET /secrets', method: 'GET', path: () => '/secrets', ok: 200, namesAgent: false }
]

function bodyOf (res: LightMyRequestResponse): unknown {
  try {
    return JSON.parse(res.body)
  } catch {
    return res.body
  }
}

/** Asserts an error response: status, the `{statusCode, error, message}` body and a JSON content type. */
function expectError (t: Tap, res: LightMyRequestResponse, status: number, code: string, label: string): void {
  t.equal(res.statusCode, status, `${label} -> ${status}`)
  t.match(bodyOf(res), { statusCode: status, error: code, message: String }, `${label} -> body {statusCode: ${status}, error: "${code}", message}`)
  t.match(String(res.headers['content-type']), /^application\/json/, `${label} -> JSON content type`)
}

async function call (ta: TestApp, contract: 'v1' | 'legacy', e: Endpoint, agentId: string, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  const body = e.body?.(agentId)
  const send = contract === 'v1' ? ta.v1 : ta.legacy
  return await send(e.method, e.path(agentId), { headers, ...(body === undefined ? {} : { body }) })
}

const v1Key = (key: string): Record<string, string> => ({ 'x-service-key': key })
const bearer = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` })

async function setStatus (ta: TestApp, tenantId: string, agentId: string, status: AgentStatus): Promise<void> {
  const agent = await ta.app.services.store.getAgent(tenantId, agentId)
  if (agent === undefined) throw new Error(`no agent ${agentId}`)
  await ta.app.services.store.setAgentStatus(agent.id, status, 'unknown')
  await ta.app.services.directory.changed()
}

async function setSecret (ta: TestApp, tenantId: string, scopeType: SecretScope, scopeId: string, name: string, value: string): Promise<void> {
  const record = { tenant_id: tenantId, scope_type: scopeType, scope_id: scopeId, name }
  await ta.app.services.store.setSecret({ ...record, value_sealed: ta.app.services.box.seal(value, secretAad(record)), updated_at: now() })
}

t.test('control: a valid key naming its own agent is accepted on every agent endpoint of both contracts', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const v1 = await ta.registerV1()
  const legacy = await ta.registerLegacy()
  for (const e of V1_ENDPOINTS) {
    const res = await call(ta, 'v1', e, v1.agentId, v1Key(v1.key))
    t.equal(res.statusCode, e.ok, `${e.name}, own key and own agent_id -> ${e.ok}`)
  }
  for (const e of LEGACY_ENDPOINTS) {
    const res = await call(ta, 'legacy', e, legacy.agentId, bearer(legacy.key))
    t.equal(res.statusCode, e.ok, `${e.name}, own bearer key -> ${e.ok}`)
  }
})

t.test('v1 agent endpoints: a missing, malformed, unknown, wrong-contract or inactive key -> 401 unauthorized', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const active = await ta.registerV1()
  const legacy = await ta.registerLegacy()
  const terminated = await ta.registerV1()
  const dereg = await ta.v1('POST', '/deregister', { key: terminated.key })
  t.equal(dereg.statusCode, 204, 'setup: deregister answers 204')
  const suspended = await ta.registerV1()
  await setStatus(ta, DEFAULT_TENANT_ID, suspended.agentId, 'suspended')
  const offline = await ta.registerV1()
  await setStatus(ta, DEFAULT_TENANT_ID, offline.agentId, 'offline')

  const cases: Array<{ name: string, headers: Record<string, string>, agentId: string }> = [
    { name: 'no X-Service-Key header', headers: {}, agentId: active.agentId },
    { name: 'empty X-Service-Key header', headers: v1Key(''), agentId: active.agentId },
    { name: 'malformed key without a prefix', headers: v1Key('not-a-key'), agentId: active.agentId },
    { name: 'malformed key: sk_agent_ with a short body', headers: v1Key('sk_agent_abc'), agentId: active.agentId },
    { name: 'malformed key: a valid key with one character appended', headers: v1Key(`${active.key}x`), agentId: active.agentId },
    { name: 'malformed key: a valid key with a character outside base64url', headers: v1Key(`${active.key.slice(0, -1)}!`), agentId: active.agentId },
    { name: 'unknown well-formed sk_agent_ key', headers: v1Key(mintKey('agentV1').key), agentId: active.agentId },
    { name: 'key of a deregistered (terminated) agent', headers: v1Key(terminated.key), agentId: terminated.agentId },
    { name: 'key of a suspended agent', headers: v1Key(suspended.key), agentId: suspended.agentId },
    { name: 'key of an offline agent', headers: v1Key(offline.key), agentId: offline.agentId },
    { name: 'legacy zk_live_ key of an active agent', headers: v1Key(legacy.key), agentId: legacy.agentId },
    { name: 'the bootstrap token as agent key', headers: v1Key(ta.token), agentId: active.agentId },
    { name: 'a valid v1 key sent as Authorization: Bearer instead of X-Service-Key', headers: bearer(active.key), agentId: active.agentId }
  ]
  for (const e of V1_ENDPOINTS) {
    for (const c of cases) {
      expectError(t, await call(ta, 'v1', e, c.agentId, c.headers), 401, 'unauthorized', `${e.name}, ${c.name}`)
    }
  }
  const stillActive = await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, active.agentId)
  t.equal(stillActive?.status, 'active', 'v1 POST /deregister refused with 401 leaves the agent active')
})

t.test('legacy agent endpoints: a missing, malformed, unknown, wrong-contract or inactive bearer key -> 401 unauthorized', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const active = await ta.registerLegacy()
  const v1 = await ta.registerV1()
  const terminated = await ta.registerLegacy({ name: 'terminated agent' })
  // The legacy contract has no deregister endpoint; terminate the agent as an admin would.
  await setStatus(ta, DEFAULT_TENANT_ID, terminated.agentId, 'terminated')
  const suspended = await ta.registerLegacy({ name: 'suspended agent' })
  await setStatus(ta, DEFAULT_TENANT_ID, suspended.agentId, 'suspended')

  const cases: Array<{ name: string, headers: Record<string, string> }> = [
    { name: 'no Authorization header', headers: {} },
    { name: 'Authorization with the Basic scheme', headers: { authorization: `Basic ${Buffer.from(`${active.key}:`).toString('base64')}` } },
    { name: 'Authorization: Bearer without a token', headers: { authorization: 'Bearer ' } },
    { name: 'valid key without the Bearer scheme', headers: { authorization: active.key } },
    { name: 'malformed bearer key without a prefix', headers: bearer('not-a-key') },
    { name: 'malformed bearer key: zk_live_ with a short body', headers: bearer('zk_live_abc') },
    { name: 'unknown well-formed zk_live_ key', headers: bearer(mintKey('agentLegacy').key) },
    { name: 'key of a terminated agent', headers: bearer(terminated.key) },
    { name: 'key of a suspended agent', headers: bearer(suspended.key) },
    { name: 'v1 sk_agent_ key of an active agent', headers: bearer(v1.key) },
    { name: 'the bootstrap token as bearer', headers: bearer(ta.token) },
    { name: 'a valid legacy key sent in X-Service-Key instead of Authorization', headers: v1Key(active.key) }
  ]
  for (const e of LEGACY_ENDPOINTS) {
    for (const c of cases) {
      expectError(t, await call(ta, 'legacy', e, active.agentId, c.headers), 401, 'unauthorized', `${e.name}, ${c.name}`)
    }
  }
})

t.test('v1 endpoints: a valid key naming another agent_id in path or body -> 403 forbidden, and nothing happens to that agent', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const me = await ta.registerV1()
  const sibling = await ta.registerV1()
  const tenantB = randomUUID()
  await ta.app.services.store.createTenant({ id: tenantB, name: 'tenant-b' })
  const regB = await ta.v1('POST', '/register', {
    headers: { 'x-service-bootstrap': bootstrapToken(TEST_BOOTSTRAP_SECRET, tenantB) },
    body: { agent_type: 'custom', agent_id: 'tenant-b-only' }
  })
  t.equal(regB.statusCode, 201, 'setup: agent registered in tenant B')
  const eventsBefore = await ta.app.services.store.countEvents(DEFAULT_TENANT_ID)

  const targets = [
    { name: 'another agent of the same tenant', agentId: sibling.agentId },
    { name: 'an agent_id that does not exist', agentId: 'no-such-agent' },
    { name: 'an agent of another tenant', agentId: 'tenant-b-only' },
    { name: 'own agent_id in upper case', agentId: me.agentId.toUpperCase() }
  ]
  for (const e of V1_ENDPOINTS.filter((x) => x.namesAgent)) {
    for (const target of targets) {
      expectError(t, await call(ta, 'v1', e, target.agentId, v1Key(me.key)), 403, 'forbidden', `${e.name}, own key but agent_id of ${target.name}`)
    }
  }

  const sib = await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, sibling.agentId)
  t.equal(sib?.status, 'active', 'v1 POST /deregister naming the sibling (403) leaves the sibling active')
  t.equal(sib?.last_heartbeat, null, 'v1 POST /heartbeat naming the sibling (403) records no heartbeat for it')
  const self = await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, me.agentId)
  t.equal(self?.status, 'active', 'v1 POST /deregister naming another agent (403) leaves the caller active')
  t.equal(await ta.app.services.store.countEvents(DEFAULT_TENANT_ID), eventsBefore, 'v1 POST /events naming another agent (403) stores no event')
  const b = await ta.app.services.store.getAgent(tenantB, 'tenant-b-only')
  t.equal(b?.status, 'active', 'the tenant-B agent named by a tenant-A key stays active')
})

t.test('v1 POST /register: a missing, malformed or wrongly signed bootstrap token -> 401 unauthorized and no agent or tenant is created', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const agent = await ta.registerV1()
  const unknownTenant = randomUUID()
  const sig = ta.token.slice(-64)
  const lastFlipped = ta.token.slice(0, -1) + (ta.token.endsWith('0') ? '1' : '0')
  const cases: Array<{ name: string, headers: Record<string, string> }> = [
    { name: 'no X-Service-Bootstrap header', headers: {} },
    { name: 'empty X-Service-Bootstrap header', headers: { 'x-service-bootstrap': '' } },
    { name: 'malformed token', headers: { 'x-service-bootstrap': 'bt_garbage' } },
    { name: 'token signed with another secret', headers: { 'x-service-bootstrap': bootstrapToken('not-the-server-secret', DEFAULT_TENANT_ID) } },
    { name: 'token with the last signature digit changed', headers: { 'x-service-bootstrap': lastFlipped } },
    { name: 'token with a truncated signature', headers: { 'x-service-bootstrap': ta.token.slice(0, -2) } },
    { name: 'default tenant signature on another tenant id', headers: { 'x-service-bootstrap': `bt_${unknownTenant}_${sig}` } },
    { name: 'token for a new tenant signed with another secret', headers: { 'x-service-bootstrap': bootstrapToken('not-the-server-secret', unknownTenant) } },
    { name: 'tenant API key as bootstrap token', headers: { 'x-service-bootstrap': ta.tenantKey } },
    { name: 'agent key as bootstrap token', headers: { 'x-service-bootstrap': agent.key } },
    { name: 'valid bootstrap token sent in X-Service-Key', headers: v1Key(ta.token) },
    { name: 'valid bootstrap token sent as Authorization: Bearer', headers: bearer(ta.token) },
    { name: 'valid agent key in X-Service-Key and no bootstrap token', headers: v1Key(agent.key) },
    { name: 'tenant API key as Authorization: Bearer (legacy credential on v1)', headers: bearer(ta.tenantKey) }
  ]
  const before = (await ta.app.services.store.listAgents(DEFAULT_TENANT_ID)).length
  for (const c of cases) {
    const res = await ta.v1('POST', '/register', { headers: c.headers, body: { agent_type: 'custom' } })
    expectError(t, res, 401, 'unauthorized', `v1 POST /register, ${c.name}`)
  }
  t.equal((await ta.app.services.store.listAgents(DEFAULT_TENANT_ID)).length, before, 'v1 POST /register refused with 401 creates no agent')
  t.equal(await ta.app.services.store.getTenant(unknownTenant), undefined, 'v1 POST /register with a badly signed token for a new tenant id creates no tenant')

  const ok = await ta.v1('POST', '/register', { headers: { 'x-service-bootstrap': ta.token }, body: { agent_type: 'custom' } })
  t.equal(ok.statusCode, 201, 'control: v1 POST /register with the valid bootstrap token -> 201')
})

t.test('legacy POST /register: missing, malformed or unknown tenant key -> 401; an agent key (either contract) -> 403 forbidden', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const v1 = await ta.registerV1()
  const legacy = await ta.registerLegacy()
  const cases: Array<{ name: string, headers: Record<string, string>, status: number, code: string }> = [
    { name: 'no Authorization header', headers: {}, status: 401, code: 'unauthorized' },
    { name: 'Authorization with the Basic scheme', headers: { authorization: `Basic ${Buffer.from(`${ta.tenantKey}:`).toString('base64')}` }, status: 401, code: 'unauthorized' },
    { name: 'malformed bearer key', headers: bearer('not-a-key'), status: 401, code: 'unauthorized' },
    { name: 'malformed bearer key: tk_live_ with a short body', headers: bearer('tk_live_abc'), status: 401, code: 'unauthorized' },
    { name: 'unknown well-formed tk_live_ tenant key', headers: bearer(mintKey('tenant').key), status: 401, code: 'unauthorized' },
    { name: 'the bootstrap token as bearer', headers: bearer(ta.token), status: 401, code: 'unauthorized' },
    { name: 'valid tenant key sent in X-Service-Key instead of Authorization', headers: v1Key(ta.tenantKey), status: 401, code: 'unauthorized' },
    { name: 'valid bootstrap token in X-Service-Bootstrap (v1 credential on legacy)', headers: { 'x-service-bootstrap': ta.token }, status: 401, code: 'unauthorized' },
    { name: 'a legacy agent key (zk_live_)', headers: bearer(legacy.key), status: 403, code: 'forbidden' },
    { name: 'a v1 agent key (sk_agent_)', headers: bearer(v1.key), status: 403, code: 'forbidden' }
  ]
  const before = (await ta.app.services.store.listAgents(DEFAULT_TENANT_ID)).length
  for (const c of cases) {
    const res = await ta.legacy('POST', '/register', { headers: c.headers, body: { name: 'intruder' } })
    expectError(t, res, c.status, c.code, `legacy POST /register, ${c.name}`)
  }
  t.equal((await ta.app.services.store.listAgents(DEFAULT_TENANT_ID)).length, before, 'legacy POST /register refused with 401/403 creates no agent')
  const ok = await ta.legacy('POST', '/register', { key: ta.tenantKey, body: { name: 'welcome' } })
  t.equal(ok.statusCode, 201, 'control: legacy POST /register with the tenant key -> 201')
})

t.test('tenant isolation: tenant B agents (v1 and legacy) never receive tenant A secrets, even with the same agent_id and deployment', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { store, directory } = ta.app.services
  const tenantA = DEFAULT_TENANT_ID
  const tenantB = randomUUID()
  await store.createTenant({ id: tenantB, name: 'tenant-b' })
  const tokenB = bootstrapToken(TEST_BOOTSTRAP_SECRET, tenantB)
  const tkB = mintKey('tenant')
  await store.addTenantKey(tenantB, tkB.hash, tkB.prefix)

  const reg = async (token: string, body: Record<string, unknown>): Promise<{ agentId: string, key: string }> => {
    const res = await ta.v1('POST', '/register', { headers: { 'x-service-bootstrap': token }, body })
    if (res.statusCode !== 201) throw new Error(`register: ${res.statusCode} ${res.body}`)
    return { agentId: res.json().agent_id, key: res.json().api_key }
  }
  const regLegacy = async (tenantKey: string, body: Record<string, unknown>): Promise<{ agentId: string, key: string }> => {
    const res = await ta.legacy('POST', '/register', { key: tenantKey, body })
    if (res.statusCode !== 201) throw new Error(`legacy register: ${res.statusCode} ${res.body}`)
    return { agentId: res.json().agent_id, key: res.json().api_key }
  }
  // The same agent_id and deployment in both tenants: only the tenant may tell them apart.
  const twinA = await reg(ta.token, { agent_type: 'custom', agent_id: 'twin', deployment_id: 'prod' })
  const twinB = await reg(tokenB, { agent_type: 'custom', agent_id: 'twin', deployment_id: 'prod' })
  const onlyA = await reg(ta.token, { agent_type: 'custom', agent_id: 'alpha-only', deployment_id: 'prod' })
  const legA = await regLegacy(ta.tenantKey, { name: 'twin legacy', agent_id: 'twin-legacy', deployment_id: 'prod' })
  const legB = await regLegacy(tkB.key, { name: 'twin legacy', agent_id: 'twin-legacy', deployment_id: 'prod' })
  t.equal(twinB.agentId, 'twin', 'setup: tenant B holds its own agent "twin"')
  t.equal(legB.agentId, 'twin-legacy', 'setup: tenant B holds its own legacy agent "twin-legacy"')

  const secretsA: Record<string, string> = {
    A_TENANT_SECRET: 'value-a-tenant-7f3c',
    A_DEPLOYMENT_SECRET: 'value-a-deployment-91bd',
    A_TWIN_SECRET: 'value-a-twin-5e2a',
    A_LEGACY_SECRET: 'value-a-legacy-c04f'
  }
  await setSecret(ta, tenantA, 'tenant', '', 'A_TENANT_SECRET', secretsA.A_TENANT_SECRET as string)
  await setSecret(ta, tenantA, 'deployment', 'prod', 'A_DEPLOYMENT_SECRET', secretsA.A_DEPLOYMENT_SECRET as string)
  await setSecret(ta, tenantA, 'agent', 'twin', 'A_TWIN_SECRET', secretsA.A_TWIN_SECRET as string)
  await setSecret(ta, tenantA, 'agent', 'twin-legacy', 'A_LEGACY_SECRET', secretsA.A_LEGACY_SECRET as string)
  await setSecret(ta, tenantB, 'tenant', '', 'B_TENANT_SECRET', 'value-b-tenant-0a9d')
  await directory.changed()

  // Control: tenant A's agents do get tenant A's secrets, so the isolation checks below are meaningful.
  const aSecrets = await ta.v1('GET', '/secrets', { key: twinA.key })
  t.equal(aSecrets.statusCode, 200, 'control: v1 GET /secrets of tenant A "twin" -> 200')
  t.same(aSecrets.json().secrets, { A_TENANT_SECRET: secretsA.A_TENANT_SECRET, A_DEPLOYMENT_SECRET: secretsA.A_DEPLOYMENT_SECRET, A_TWIN_SECRET: secretsA.A_TWIN_SECRET },
    'control: tenant A "twin" sees its tenant, deployment and agent secrets and no tenant B secret')
  const aLegacy = await ta.legacy('GET', '/secrets', { key: legA.key })
  t.same(aLegacy.json().secrets, { A_TENANT_SECRET: secretsA.A_TENANT_SECRET, A_DEPLOYMENT_SECRET: secretsA.A_DEPLOYMENT_SECRET, A_LEGACY_SECRET: secretsA.A_LEGACY_SECRET },
    'control: tenant A legacy "twin-legacy" sees its tenant, deployment and agent secrets')

  const views: Array<{ name: string, res: LightMyRequestResponse }> = [
    { name: 'v1 GET /secrets of tenant B "twin"', res: await ta.v1('GET', '/secrets', { key: twinB.key }) },
    { name: 'v1 GET /secrets/twin of tenant B "twin"', res: await ta.v1('GET', '/secrets/twin', { key: twinB.key }) },
    { name: 'legacy GET /secrets of tenant B "twin-legacy"', res: await ta.legacy('GET', '/secrets', { key: legB.key }) }
  ]
  for (const v of views) {
    t.equal(v.res.statusCode, 200, `${v.name} -> 200`)
    t.same(v.res.json().secrets, { B_TENANT_SECRET: 'value-b-tenant-0a9d' }, `${v.name} -> only tenant B's own secret`)
    for (const [name, value] of Object.entries(secretsA)) {
      t.notOk(v.res.body.includes(name) || v.res.body.includes(value), `${v.name} -> never contains tenant A secret ${name} (name or value)`)
    }
  }

  // Tenant B's key cannot name tenant A's agents.
  expectError(t, await ta.v1('GET', `/secrets/${onlyA.agentId}`, { key: twinB.key }), 403, 'forbidden', 'v1 GET /secrets/{agent_id} with a tenant B key and a tenant A agent_id')
  expectError(t, await ta.v1('GET', `/config/${onlyA.agentId}`, { key: twinB.key }), 403, 'forbidden', 'v1 GET /config/{agent_id} with a tenant B key and a tenant A agent_id')

  // Tenant B's config is tenant B's: same agent_id, but its own record.
  const cfgB = await ta.v1('GET', '/config/twin', { key: twinB.key })
  t.equal(cfgB.statusCode, 200, 'v1 GET /config/twin with the tenant B key -> 200 (its own "twin")')

  // Events sent by tenant B's agents land in tenant B only.
  const countA = await store.countEvents(tenantA)
  const countB = await store.countEvents(tenantB)
  const ev = await ta.v1('POST', '/events', { key: twinB.key, body: { agent_id: 'twin', events: [{ type: 'x', category: 'audit', timestamp: now() }] } })
  t.equal(ev.statusCode, 202, 'v1 POST /events by tenant B "twin" -> 202')
  const evL = await ta.legacy('POST', '/events', { key: legB.key, body: { events: [{ type: 'agent.started', timestamp: now() }] } })
  t.equal(evL.statusCode, 202, 'legacy POST /events by tenant B "twin-legacy" -> 202')
  t.equal(await waitForCount(ta, tenantB, countB + 2), countB + 2, 'both tenant B event batches are stored under tenant B')
  t.equal(await store.countEvents(tenantA), countA, 'no tenant B event is stored under tenant A')
})

/** Waits (bounded) until the tenant holds `expected` events, for 202 answers that are only queued; returns the count. */
async function waitForCount (ta: TestApp, tenantId: string, expected: number): Promise<number> {
  let n = await ta.app.services.store.countEvents(tenantId)
  for (let i = 0; i < 100 && n < expected; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    n = await ta.app.services.store.countEvents(tenantId)
  }
  return n
}

t.test('platform rate limit (SERVICE_RATE_LIMIT_RPS=5, SERVICE_REGISTER_RATE_PER_MINUTE=2): excess requests -> 429 rate_limited with Retry-After', async (t) => {
  const ta = await testApp({ env: { SERVICE_RATE_LIMIT_RPS: '5', SERVICE_REGISTER_RATE_PER_MINUTE: '2' } })
  t.teardown(() => ta.close())
  const { agents } = ta.app.services
  // Agents are created through the service so the registration limit (2 per minute) is not spent.
  const newAgent = async (contract: 'v1' | 'legacy'): Promise<{ agentId: string, key: string }> => {
    const { agent, key } = await agents.register({
      tenantId: DEFAULT_TENANT_ID,
      agentId: undefined,
      slugBase: 'custom',
      name: undefined,
      agentType: 'custom',
      capabilities: [],
      metadata: {},
      deploymentId: null,
      contract
    })
    return { agentId: agent.agent_id, key: key.key }
  }

  /** 12 quick requests: with 5 per second at least 2 exceed any window. */
  const hammer = async (label: string, ok: number, send: () => Promise<LightMyRequestResponse>): Promise<void> => {
    const results: LightMyRequestResponse[] = []
    for (let i = 0; i < 12; i++) results.push(await send())
    t.equal(results[0]?.statusCode, ok, `${label}: the first request -> ${ok}`)
    t.same([...new Set(results.map((r) => r.statusCode))].filter((s) => s !== ok && s !== 429), [], `${label}: every answer is ${ok} or 429`)
    const limited = results.find((r) => r.statusCode === 429)
    t.ok(limited, `${label}: 12 requests at a limit of 5 per second -> at least one 429`)
    if (limited === undefined) return
    expectError(t, limited, 429, 'rate_limited', label)
    t.match(String(limited.headers['retry-after']), /^[1-9][0-9]*$/, `${label}: the 429 carries Retry-After in whole seconds`)
  }

  for (const e of V1_ENDPOINTS.filter((x) => x.ok !== 204)) {
    const a = await newAgent('v1')
    await hammer(`${e.name}, 12 requests with one key`, e.ok, async () => await call(ta, 'v1', e, a.agentId, v1Key(a.key)))
  }
  for (const e of LEGACY_ENDPOINTS) {
    const a = await newAgent('legacy')
    await hammer(`${e.name}, 12 requests with one key`, e.ok, async () => await call(ta, 'legacy', e, a.agentId, bearer(a.key)))
  }

  // The limit is per agent key: once one key is limited, another agent's key is still served.
  const busy = await newAgent('v1')
  const calm = await newAgent('v1')
  for (let i = 0; i < 12; i++) await ta.v1('GET', '/secrets', { key: busy.key })
  t.equal((await ta.v1('GET', '/secrets', { key: calm.key })).statusCode, 200, 'v1 GET /secrets with another agent key right after one key hit the limit -> 200 (limit is per key)')

  // Registrations: 2 per minute per bootstrap token / tenant key.
  const results: LightMyRequestResponse[] = []
  for (let i = 0; i < 6; i++) results.push(await ta.v1('POST', '/register', { headers: { 'x-service-bootstrap': ta.token }, body: { agent_type: 'custom' } }))
  t.equal(results[0]?.statusCode, 201, 'v1 POST /register, first registration -> 201')
  t.same([...new Set(results.map((r) => r.statusCode))].filter((s) => s !== 201 && s !== 429), [], 'v1 POST /register, every answer is 201 or 429')
  const limited = results.find((r) => r.statusCode === 429)
  t.ok(limited, 'v1 POST /register, 6 registrations at a limit of 2 per minute -> at least one 429')
  if (limited !== undefined) {
    expectError(t, limited, 429, 'rate_limited', 'v1 POST /register, over the registration limit')
    t.match(String(limited.headers['retry-after']), /^[1-9][0-9]*$/, 'v1 POST /register, the 429 carries Retry-After in whole seconds')
  }

  const legacyResults: LightMyRequestResponse[] = []
  for (let i = 0; i < 6; i++) legacyResults.push(await ta.legacy('POST', '/register', { key: ta.tenantKey, body: { name: `rl ${i}` } }))
  t.equal(legacyResults[0]?.statusCode, 201, 'legacy POST /register, first registration -> 201')
  t.same([...new Set(legacyResults.map((r) => r.statusCode))].filter((s) => s !== 201 && s !== 429), [], 'legacy POST /register, every answer is 201 or 429')
  const legacyLimited = legacyResults.find((r) => r.statusCode === 429)
  t.ok(legacyLimited, 'legacy POST /register, 6 registrations at a limit of 2 per minute -> at least one 429')
  if (legacyLimited !== undefined) {
    expectError(t, legacyLimited, 429, 'rate_limited', 'legacy POST /register, over the registration limit')
    t.match(String(legacyLimited.headers['retry-after']), /^[1-9][0-9]*$/, 'legacy POST /register, the 429 carries Retry-After in whole seconds')
  }
})
