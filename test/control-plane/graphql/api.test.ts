/**
 * The management API (POST /gql/service/): policies and agent endpoints over GraphQL, scoped to the
 * token's tenant and role; changes reach the agent-facing API at once.
 */
import t, { type Test } from 'tap'
import { buildSchema, GraphQLEnumType, isEnumType, isInputObjectType, isObjectType } from 'graphql'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from '../helpers.js'
import { mintUserToken, type Role } from '../../../control-plane/graphql/auth.js'
import { SCHEMA } from '../../../control-plane/graphql/schema.js'
import { AGENT_STATUSES, HEALTH_STATUSES } from '../../../control-plane/store/store.js'
import { POLICY_TYPES } from '../../../shared/policy/index.js'
import { SCOPE_TYPES } from '../../../shared/policy/scope.js'

const SECRET = 'graphql-test-secret-0123456789-abcdefgh'
const OTHER_TENANT = '00000000-0000-4000-8000-0000000000b2'

interface Gql {
  status: number
  data: Record<string, any> | null
  errors: Array<{ message: string, extensions?: Record<string, any> }> | undefined
}

async function app (t: Test, env: Record<string, string> = {}): Promise<TestApp & { gql: (query: string, variables?: unknown, role?: Role | null, tenantId?: string) => Promise<Gql> }> {
  const ta = await testApp({ env: { SERVICE_JWT_SECRET: SECRET, ...env } })
  t.teardown(() => ta.close())
  await ta.app.services.store.createTenant({ id: OTHER_TENANT, name: 'other' })
  const gql = async (query: string, variables: unknown = {}, role: Role | null = 'admin', tenantId = DEFAULT_TENANT_ID): Promise<Gql> => {
    const headers = role === null ? {} : { authorization: `Bearer ${await mintUserToken(SECRET, { sub: 'tester', tenantId, role }, 600)}` }
    const res = await ta.app.inject({ method: 'POST', url: '/gql/service/', headers, payload: { query, variables } as Record<string, unknown> })
    const body = res.json() as { data?: Record<string, any> | null, errors?: Gql['errors'] }
    return { status: res.statusCode, data: body.data ?? null, errors: body.errors }
  }
  return { ...ta, gql }
}

const CREATE = `mutation ($input: CreatePolicyInput!) {
  createPolicy(input: $input) { id name policyType scopeType scopeId config enforcement priority isActive version tenantId }
}`

const toolPolicy = (name: string, denied: string[], extra: Record<string, unknown> = {}): Record<string, unknown> =>
  ({ name, policyType: 'TOOL_PERMISSION', scopeType: 'ORG', config: JSON.stringify({ denied_tools: denied }), ...extra })

t.test('schema: the enums are the store\'s and the engine\'s values, upper-cased', async (t) => {
  const schema = buildSchema(SCHEMA)
  const values = (name: string): string[] => (schema.getType(name) as GraphQLEnumType).getValues().map((v) => v.name).sort()
  t.strictSame(values('AgentStatus'), AGENT_STATUSES.map((s) => s.toUpperCase()).sort())
  t.strictSame(values('HealthStatus'), HEALTH_STATUSES.map((s) => s.toUpperCase()).sort())
  t.strictSame(values('PolicyTypeEnum'), POLICY_TYPES.map((s) => s.toUpperCase()).sort())
  t.strictSame(values('ScopeType'), [...SCOPE_TYPES].sort())
  for (const type of ['AgentEndpointType', 'PolicyType']) {
    t.ok(schema.getType(type)?.description, `${type} is described`)
  }
})

t.test('schema: every type and field is described, and every value of the enums whose values need explaining', async (t) => {
  const schema = buildSchema(SCHEMA)
  const missing: string[] = []
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || ['String', 'Int', 'Boolean', 'ID', 'Float'].includes(type.name)) continue
    if (type.description == null || type.description === '') missing.push(type.name)
    if (isObjectType(type) || isInputObjectType(type)) {
      for (const f of Object.values(type.getFields())) if (f.description == null || f.description === '') missing.push(`${type.name}.${f.name}`)
    }
    if (isEnumType(type) && ['AgentStatus', 'ScopeType', 'Enforcement', 'ApprovalStatus', 'AgentContract', 'SecretScopeType'].includes(type.name)) {
      for (const v of type.getValues()) if (v.description == null || v.description === '') missing.push(`${type.name}.${v.name}`)
    }
  }
  t.strictSame(missing, [], 'nothing undescribed')
})

t.test('createPolicy: defaults filled, the ORG scope id is the tenant, and the agent API enforces it at once', async (t) => {
  const a = await app(t)
  const { key } = await a.registerV1({ agent_type: 'custom', agent_id: 'bot' })
  const evaluate = async (): Promise<boolean> =>
    ((await a.v1('POST', '/evaluate', { key, body: { agent_id: 'bot', action: 'tool_call', context: { tool: 'shell' } } })).json() as { allowed: boolean }).allowed
  t.equal(await evaluate(), true, 'no policy yet: allowed')
  const r = await a.gql(CREATE, { input: toolPolicy('no-shell', ['shell']) })
  t.equal(r.errors, undefined)
  t.match(r.data?.createPolicy, {
    name: 'no-shell', policyType: 'TOOL_PERMISSION', scopeType: 'ORG', scopeId: DEFAULT_TENANT_ID,
    enforcement: 'ENFORCE', priority: 0, isActive: true, version: 1, tenantId: DEFAULT_TENANT_ID
  })
  t.strictSame(JSON.parse(r.data?.createPolicy.config as string), { denied_tools: ['shell'] }, 'config comes back as a JSON string')
  t.equal(await evaluate(), false, 'enforced by the next /evaluate')
})

t.test('createPolicy: a bad config is a BAD_USER_INPUT error naming the config path; nothing is stored', async (t) => {
  const a = await app(t)
  const bad = await a.gql(CREATE, { input: { name: 'rl', policyType: 'RATE_LIMIT', scopeType: 'ORG', config: JSON.stringify({ requests_per_minute: -5 }) } })
  t.equal(bad.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT')
  t.match(bad.errors?.[0]?.message, /config\.requests_per_minute/)
  t.match(bad.errors?.[0]?.extensions?.errors, [{ path: 'config.requests_per_minute' }])
  const notJson = await a.gql(CREATE, { input: { ...toolPolicy('x', []), config: '{oops' } })
  t.match(notJson.errors?.[0], { message: /config is not JSON/, extensions: { code: 'BAD_USER_INPUT', path: 'config' } })
  const notObject = await a.gql(CREATE, { input: { ...toolPolicy('x', []), config: '[1,2]' } })
  t.match(notObject.errors?.[0]?.message, /config must be a JSON object/)
  const emptyName = await a.gql(CREATE, { input: toolPolicy('  ', ['x']) })
  t.equal(emptyName.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', 'a blank name')
  const enumWrong = await a.gql(CREATE, { input: { ...toolPolicy('x', []), policyType: 'NOT_A_TYPE' } })
  t.ok(enumWrong.errors !== undefined && enumWrong.errors.length > 0, 'an unknown enum value is refused by GraphQL itself')
  t.equal((await a.app.services.store.listPolicies(DEFAULT_TENANT_ID)).length, 0, 'nothing stored')
})

t.test('createPolicy: a name used already is a CONFLICT', async (t) => {
  const a = await app(t)
  t.equal((await a.gql(CREATE, { input: toolPolicy('dup', ['a']) })).errors, undefined)
  const again = await a.gql(CREATE, { input: toolPolicy('dup', ['b']) })
  t.equal(again.errors?.[0]?.extensions?.code, 'CONFLICT')
  t.strictSame((await a.app.services.store.listPolicies(DEFAULT_TENANT_ID))[0]?.config, { denied_tools: ['a'] }, 'the first one is unchanged')
})

t.test('updatePolicy / setPolicyActive / deletePolicy: fields left out are kept, the version goes up only on a change', async (t) => {
  const a = await app(t)
  const id = (await a.gql(CREATE, { input: toolPolicy('p', ['shell']) })).data?.createPolicy.id as string
  const UPDATE = 'mutation ($id: ID!, $input: UpdatePolicyInput!) { updatePolicy(id: $id, input: $input) { name config priority enforcement version isActive } }'
  const up = await a.gql(UPDATE, { id, input: { priority: 7, enforcement: 'AUDIT' } })
  t.match(up.data?.updatePolicy, { name: 'p', priority: 7, enforcement: 'AUDIT', version: 2 })
  t.strictSame(JSON.parse(up.data?.updatePolicy.config as string), { denied_tools: ['shell'] }, 'config kept')
  const same = await a.gql(UPDATE, { id, input: { priority: 7 } })
  t.equal(same.data?.updatePolicy.version, 2, 'no change, no new version')
  const renamed = await a.gql(UPDATE, { id, input: { name: 'renamed', config: JSON.stringify({ allowed_tools: ['search'] }) } })
  t.match(renamed.data?.updatePolicy, { name: 'renamed', version: 3 })
  const badConfig = await a.gql(UPDATE, { id, input: { config: JSON.stringify({ allowed_tools: 'search' }) } })
  t.equal(badConfig.errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', 'an update is validated too')
  await a.gql(CREATE, { input: toolPolicy('taken', []) })
  t.equal((await a.gql(UPDATE, { id, input: { name: 'taken' } })).errors?.[0]?.extensions?.code, 'CONFLICT', 'renaming onto another policy')

  const off = await a.gql('mutation ($id: ID!) { setPolicyActive(id: $id, isActive: false) { isActive version } }', { id })
  t.match(off.data?.setPolicyActive, { isActive: false, version: 4 })
  const del = await a.gql('mutation ($id: ID!) { deletePolicy(id: $id) }', { id })
  t.equal(del.data?.deletePolicy, true)
  t.equal((await a.gql('mutation ($id: ID!) { deletePolicy(id: $id) }', { id })).data?.deletePolicy, false, 'deleting again: false')
  t.equal((await a.gql('query ($id: ID!) { policy(id: $id) { id } }', { id })).data?.policy, null, 'gone')
  const missing = await a.gql(UPDATE, { id, input: { priority: 1 } })
  t.equal(missing.errors?.[0]?.extensions?.code, 'NOT_FOUND')
})

t.test('policies: filters, cursor pagination (first at most 200) and totalCount', async (t) => {
  const a = await app(t)
  for (let i = 0; i < 5; i++) await a.gql(CREATE, { input: toolPolicy(`tools-${i}`, [`t${i}`], { isActive: i % 2 === 0 }) })
  await a.gql(CREATE, { input: { name: 'rl', policyType: 'RATE_LIMIT', scopeType: 'DEPLOYMENT', scopeId: 'prod', config: JSON.stringify({ requests_per_minute: 10 }) } })
  const LIST = 'query ($f: PolicyFilter, $first: Int, $after: String) { policies(filter: $f, first: $first, after: $after) { totalCount edges { cursor node { name } } pageInfo { hasNextPage endCursor } } }'
  const names = (r: Gql): string[] => (r.data?.policies.edges as Array<{ node: { name: string } }>).map((e) => e.node.name)
  t.strictSame(names(await a.gql(LIST, { f: { policyType: 'RATE_LIMIT' } })), ['rl'])
  t.strictSame(names(await a.gql(LIST, { f: { scopeType: 'DEPLOYMENT', scopeId: 'prod' } })), ['rl'])
  t.strictSame(names(await a.gql(LIST, { f: { isActive: false } })), ['tools-1', 'tools-3'])
  t.strictSame(names(await a.gql(LIST, { f: { search: 'TOOLS-4' } })), ['tools-4'], 'search ignores case')

  const seen: string[] = []
  let after: string | null = null
  for (let pageNo = 0; pageNo < 10; pageNo++) {
    const r = await a.gql(LIST, { first: 2, after })
    t.equal(r.data?.policies.totalCount, 6)
    seen.push(...names(r))
    if (r.data?.policies.pageInfo.hasNextPage !== true) break
    after = r.data.policies.pageInfo.endCursor as string
  }
  t.strictSame(seen, ['rl', 'tools-0', 'tools-1', 'tools-2', 'tools-3', 'tools-4'], 'pages of 2 walk the whole list once, by name')
  t.equal((await a.gql(LIST, { first: 201 })).errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', 'first over 200')
  t.equal((await a.gql(LIST, { first: 0 })).errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', 'first 0')
  t.equal((await a.gql(LIST, { after: 'not-a-cursor' })).errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', 'a made-up cursor')
})

t.test('agent endpoints: listed with filters, read by id, suspended (the key is refused) and activated again', async (t) => {
  const a = await app(t)
  const { key } = await a.registerV1({ agent_type: 'langchain', agent_id: 'support-bot' })
  await a.registerV1({ agent_type: 'custom', agent_id: 'batch-job' })
  const LIST = 'query ($f: AgentEndpointFilter) { agentEndpoints(filter: $f) { totalCount edges { node { id agentId apiKeyPrefix tenantId status health capabilities lastHeartbeat createdAt } } } }'
  const all = await a.gql(LIST)
  t.equal(all.data?.agentEndpoints.totalCount, 2)
  const bot = (all.data?.agentEndpoints.edges as Array<{ node: Record<string, any> }>).find((e) => e.node.agentId === 'support-bot')?.node
  t.match(bot, { agentId: 'support-bot', apiKeyPrefix: key.slice(0, 12), tenantId: DEFAULT_TENANT_ID, health: 'UNKNOWN', lastHeartbeat: null })
  t.notMatch(JSON.stringify(all), key, 'the key itself is never shown')
  t.equal((await a.gql(LIST, { f: { agentType: 'langchain' } })).data?.agentEndpoints.totalCount, 1)
  t.equal((await a.gql(LIST, { f: { search: 'BATCH' } })).data?.agentEndpoints.totalCount, 1)
  t.equal((await a.gql('query ($id: ID!) { agentEndpoint(id: $id) { agentId } }', { id: bot?.id })).data?.agentEndpoint.agentId, 'support-bot')

  const suspended = await a.gql('mutation ($id: ID!) { suspendAgentEndpoint(id: $id) { status } }', { id: bot?.id })
  t.equal(suspended.data?.suspendAgentEndpoint.status, 'SUSPENDED')
  t.equal((await a.v1('GET', '/config/support-bot', { key })).statusCode, 401, 'a suspended agent\'s key is refused at once')
  t.equal((await a.gql(LIST, { f: { status: 'SUSPENDED' } })).data?.agentEndpoints.totalCount, 1)
  const active = await a.gql('mutation ($id: ID!) { activateAgentEndpoint(id: $id) { status } }', { id: bot?.id })
  t.equal(active.data?.activateAgentEndpoint.status, 'ACTIVE')
  t.equal((await a.v1('GET', '/config/support-bot', { key })).statusCode, 200, 'and accepted again')
  t.equal((await a.gql('mutation { suspendAgentEndpoint(id: "00000000-0000-4000-8000-000000000999") { status } }')).errors?.[0]?.extensions?.code, 'NOT_FOUND')
})

t.test('roles: a viewer reads; every mutation by a viewer is FORBIDDEN and changes nothing', async (t) => {
  const a = await app(t)
  const id = (await a.gql(CREATE, { input: toolPolicy('p', ['x']) })).data?.createPolicy.id as string
  const { agentId } = await a.registerV1({ agent_type: 'custom', agent_id: 'viewed' })
  const agentUuid = (await a.app.services.store.getAgent(DEFAULT_TENANT_ID, agentId))?.id
  t.equal((await a.gql('{ policies { totalCount } }', {}, 'viewer')).data?.policies.totalCount, 1, 'a viewer reads')
  const mutations: Array<[string, Record<string, unknown>]> = [
    [CREATE, { input: toolPolicy('q', []) }],
    ['mutation ($id: ID!) { updatePolicy(id: $id, input: { priority: 3 }) { id } }', { id }],
    ['mutation ($id: ID!) { setPolicyActive(id: $id, isActive: false) { id } }', { id }],
    ['mutation ($id: ID!) { deletePolicy(id: $id) }', { id }],
    ['mutation ($id: ID!) { suspendAgentEndpoint(id: $id) { id } }', { id: agentUuid }],
    ['mutation ($id: ID!) { activateAgentEndpoint(id: $id) { id } }', { id: agentUuid }]
  ]
  for (const [query, variables] of mutations) {
    const r = await a.gql(query, variables, 'viewer')
    t.equal(r.errors?.[0]?.extensions?.code, 'FORBIDDEN', query.split('(')[0] ?? query)
  }
  const stored = await a.app.services.store.listPolicies(DEFAULT_TENANT_ID)
  t.match(stored, [{ name: 'p', priority: 0, is_active: true, version: 1 }], 'nothing changed')
})

t.test('tenant isolation: another tenant\'s ids find nothing, whatever the argument', async (t) => {
  const a = await app(t)
  const id = (await a.gql(CREATE, { input: toolPolicy('mine', ['x']) })).data?.createPolicy.id as string
  const { agentId } = await a.registerV1({ agent_type: 'custom', agent_id: 'mine' })
  const agentUuid = (await a.app.services.store.getAgent(DEFAULT_TENANT_ID, agentId))?.id
  const other = async (query: string, variables: Record<string, unknown> = {}): Promise<Gql> => await a.gql(query, variables, 'admin', OTHER_TENANT)
  t.equal((await other('{ policies { totalCount } }')).data?.policies.totalCount, 0, 'lists are the caller\'s tenant only')
  t.equal((await other('{ agentEndpoints { totalCount } }')).data?.agentEndpoints.totalCount, 0)
  t.equal((await other('query ($id: ID!) { policy(id: $id) { id } }', { id })).data?.policy, null)
  t.equal((await other('query ($id: ID!) { agentEndpoint(id: $id) { id } }', { id: agentUuid })).data?.agentEndpoint, null)
  t.equal((await other('mutation ($id: ID!) { updatePolicy(id: $id, input: { priority: 9 }) { id } }', { id })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await other('mutation ($id: ID!) { setPolicyActive(id: $id, isActive: false) { id } }', { id })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await other('mutation ($id: ID!) { deletePolicy(id: $id) }', { id })).data?.deletePolicy, false)
  t.equal((await other('mutation ($id: ID!) { suspendAgentEndpoint(id: $id) { id } }', { id: agentUuid })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await other('mutation ($id: ID!) { activateAgentEndpoint(id: $id) { id } }', { id: agentUuid })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await other('mutation ($id: ID!) { updateAgentEndpoint(id: $id, input: { name: "taken" }) { id } }', { id: agentUuid })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await other('mutation ($id: ID!) { rotateAgentApiKey(id: $id) { apiKey } }', { id: agentUuid })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await other('mutation ($id: ID!) { deleteAgentEndpoint(id: $id) }', { id: agentUuid })).data?.deleteAgentEndpoint, false)
  t.equal((await other('query { events(filter: { agentId: "mine" }) { totalCount } }')).data?.events.totalCount, 0, 'an agentId of another tenant filters to nothing')
  t.match(await a.app.services.store.getPolicy(DEFAULT_TENANT_ID, id), { priority: 0, is_active: true, version: 1 }, 'the owner\'s policy is untouched')
  t.match(await a.app.services.store.getAgent(DEFAULT_TENANT_ID, agentId), { status: 'active' }, 'and its agent')
})

t.test('auth: no token, a bad token and an expired one are 401 before any resolver runs; open mode lets a tokenless caller act as admin of the default tenant', async (t) => {
  const a = await app(t)
  const none = await a.gql('{ policies { totalCount } }', {}, null)
  t.equal(none.status, 401)
  t.match(none.errors?.[0]?.message, /missing bearer token/)
  const bad = await a.app.inject({ method: 'POST', url: '/gql/service/', headers: { authorization: 'Bearer not.a.jwt' }, payload: { query: '{ policies { totalCount } }' } })
  t.equal(bad.statusCode, 401)
  const expired = await mintUserToken(SECRET, { sub: 's', tenantId: DEFAULT_TENANT_ID, role: 'admin' }, 1)
  await new Promise((resolve) => setTimeout(resolve, 2100))
  const late = await a.app.inject({ method: 'POST', url: '/gql/service/', headers: { authorization: `Bearer ${expired}` }, payload: { query: '{ policies { totalCount } }' } })
  t.equal(late.statusCode, 401)
  t.match(late.body, /token expired/)

  const open = await app(t, { SERVICE_AUTH_MODE: 'open' })
  const anon = await open.gql(CREATE, { input: toolPolicy('open-made', ['x']) }, null)
  t.match(anon.data?.createPolicy, { name: 'open-made', tenantId: DEFAULT_TENANT_ID }, 'open mode: admin of the default tenant')
  t.equal((await open.gql(CREATE, { input: toolPolicy('v', []) }, 'viewer')).errors?.[0]?.extensions?.code, 'FORBIDDEN', 'a token sent in open mode still counts')
})

t.test('query depth is limited', async (t) => {
  const a = await app(t)
  const deep = '{ policies { edges { node { id } } } ' + '__schema { types { fields { type { ofType { ofType { ofType { ofType { name } } } } } } } } }'
  const r = await a.gql(deep)
  t.ok(r.errors !== undefined && r.errors.some((e) => /depth/i.test(e.message)), 'a query deeper than the limit is refused')
})

t.test('createAgentEndpoint: the key is shown once and works at once; a taken agentId is a CONFLICT; bad input is BAD_USER_INPUT', async (t) => {
  const a = await app(t)
  const CREATE_AGENT = 'mutation ($input: CreateAgentEndpointInput!) { createAgentEndpoint(input: $input) { apiKey agentEndpoint { id agentId apiKeyPrefix status capabilities } } }'
  const r = await a.gql(CREATE_AGENT, { input: { agentId: 'portal-bot', agentType: 'langchain', capabilities: ['chat'], metadata: JSON.stringify({ team: 'support' }), deploymentId: 'prod' } })
  t.equal(r.errors, undefined)
  const created = r.data?.createAgentEndpoint as { apiKey: string, agentEndpoint: Record<string, any> }
  t.match(created.apiKey, /^sk_agent_/)
  t.match(created.agentEndpoint, { agentId: 'portal-bot', apiKeyPrefix: created.apiKey.slice(0, 12), status: 'ACTIVE', capabilities: ['chat'] })
  t.equal((await a.v1('GET', '/config/portal-bot', { key: created.apiKey })).statusCode, 200, 'the key works on the agent API')
  const stored = await a.app.services.store.getAgent(DEFAULT_TENANT_ID, 'portal-bot')
  t.match(stored, { agent_type: 'langchain', deployment_id: 'prod', metadata: { team: 'support' } })
  t.notMatch(JSON.stringify(stored), created.apiKey, 'only the hash is stored')

  const legacy = await a.gql(CREATE_AGENT, { input: { name: 'Old Bot', agentType: 'custom', contract: 'LEGACY' } })
  t.match(legacy.data?.createAgentEndpoint.apiKey, /^zk_live_/, 'a legacy endpoint gets a legacy key')
  t.equal((await a.legacy('GET', '/config', { key: legacy.data?.createAgentEndpoint.apiKey })).statusCode, 200)

  t.equal((await a.gql(CREATE_AGENT, { input: { agentId: 'portal-bot', agentType: 'custom' } })).errors?.[0]?.extensions?.code, 'CONFLICT')
  for (const input of [
    { agentId: 'Not A Slug', agentType: 'custom' },
    { agentType: '  ' },
    { agentType: 'custom', name: '' },
    { agentType: 'custom', metadata: '[1]' },
    { agentType: 'custom', capabilities: [''] }
  ]) {
    t.equal((await a.gql(CREATE_AGENT, { input })).errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(input))
  }
})

t.test('updateAgentEndpoint, rotateAgentApiKey, deleteAgentEndpoint: fields kept unless given; the old key dies on rotation; delete terminates', async (t) => {
  const a = await app(t)
  const { key } = await a.registerV1({ agent_type: 'custom', agent_id: 'rotor', capabilities: ['chat'], deployment_id: 'dev' })
  const id = (await a.app.services.store.getAgent(DEFAULT_TENANT_ID, 'rotor'))?.id as string
  const up = await a.gql('mutation ($id: ID!, $input: UpdateAgentEndpointInput!) { updateAgentEndpoint(id: $id, input: $input) { capabilities } }',
    { id, input: { capabilities: ['chat', 'tool:search'], metadata: JSON.stringify({ team: 'ops' }) } })
  t.strictSame(up.data?.updateAgentEndpoint.capabilities, ['chat', 'tool:search'])
  t.match(await a.app.services.store.getAgent(DEFAULT_TENANT_ID, 'rotor'), { deployment_id: 'dev', metadata: { team: 'ops' } }, 'the deployment is kept, metadata replaced')
  const cleared = await a.gql('mutation ($id: ID!) { updateAgentEndpoint(id: $id, input: { deploymentId: null }) { id } }', { id })
  t.equal(cleared.errors, undefined)
  t.equal((await a.app.services.store.getAgent(DEFAULT_TENANT_ID, 'rotor'))?.deployment_id, null, 'deploymentId null clears it')
  t.equal((await a.v1('GET', '/config/rotor', { key })).json().agent.capabilities.length, 2, 'the agent API shows the new capabilities at once')

  const rotated = await a.gql('mutation ($id: ID!) { rotateAgentApiKey(id: $id) { apiKey agentEndpoint { apiKeyPrefix } } }', { id })
  const fresh = rotated.data?.rotateAgentApiKey.apiKey as string
  t.match(fresh, /^sk_agent_/)
  t.not(fresh, key)
  t.equal(rotated.data?.rotateAgentApiKey.agentEndpoint.apiKeyPrefix, fresh.slice(0, 12))
  t.equal((await a.v1('GET', '/config/rotor', { key })).statusCode, 401, 'the old key is refused at once')
  t.equal((await a.v1('GET', '/config/rotor', { key: fresh })).statusCode, 200, 'the new one works')

  t.equal((await a.gql('mutation ($id: ID!) { deleteAgentEndpoint(id: $id) }', { id })).data?.deleteAgentEndpoint, true)
  t.equal((await a.v1('GET', '/config/rotor', { key: fresh })).statusCode, 401, 'a deleted endpoint\'s key is refused')
  t.equal((await a.gql('mutation ($id: ID!) { deleteAgentEndpoint(id: $id) }', { id })).data?.deleteAgentEndpoint, false, 'deleting again: false')
  t.equal((await a.gql('mutation ($id: ID!) { rotateAgentApiKey(id: $id) { apiKey } }', { id })).errors?.[0]?.extensions?.code, 'CONFLICT', 'no new key for a terminated endpoint')
  t.match((await a.gql('query ($id: ID!) { agentEndpoint(id: $id) { status } }', { id })).data?.agentEndpoint, { status: 'TERMINATED' }, 'still listed, terminated (its events stay)')
})

t.test('secrets: created encrypted, listed without values, updated, deleted; agents get them through GET /secrets', async (t) => {
  const a = await app(t)
  const { key } = await a.registerV1({ agent_type: 'custom', agent_id: 'holder', deployment_id: 'prod' })
  const CREATE_SECRET = 'mutation ($input: CreateSecretInput!) { createSecret(input: $input) { id name scopeType scopeId updatedAt } }'
  const tenantWide = await a.gql(CREATE_SECRET, { input: { name: 'SEARCH_KEY', scopeType: 'TENANT', scopeId: 'ignored', value: 'tenant-value' } })
  t.match(tenantWide.data?.createSecret, { name: 'SEARCH_KEY', scopeType: 'TENANT', scopeId: '' })
  const forAgent = await a.gql(CREATE_SECRET, { input: { name: 'SEARCH_KEY', scopeType: 'AGENT', scopeId: 'holder', value: 'agent-value' } })
  t.equal(forAgent.errors, undefined)
  const secretsOf = async (): Promise<Record<string, string>> => (await a.v1('GET', '/secrets/holder', { key })).json().secrets as Record<string, string>
  t.strictSame(await secretsOf(), { SEARCH_KEY: 'agent-value' }, 'the narrower scope wins')
  const raw = a.app.services.store
  t.notMatch(JSON.stringify(await raw.listSecrets(DEFAULT_TENANT_ID)), /agent-value|tenant-value/, 'stored encrypted')

  const listed = await a.gql('{ secrets { id name scopeType scopeId } }')
  t.equal(listed.data?.secrets.length, 2)
  t.notMatch(JSON.stringify(listed), /value/, 'no values in the API')

  const id = forAgent.data?.createSecret.id as string
  t.equal((await a.gql('mutation ($id: ID!) { updateSecret(id: $id, input: { value: "rotated" }) { name } }', { id })).errors, undefined)
  t.strictSame(await secretsOf(), { SEARCH_KEY: 'rotated' }, 'the new value is handed out')
  t.equal((await a.gql(CREATE_SECRET, { input: { name: 'SEARCH_KEY', scopeType: 'AGENT', scopeId: 'holder', value: 'x' } })).errors?.[0]?.extensions?.code, 'CONFLICT')
  t.equal((await a.gql('mutation ($id: ID!) { deleteSecret(id: $id) }', { id })).data?.deleteSecret, true)
  t.strictSame(await secretsOf(), { SEARCH_KEY: 'tenant-value' }, 'after the delete, the tenant-wide one again')
  t.equal((await a.gql('mutation ($id: ID!) { deleteSecret(id: $id) }', { id })).data?.deleteSecret, false)
  t.equal((await a.gql('mutation { deleteSecret(id: "garbage") }')).data?.deleteSecret, false, 'an id that is not one: false')
  t.equal((await a.gql('mutation ($id: ID!) { updateSecret(id: $id, input: { value: "v" }) { id } }', { id })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  for (const input of [
    { name: 'bad name!', scopeType: 'TENANT', value: 'v' },
    { name: 'N', scopeType: 'DEPLOYMENT', value: 'v' },
    { name: 'N', scopeType: 'AGENT', scopeId: '  ', value: 'v' }
  ]) {
    t.equal((await a.gql(CREATE_SECRET, { input })).errors?.[0]?.extensions?.code, 'BAD_USER_INPUT', JSON.stringify(input))
  }
  const other = await a.gql('mutation ($id: ID!) { updateSecret(id: $id, input: { value: "stolen" }) { id } }', { id: tenantWide.data?.createSecret.id }, 'admin', OTHER_TENANT)
  t.equal(other.errors?.[0]?.extensions?.code, 'NOT_FOUND', 'another tenant cannot touch it')
  t.equal((await a.gql('{ secrets { id } }', {}, 'admin', OTHER_TENANT)).data?.secrets.length, 0)
  t.equal((await a.gql('mutation ($id: ID!) { deleteSecret(id: $id) }', { id: tenantWide.data?.createSecret.id }, 'viewer')).errors?.[0]?.extensions?.code, 'FORBIDDEN')
})

t.test('events: listed newest first with filters and cursor pages; each agentEndpoint comes from one read of the agents (a loader)', async (t) => {
  const a = await app(t)
  const one = await a.registerV1({ agent_type: 'custom', agent_id: 'one' })
  const two = await a.registerV1({ agent_type: 'custom', agent_id: 'two' })
  const send = async (agentId: string, key: string, events: Array<Record<string, unknown>>): Promise<void> => {
    const r = await a.v1('POST', '/events', { key, body: { agent_id: agentId, events } })
    t.equal(r.statusCode, 202, r.body)
  }
  const ev = (type: string, n: number, category = 'telemetry', timestamp = new Date().toISOString()): Record<string, unknown> => ({ type, category, timestamp, payload: { n } })
  await send('one', one.key, [ev('tool.invoked', 1), ev('tool.invoked', 2), ev('llm.call', 3, 'telemetry', '2020-01-01T00:00:00.000Z')])
  await send('two', two.key, [ev('tool.invoked', 4, 'alert')])
  const EVENTS = 'query ($f: EventFilter, $first: Int, $after: String) { events(filter: $f, first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id eventType payload timestamp agentEndpoint { agentId } } } } }'
  const nodes = (r: Gql): Array<Record<string, any>> => (r.data?.events.edges as Array<{ node: Record<string, any> }>).map((e) => e.node)
  const ours = (list: Array<Record<string, any>>): Array<Record<string, any>> => list.filter((n) => n.eventType !== 'agent.registered')

  const all = await a.gql(EVENTS, { f: { eventType: 'tool.invoked' } })
  t.equal(all.errors, undefined)
  t.equal(all.data?.events.totalCount, 3)
  t.strictSame(nodes(all).map((n) => [n.agentEndpoint.agentId, JSON.parse(n.payload as string).n]).sort(), [['one', 1], ['one', 2], ['two', 4]], 'each event with its agent endpoint')
  t.equal((await a.gql(EVENTS, { f: { agentId: 'two' } })).data?.events.edges.filter((e: any) => e.node.eventType === 'tool.invoked').length, 1, 'by agentId')
  t.equal((await a.gql(EVENTS, { f: { category: 'alert' } })).data?.events.totalCount, 1, 'by category')
  t.strictSame(ours(nodes(await a.gql(EVENTS, { f: { to: '2021-01-01T00:00:00Z' } }))).map((n) => n.eventType), ['llm.call'], 'before a time')
  t.equal(ours(nodes(await a.gql(EVENTS, { f: { from: '2021-01-01T00:00:00Z', agentId: 'one' } }))).length, 2, 'from a time')
  t.equal((await a.gql(EVENTS, { f: { agentId: 'nobody' } })).data?.events.totalCount, 0, 'an unknown agent: nothing')
  t.equal((await a.gql(EVENTS, { f: { from: 'yesterday' } })).errors?.[0]?.extensions?.code, 'BAD_USER_INPUT')

  const seen: string[] = []
  let after: string | null = null
  for (let i = 0; i < 20; i++) {
    const r = await a.gql(EVENTS, { first: 2, after })
    seen.push(...nodes(r).map((n) => n.id as string))
    if (r.data?.events.pageInfo.hasNextPage !== true) break
    after = r.data.events.pageInfo.endCursor as string
  }
  const total = (await a.gql(EVENTS, {})).data?.events.totalCount as number
  t.equal(seen.length, total, 'pages of 2 cover every event')
  t.equal(new Set(seen).size, total, 'each once')
  t.equal((await a.gql(EVENTS, {}, 'admin', OTHER_TENANT)).data?.events.totalCount, 0, 'another tenant sees none')

  let agentReads = 0
  const store = a.app.services.store
  const listAgents = store.listAgents.bind(store)
  store.listAgents = async (tenantId: string) => { agentReads++; return await listAgents(tenantId) }
  t.teardown(() => { store.listAgents = listAgents })
  await a.gql(EVENTS, { first: 10 })
  t.equal(agentReads, 1, 'ten events, one read of the agents')
})

t.test('subscription eventAdded: an event posted through the REST API reaches a WebSocket subscriber of its tenant (filtered by agentId); a bad token is refused', async (t) => {
  const a = await app(t)
  const address = await a.app.listen({ port: 0, host: '127.0.0.1' })
  const watched = await a.registerV1({ agent_type: 'custom', agent_id: 'watched' })
  const other = await a.registerV1({ agent_type: 'custom', agent_id: 'other' })
  const token = await mintUserToken(SECRET, { sub: 'viewer', tenantId: DEFAULT_TENANT_ID, role: 'viewer' }, 600)
  const { WebSocket } = await import('undici')

  const subscribe = async (authorization: string, agentId: string): Promise<{ messages: Array<Record<string, any>>, closed: Promise<void>, close: () => void }> => {
    const ws = new WebSocket(`${address.replace('http', 'ws')}/gql/service/`, 'graphql-transport-ws')
    const messages: Array<Record<string, any>> = []
    const closed = new Promise<void>((resolve) => ws.addEventListener('close', () => resolve()))
    await new Promise<void>((resolve, reject) => { ws.addEventListener('open', () => resolve()); ws.addEventListener('error', () => reject(new Error('ws error'))) })
    ws.addEventListener('message', (m) => { messages.push(JSON.parse(String(m.data)) as Record<string, any>) })
    ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization } }))
    ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: `subscription { eventAdded(agentId: "${agentId}") { eventType payload agentEndpoint { agentId } } }` } }))
    return { messages, closed, close: () => ws.close() }
  }
  const sub = await subscribe(`Bearer ${token}`, 'watched')
  t.teardown(() => sub.close())
  await new Promise((resolve) => setTimeout(resolve, 200))
  const post = async (agentId: string, key: string, type: string): Promise<void> => {
    const r = await a.v1('POST', '/events', { key, body: { agent_id: agentId, events: [{ type, category: 'telemetry', timestamp: new Date().toISOString(), payload: { from: agentId } }] } })
    t.equal(r.statusCode, 202)
  }
  await post('other', other.key, 'not.for.you')
  await post('watched', watched.key, 'tool.invoked')
  const deadline = Date.now() + 5000
  while (!sub.messages.some((m) => m.type === 'next') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  const next = sub.messages.filter((m) => m.type === 'next')
  t.equal(next.length, 1, 'one event: the watched agent\'s')
  t.match(next[0]?.payload.data.eventAdded, { eventType: 'tool.invoked', agentEndpoint: { agentId: 'watched' } })
  t.strictSame(JSON.parse(next[0]?.payload.data.eventAdded.payload as string), { from: 'watched' })

  const bad = await subscribe('Bearer not-a-token', 'watched')
  await Promise.race([bad.closed, new Promise((resolve) => setTimeout(resolve, 3000))])
  t.notOk(bad.messages.some((m) => m.type === 'connection_ack'), 'a bad token gets no connection_ack')
  bad.close()
})

t.test('tenant API keys: created (key shown once) and working for legacy registration, listed by prefix, revoked at once', async (t) => {
  const a = await app(t)
  const created = await a.gql('mutation { createTenantApiKey { apiKey tenantApiKey { id keyPrefix createdAt } } }')
  const { apiKey, tenantApiKey } = created.data?.createTenantApiKey as { apiKey: string, tenantApiKey: { id: string, keyPrefix: string } }
  t.match(apiKey, /^tk_live_/)
  t.equal(tenantApiKey.keyPrefix, apiKey.slice(0, 12))
  t.notMatch(tenantApiKey.id, apiKey.slice(8, 20), 'the id tells nothing of the key')
  const register = async (): Promise<number> => (await a.legacy('POST', '/register', { key: apiKey, body: { name: 'via new key' } })).statusCode
  t.equal(await register(), 201, 'the new key registers legacy agents')
  const listed = await a.gql('{ tenantApiKeys { id keyPrefix } }')
  t.equal(listed.data?.tenantApiKeys.length, 2, 'the helper\'s key and the new one')
  t.notMatch(JSON.stringify(listed), apiKey)
  t.equal((await a.gql('mutation ($id: ID!) { revokeTenantApiKey(id: $id) }', { id: tenantApiKey.id }, 'admin', OTHER_TENANT)).data?.revokeTenantApiKey, false, 'another tenant cannot revoke it')
  t.equal((await a.gql('mutation ($id: ID!) { revokeTenantApiKey(id: $id) }', { id: tenantApiKey.id }, 'viewer')).errors?.[0]?.extensions?.code, 'FORBIDDEN')
  t.equal(await register(), 201, 'still working')
  t.equal((await a.gql('mutation ($id: ID!) { revokeTenantApiKey(id: $id) }', { id: tenantApiKey.id })).data?.revokeTenantApiKey, true)
  t.equal(await register(), 401, 'revoked: refused at once')
  t.equal((await a.gql('mutation ($id: ID!) { revokeTenantApiKey(id: $id) }', { id: tenantApiKey.id })).data?.revokeTenantApiKey, false, 'revoking again: false')
})

t.test('evaluations: legacy decisions are listed with their eval_ id, request and decision, filtered by agent and outcome', async (t) => {
  const a = await app(t)
  await a.gql(CREATE, { input: { name: 'models', policyType: 'MODEL_RESTRICTION', scopeType: 'ORG', config: JSON.stringify({ allowed_models: ['gpt-4o*'] }) } })
  const { key } = await a.registerLegacy({ name: 'legacy', agent_id: 'legacy-one' })
  const ids: string[] = []
  for (const model of ['gpt-4o', 'claude-3', 'gpt-4o-mini']) {
    const r = await a.legacy('POST', '/evaluate', { key, body: { request_type: 'llm.invoke', model } })
    ids.push(r.json().evaluation_id as string)
  }
  const EVALS = 'query ($f: EvaluationFilter, $first: Int, $after: String) { evaluations(filter: $f, first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { id allowed reason request decision agentEndpoint { agentId } } } } }'
  let all: Gql = { status: 0, data: null, errors: undefined }
  for (let i = 0; i < 50; i++) {
    all = await a.gql(EVALS)
    if (all.data?.evaluations.totalCount === 3) break
    await new Promise((resolve) => setTimeout(resolve, 20)) // recorded by the ingest writer's next commit
  }
  t.equal(all.data?.evaluations.totalCount, 3)
  const nodes = (all.data?.evaluations.edges as Array<{ node: Record<string, any> }>).map((e) => e.node)
  t.strictSame(nodes.map((n) => n.id).sort(), [...ids].sort(), 'the eval_ ids the agent was given')
  const blocked = nodes.find((n) => n.allowed === false)
  t.match(blocked, { reason: /claude-3/, agentEndpoint: { agentId: 'legacy-one' } })
  t.equal(JSON.parse(blocked?.request as string).model, 'claude-3', 'with its request')
  t.equal(JSON.parse(blocked?.decision as string).allowed, false, 'and its decision')
  t.equal((await a.gql(EVALS, { f: { allowed: false } })).data?.evaluations.totalCount, 1)
  t.equal((await a.gql(EVALS, { f: { agentId: 'legacy-one', allowed: true } })).data?.evaluations.totalCount, 2)
  t.equal((await a.gql(EVALS, { f: { agentId: 'nobody' } })).data?.evaluations.totalCount, 0)
  const p1 = await a.gql(EVALS, { first: 2 })
  const p2 = await a.gql(EVALS, { first: 2, after: p1.data?.evaluations.pageInfo.endCursor })
  t.equal(p1.data?.evaluations.pageInfo.hasNextPage, true)
  t.equal(p2.data?.evaluations.edges.length, 1)
  t.equal(p2.data?.evaluations.pageInfo.hasNextPage, false)
  t.equal((await a.gql(EVALS, {}, 'admin', OTHER_TENANT)).data?.evaluations.totalCount, 0, 'another tenant sees none')
})

t.test('effectivePolicies: the policies that apply to the agent, in evaluation order, each with its compiled JSON-logic', async (t) => {
  const a = await app(t)
  await a.registerV1({ agent_type: 'custom', agent_id: 'scoped', deployment_id: 'prod' })
  await a.gql(CREATE, { input: toolPolicy('org-wide', ['shell'], { priority: 1 }) })
  await a.gql(CREATE, { input: toolPolicy('prod-only', ['rm'], { scopeType: 'DEPLOYMENT', scopeId: 'prod', priority: 5 }) })
  await a.gql(CREATE, { input: toolPolicy('dev-only', ['x'], { scopeType: 'DEPLOYMENT', scopeId: 'dev' }) })
  await a.gql(CREATE, { input: toolPolicy('switched-off', ['y'], { isActive: false }) })
  const r = await a.gql('query ($id: String!) { effectivePolicies(agentId: $id) { policy { name } logic error } }', { id: 'scoped' })
  t.equal(r.errors, undefined)
  const list = r.data?.effectivePolicies as Array<{ policy: { name: string }, logic: string, error: string | null }>
  t.strictSame(list.map((p) => p.policy.name), ['prod-only', 'org-wide'], 'its deployment\'s and the tenant\'s, higher priority first; not another deployment\'s, not an inactive one')
  t.ok(list.every((p) => p.error === null))
  t.match(JSON.parse(list[0]?.logic as string), Object, 'the compiled rule is JSON-logic')
  t.match(list[0]?.logic, /rm/, 'built from the policy\'s config')
  t.equal((await a.gql('query { effectivePolicies(agentId: "nobody") { logic } }')).errors?.[0]?.extensions?.code, 'NOT_FOUND')
  t.equal((await a.gql('query { effectivePolicies(agentId: "scoped") { logic } }', {}, 'admin', OTHER_TENANT)).errors?.[0]?.extensions?.code, 'NOT_FOUND', 'not across tenants')
})

t.test('overview: agents by status and health, events and blocked decisions (v1 blocks recorded as policy.blocked events, legacy blocked evaluations) per hour', async (t) => {
  const a = await app(t)
  await a.gql(CREATE, { input: toolPolicy('no-shell', ['shell']) })
  const v1 = await a.registerV1({ agent_type: 'custom', agent_id: 'v1-bot' })
  const legacy = await a.registerLegacy({ name: 'legacy', agent_id: 'legacy-bot' })
  const idle = await a.registerV1({ agent_type: 'custom', agent_id: 'idle' })
  await a.gql('mutation ($id: ID!) { suspendAgentEndpoint(id: $id) { id } }', { id: (await a.app.services.store.getAgent(DEFAULT_TENANT_ID, 'idle'))?.id })
  t.ok(idle.key)
  for (const tool of ['shell', 'search', 'shell']) {
    await a.v1('POST', '/evaluate', { key: v1.key, body: { agent_id: 'v1-bot', action: 'tool_call', context: { tool } } })
  }
  const legacyBlock = await a.legacy('POST', '/evaluate', { key: legacy.key, body: { request_type: 'tool.invoked', context: { tool: 'shell' } } })
  t.equal(legacyBlock.json().allowed, false, 'the legacy request is blocked')
  await a.v1('POST', '/events', { key: v1.key, body: { agent_id: 'v1-bot', events: [{ type: 'tool.invoked', category: 'telemetry', timestamp: new Date().toISOString(), payload: {} }] } })
  const OVERVIEW = '{ overview { agentsByStatus { value count } agentsByHealth { value count } eventsPerHour { hour count } blockedPerHour { hour count } } }'
  let o: Record<string, any> = {}
  for (let i = 0; i < 50; i++) {
    o = (await a.gql(OVERVIEW)).data?.overview as Record<string, any>
    if ((o.blockedPerHour as Array<{ count: number }>).at(-1)?.count === 3) break
    await new Promise((resolve) => setTimeout(resolve, 20)) // the blocks are written by the ingest writer's next commit
  }
  const byValue = (list: Array<{ value: string, count: number }>): Record<string, number> => Object.fromEntries(list.map((x) => [x.value, x.count]))
  t.match(byValue(o.agentsByStatus), { ACTIVE: 2, SUSPENDED: 1, PROVISIONING: 0, TERMINATED: 0 })
  t.match(byValue(o.agentsByHealth), { UNKNOWN: 3, HEALTHY: 0 })
  t.equal(o.eventsPerHour.length, 24, '24 hours')
  t.equal(new Date(o.eventsPerHour[23].hour as string).getTime(), Math.floor(Date.now() / 3_600_000) * 3_600_000, 'the current hour last')
  t.ok((o.eventsPerHour[23].count as number) >= 6, 'this hour: registrations, the two v1 blocks, the sent event')
  t.equal(o.blockedPerHour[23].count, 3, 'two v1 blocks and one legacy block this hour')
  t.equal((o.blockedPerHour as Array<{ count: number }>).slice(0, 23).reduce((n, h) => n + h.count, 0), 0, 'nothing earlier')
  const blockEvents = (await a.app.services.store.listEvents(DEFAULT_TENANT_ID, { limit: 100 })).filter((e) => e.event_type === 'policy.blocked')
  t.equal(blockEvents.length, 2, 'each v1 block is an audit event')
  t.match(blockEvents[0], { category: 'audit', agent_id: 'v1-bot', payload: { tool: 'shell', failed: ['no-shell'], decided_by: 'control-plane' } })
  const other = (await a.gql(OVERVIEW, {}, 'admin', OTHER_TENANT)).data?.overview as Record<string, any>
  t.equal((other.blockedPerHour as Array<{ count: number }>).reduce((n, h) => n + h.count, 0), 0, 'another tenant\'s overview is its own')
})

t.test('introspection: the spec\'s object types with their fields and nullability', async (t) => {
  const a = await app(t)
  const r = await a.gql('{ __schema { types { name fields { name type { kind name ofType { kind name ofType { kind name ofType { name } } } } } } } }')
  const types = new Map((r.data?.__schema.types as Array<{ name: string, fields: Array<{ name: string, type: any }> | null }>).map((x) => [x.name, x.fields ?? []]))
  const shape = (type: any): string => type.kind === 'NON_NULL' ? `${shape(type.ofType)}!` : type.kind === 'LIST' ? `[${shape(type.ofType)}]` : type.name
  const fieldsOf = (name: string): Record<string, string> => Object.fromEntries((types.get(name) ?? []).map((f) => [f.name, shape(f.type)]))
  t.strictSame(fieldsOf('AgentEndpointType'), {
    id: 'ID!', agentId: 'String!', apiKeyPrefix: 'String!', tenantId: 'String!', status: 'AgentStatus!', health: 'HealthStatus!',
    capabilities: '[String!]!', lastHeartbeat: 'DateTime', createdAt: 'DateTime!'
  }, 'AgentEndpointType: section 2.1 exactly')
  t.match(fieldsOf('PolicyType'), {
    id: 'ID!', name: 'String!', policyType: 'PolicyTypeEnum!', scopeType: 'ScopeType!', scopeId: 'String!', config: 'JSONString!',
    isActive: 'Boolean!', version: 'Int!', tenantId: 'String!'
  }, 'PolicyType: the fields of section 2.2')
  t.strictSame(fieldsOf('EventType'), { id: 'ID!', agentEndpoint: 'AgentEndpointType!', eventType: 'String!', payload: 'JSONString!', timestamp: 'DateTime!' }, 'EventType: section 2.3 exactly')
})

t.test('query cost: pages multiply what they select; a query over the limit is refused before it runs', async (t) => {
  const a = await app(t)
  const ok = await a.gql('{ policies(first: 200) { edges { node { id name policyType scopeType scopeId config enforcement priority isActive version } } } }')
  t.equal(ok.errors, undefined, 'a full page of one list is fine')
  const aliases = Array.from({ length: 10 }, (_, i) => `p${i}: policies(first: 200) { edges { node { id name config } } }`).join(' ')
  const wide = await a.gql(`{ ${aliases} }`)
  t.equal(wide.errors?.[0]?.extensions?.code, 'QUERY_TOO_COSTLY', 'ten aliases of a 200-item page')
  t.match(wide.errors?.[0]?.message, /over the limit of 5000/)
  const nested = await a.gql('query ($n: Int) { events(first: $n) { edges { node { id agentEndpoint { id agentId capabilities } } } } agentEndpoints(first: $n) { edges { node { id agentId apiKeyPrefix tenantId status health capabilities lastHeartbeat createdAt } } } policies(first: $n) { edges { node { id name config } } } evaluations(first: $n) { edges { node { id request decision } } } }', { n: 10 })
  t.equal(nested.errors?.[0]?.extensions?.code, 'QUERY_TOO_COSTLY', 'a page size given by a variable counts as 200')
  const viaFragment = await a.gql(`fragment P on PolicyConnection { edges { node { id name config version } } } { ${Array.from({ length: 8 }, (_, i) => `p${i}: policies(first: 200) { ...P }`).join(' ')} }`)
  t.equal(viaFragment.errors?.[0]?.extensions?.code, 'QUERY_TOO_COSTLY', 'fragments are counted too')
})

t.test('approvals: a human_oversight block requests one (named in a warning); approved in the portal, it allows the retry once', async (t) => {
  const a = await app(t)
  await a.gql(CREATE, { input: { name: 'four-eyes', policyType: 'HUMAN_OVERSIGHT', scopeType: 'ORG', config: JSON.stringify({ require_approval_for: ['delete_*'] }) } })
  const bot = await a.registerV1({ agent_type: 'custom', agent_id: 'ops-bot' })
  const peer = await a.registerV1({ agent_type: 'custom', agent_id: 'peer-bot' })
  const ask = async (key: string, agentId: string, approvalId?: string): Promise<{ allowed: boolean, warnings: string[] }> =>
    (await a.v1('POST', '/evaluate', { key, body: { agent_id: agentId, action: 'tool_call', context: { tool: 'delete_user', ...(approvalId === undefined ? {} : { approval_id: approvalId }) } } })).json() as { allowed: boolean, warnings: string[] }
  const idIn = (warnings: string[]): string | undefined => warnings.map((w) => /approval (apr_[\w-]+) requested/.exec(w)?.[1]).find((x) => x !== undefined)

  const first = await ask(bot.key, 'ops-bot')
  t.equal(first.allowed, false, 'blocked without an approval')
  const id = idIn(first.warnings) as string
  t.match(id, /^apr_/, 'the warning names the approval requested')
  t.equal(idIn((await ask(bot.key, 'ops-bot')).warnings), id, 'asking again while it is pending: the same approval, not a new one')

  const LIST = 'query ($s: ApprovalStatus) { approvals(status: $s) { id status subject reason request decidedBy agentEndpoint { agentId } } }'
  const pending = (await a.gql(LIST, { s: 'PENDING' })).data?.approvals as Array<Record<string, any>>
  t.equal(pending.length, 1)
  t.match(pending[0], { id, status: 'PENDING', subject: 'tool delete_user', reason: /requires human approval/, agentEndpoint: { agentId: 'ops-bot' } })
  t.equal(JSON.parse(pending[0]?.request as string).context.tool, 'delete_user', 'with the blocked request')
  t.equal((await a.gql(LIST, {}, 'admin', OTHER_TENANT)).data?.approvals.length, 0, 'another tenant sees none')

  const DECIDE = 'mutation ($id: ID!, $ok: Boolean!) { decideApproval(id: $id, approve: $ok) { id status decidedBy } }'
  t.equal((await a.gql(DECIDE, { id, ok: true }, 'viewer')).errors?.[0]?.extensions?.code, 'FORBIDDEN')
  t.equal((await a.gql(DECIDE, { id, ok: true }, 'admin', OTHER_TENANT)).errors?.[0]?.extensions?.code, 'NOT_FOUND', 'not across tenants')
  t.equal((await ask(peer.key, 'peer-bot', id)).allowed, false, 'another agent cannot use it')
  const approved = await a.gql(DECIDE, { id, ok: true })
  t.match(approved.data?.decideApproval, { id, status: 'APPROVED', decidedBy: 'tester' })
  t.equal((await a.gql(DECIDE, { id, ok: false })).errors?.[0]?.extensions?.code, 'CONFLICT', 'decided once only')
  t.equal((await ask(peer.key, 'peer-bot', id)).allowed, false, 'approved, still only for its own agent')

  t.equal((await ask(bot.key, 'ops-bot', id)).allowed, true, 'the retry with the approval is allowed')
  const again = await ask(bot.key, 'ops-bot', id)
  t.equal(again.allowed, false, 'once: a second use is blocked')
  const second = idIn(again.warnings) as string
  t.not(second, id, 'and a new approval is requested')
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.match((await a.gql(LIST, { s: 'USED' })).data?.approvals, [{ id, status: 'USED' }], 'the first is used')

  t.match((await a.gql(DECIDE, { id: second, ok: false })).data?.decideApproval, { status: 'REJECTED' })
  t.equal((await ask(bot.key, 'ops-bot', second)).allowed, false, 'a rejected approval allows nothing')
  t.equal((await a.gql(DECIDE, { id: 'apr_nope', ok: true })).errors?.[0]?.extensions?.code, 'NOT_FOUND')
})

t.test('approvals: decided by another process (the store\'s change counter), the running control plane follows', async (t) => {
  const a = await app(t)
  await a.gql(CREATE, { input: { name: 'four-eyes', policyType: 'HUMAN_OVERSIGHT', scopeType: 'ORG', config: JSON.stringify({ require_approval_for: ['payments.*'] }) } })
  const bot = await a.registerV1({ agent_type: 'custom', agent_id: 'payer' })
  const ask = async (approvalId?: string): Promise<{ allowed: boolean, warnings: string[] }> =>
    (await a.v1('POST', '/evaluate', { key: bot.key, body: { agent_id: 'payer', action: 'payments.refund', context: approvalId === undefined ? {} : { approval_id: approvalId } } })).json() as { allowed: boolean, warnings: string[] }
  const id = /approval (apr_[\w-]+)/.exec((await ask()).warnings.join(' '))?.[1] as string
  t.match(id, /^apr_/)
  const { SqliteStore } = await import('../../../control-plane/store/sqlite/index.js')
  const other = new SqliteStore(a.dbFile)
  t.teardown(() => other.close())
  t.equal(await other.decideApproval(DEFAULT_TENANT_ID, id, 'approved', 'someone-else'), true)
  let allowed = false
  for (let i = 0; i < 40 && !allowed; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    allowed = (await ask(id)).allowed
  }
  t.equal(allowed, true, 'approved elsewhere: allowed here within the change poll')
})

t.test('a policy created through GraphQL reaches a sidecar\'s config watch at once', async (t) => {
  const a = await app(t)
  const address = await a.app.listen({ port: 0, host: '127.0.0.1' })
  const { agentId, key } = await a.registerV1({ agent_type: 'custom', agent_id: 'watched' })
  const { ConfigWatch } = await import('../../../sidecar/config-watch.js')
  const { hashKey } = await import('../../../shared/keys.js')
  const configs: Array<{ policies: Array<{ name: string }> }> = []
  const watch = new ConfigWatch(address, {
    apiName: 'service', baseMs: 50, maxMs: 200, connectTimeoutMs: 1_000,
    onConfig: (_t, c) => configs.push(c as { policies: Array<{ name: string }> }), onRevoked: () => {}
  })
  t.teardown(() => watch.stop())
  watch.ensure({ keyHash: hashKey(key), contract: 'v1', key, agentId })
  for (let i = 0; i < 100 && configs.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.equal(configs.length, 1, 'the stream is open with the current config')
  const since = Date.now()
  await a.gql(CREATE, { input: toolPolicy('pushed', ['shell']) })
  for (let i = 0; i < 100 && configs.length === 1; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  t.strictSame(configs[1]?.policies.map((p) => p.name), ['pushed'], 'the new policy is pushed')
  t.ok(Date.now() - since < 1000, `within a second (${Date.now() - since} ms)`)
})
