import t from 'tap'
import { testApp, DEFAULT_TENANT_ID } from '../../helpers.js'
import { secretAad } from '../../../../control-plane/agents/service.js'

t.test('legacy lifecycle: register with a tenant key -> config -> evaluate allowed, then blocked -> events linked to the evaluation -> heartbeat -> secrets', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const reg = await ta.legacy('POST', '/register', {
    key: ta.tenantKey,
    body: { name: 'Support Bot', capabilities: ['llm:invoke', 'tool:search'], deployment_id: 'prod-eu', metadata: { framework: 'custom' } }
  })
  t.equal(reg.statusCode, 201)
  const r = reg.json()
  t.equal(r.agent_id, 'support-bot', 'agent_id is the slug of the name')
  t.match(r.api_key, /^zk_live_[A-Za-z0-9_-]{43}$/)
  t.equal(r.api_key_prefix, r.api_key.slice(0, 12))
  t.same(r.config, { cache_ttl: 300, heartbeat_interval_seconds: 30, event_batch_size: 100, event_flush_interval_seconds: 5 })
  t.same(r.policies, [])
  const key = r.api_key as string

  const again = await ta.legacy('POST', '/register', { key: ta.tenantKey, body: { name: 'Support Bot' } })
  t.equal(again.statusCode, 201, 'the same name registers again')
  t.match(again.json().agent_id, /^support-bot-[0-9a-f]{8}$/, 'with a suffix that keeps agent_id unique')

  const cfg = await ta.legacy('GET', '/config', { key })
  t.equal(cfg.statusCode, 200)
  t.match(cfg.json(), { agent_id: 'support-bot', policies: [], allowed_models: [], cache_ttl: 300 })
  t.equal(cfg.json().features.audit_logging, true)
  t.equal(cfg.json().features.content_scanning, false)

  const evalBody = { request_type: 'llm.invoke', model: 'gpt-4o', tokens_requested: 500, messages: [{ role: 'user', content: 'hello' }], context: { user_id: 'u1', session_id: 's1' } }
  const ok = await ta.legacy('POST', '/evaluate', { key, body: evalBody })
  t.equal(ok.statusCode, 200)
  t.match(ok.json(), { allowed: true, policies_evaluated: 0, restrictions: {}, warnings: [] })
  t.match(ok.json().evaluation_id, /^eval_[A-Za-z0-9_-]+$/)

  const hb0 = await ta.legacy('POST', '/heartbeat', { key, body: { status: 'healthy', metrics: { requests_processed: 1, errors_last_5min: 0, avg_latency_ms: 2 } } })
  t.equal(hb0.statusCode, 200)
  t.same(hb0.json(), { acknowledged: true, config_updated: false }, 'nothing changed since /config')

  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [
    { name: 'models', type: 'model_restriction', scope_type: 'DEPLOYMENT', scope_id: 'prod-eu', config: { allowed_models: ['claude-*'], max_tokens: 1000 }, enforcement: 'enforce', priority: 10, is_active: true },
    { name: 'pii', type: 'content_filter', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { pii: ['email'], on_match: 'warn' }, enforcement: 'enforce', priority: 0, is_active: true },
    { name: 'other-deployment', type: 'tool_permission', scope_type: 'DEPLOYMENT', scope_id: 'prod-us', config: { denied_tools: ['*'] }, enforcement: 'enforce', priority: 0, is_active: true }
  ])
  await ta.app.services.directory.changed()

  const hb1 = await ta.legacy('POST', '/heartbeat', { key, body: { status: 'healthy' } })
  t.equal(hb1.json().config_updated, true, 'policies changed since the last /config')

  const cfg2 = (await ta.legacy('GET', '/config', { key })).json()
  t.equal(cfg2.policies.length, 2, 'the other deployment\'s policy does not apply')
  t.match(cfg2.policies[0], { type: 'model_restriction', scope: 'deployment', config: { allowed_models: ['claude-*'] } })
  t.match(cfg2.policies[0].id, /^pol_[0-9a-f]{32}$/, 'legacy policy ids have the pol_ prefix')
  t.same(cfg2.allowed_models, ['claude-*'])
  t.equal(cfg2.features.content_scanning, true)
  t.equal((await ta.legacy('POST', '/heartbeat', { key, body: { status: 'healthy' } })).json().config_updated, false, 'and not after re-fetching')

  const blocked = await ta.legacy('POST', '/evaluate', { key, body: { ...evalBody, messages: [{ role: 'user', content: 'mail me at bob@example.com' }] } })
  t.equal(blocked.statusCode, 200)
  const b = blocked.json()
  t.equal(b.allowed, false)
  t.match(b.reason, /^models: /)
  t.equal(b.policies_evaluated, 2, 'legacy policies_evaluated is a count')
  t.same(b.restrictions, { max_tokens: 1000, allowed_models: ['claude-*'] })
  t.equal(b.warnings.length, 1, 'the warn-only content filter adds a warning')
  t.match(b.evaluation_id, /^eval_/)

  await ta.app.services.ingest.flush()
  const record = await ta.app.services.store.getEvaluation(DEFAULT_TENANT_ID, b.evaluation_id)
  t.ok(record, 'the evaluation is recorded under its evaluation_id')
  t.equal(record?.allowed, false)
  t.match(record?.request, { request_type: 'llm.invoke', model: 'gpt-4o' })

  const events = await ta.legacy('POST', '/events', {
    key,
    body: {
      events: [
        { type: 'policy.blocked', timestamp: '2026-11-22T10:00:00Z', evaluation_id: b.evaluation_id, data: { reason: b.reason } },
        { type: 'llm.response', timestamp: '2026-11-22T10:00:01Z', data: { model: 'claude-3', tokens_input: 10, tokens_output: 20, cost_usd: 0.01, latency_ms: 300, finish_reason: 'stop', user_id: 'u1' } }
      ]
    }
  })
  t.equal(events.statusCode, 202)
  t.same(events.json(), { accepted: 2, dropped: 0 })
  const rows = await ta.app.services.store.listEvents(DEFAULT_TENANT_ID, { limit: 2 })
  const blockedRow = rows.find((e) => e.event_type === 'policy.blocked')
  t.equal(blockedRow?.evaluation_id, b.evaluation_id, 'the event links to the evaluation')
  t.equal(blockedRow?.category, 'audit')
  const resp = rows.find((e) => e.event_type === 'llm.response')
  t.equal(resp?.cost_usd, 0.01)
  t.equal(resp?.user_id, 'u1')

  const none = await ta.legacy('GET', '/secrets', { key })
  t.equal(none.statusCode, 200)
  t.same(none.json().secrets, {})
  const { store, box, directory } = ta.app.services
  for (const [scopeType, scopeId, name, value] of [
    ['tenant', '', 'SHARED', 'tenant-value'],
    ['deployment', 'prod-eu', 'SHARED', 'deployment-value'],
    ['deployment', 'prod-eu', 'DB_URL', 'postgres://eu'],
    ['deployment', 'prod-us', 'DB_URL', 'postgres://us'],
    ['agent', 'support-bot', 'TOKEN', 'agent-token']
  ] as const) {
    const rec = { tenant_id: DEFAULT_TENANT_ID, scope_type: scopeType, scope_id: scopeId, name }
    await store.setSecret({ ...rec, value_sealed: box.seal(value, secretAad(rec)), updated_at: new Date().toISOString() })
  }
  await directory.changed()
  const secrets = await ta.legacy('GET', '/secrets', { key })
  t.same(secrets.json().secrets, { SHARED: 'deployment-value', DB_URL: 'postgres://eu', TOKEN: 'agent-token' }, 'tenant, deployment and agent scopes; the narrower scope wins')
  t.ok(Date.parse(secrets.json().expires_at) > Date.now())
  const raw = (await store.listSecrets(DEFAULT_TENANT_ID)).map((s) => s.value_sealed).join(' ')
  t.notMatch(raw, /agent-token|postgres:\/\/eu/, 'secrets are not stored in plaintext')
})

t.test('legacy register: an explicit agent_id that exists is 409 conflict', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  await ta.registerLegacy({ name: 'a', agent_id: 'fixed' })
  const res = await ta.legacy('POST', '/register', { key: ta.tenantKey, body: { name: 'b', agent_id: 'fixed' } })
  t.equal(res.statusCode, 409)
  t.equal(res.json().error, 'conflict')
})

t.test('legacy register: a name with nothing usable for a slug gets a generated agent_id', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { agentId } = await ta.registerLegacy({ name: '!!!' })
  t.match(agentId, /^agent(-[0-9a-f]{8})?$/)
})

interface V1Policy { id: string, name: string, type: string, enforcement: string, config: unknown, priority: number, scope_type: string, scope_id: string | null }
interface LegacyPolicy { id: string, type: string, config: unknown, scope: string }

t.test('legacy GET /config: v1_config extension -> the v1 config of the same agent (agent_id, config_hash, named policies with enforcement, priority, scope_type)', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const reg = await ta.legacy('POST', '/register', {
    key: ta.tenantKey,
    body: { name: 'Local Enforced', capabilities: ['llm:invoke'], deployment_id: 'prod-eu', metadata: { team: 'support' } }
  })
  t.equal(reg.statusCode, 201)
  const { agent_id: agentId, api_key: key } = reg.json() as { agent_id: string, api_key: string }
  // A v1 agent in the same deployment: the same effective policies and settings, so the same v1 config body.
  const twin = await ta.registerV1({ agent_type: 'custom', agent_id: 'v1-twin', deployment_id: 'prod-eu' })

  const empty = (await ta.legacy('GET', '/config', { key })).json()
  t.equal(empty.v1_config?.agent_id, agentId, 'present before any policy exists')
  t.strictSame(empty.v1_config?.policies, [])
  t.equal(empty.v1_config?.config_hash, empty.config_hash)

  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [
    { name: 'models', type: 'model_restriction', scope_type: 'DEPLOYMENT', scope_id: 'prod-eu', config: { allowed_models: ['claude-*'] }, enforcement: 'enforce', priority: 10, is_active: true },
    { name: 'tools', type: 'tool_permission', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { denied_tools: ['shell'] }, enforcement: 'audit', priority: 3, is_active: true },
    { name: 'off', type: 'tool_permission', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { denied_tools: ['*'] }, enforcement: 'disabled', priority: 0, is_active: true },
    { name: 'elsewhere', type: 'tool_permission', scope_type: 'DEPLOYMENT', scope_id: 'prod-us', config: { denied_tools: ['*'] }, enforcement: 'enforce', priority: 0, is_active: true }
  ])
  await ta.app.services.directory.changed()

  const res = await ta.legacy('GET', '/config', { key })
  t.equal(res.statusCode, 200)
  const cfg = res.json() as { agent_id: string, config_hash: string, policies: LegacyPolicy[], v1_config?: Record<string, unknown> }
  t.not(cfg.config_hash, empty.config_hash, 'the policies changed the hash')
  const v1c = cfg.v1_config as { agent_id: string, config_hash: string, config: unknown, policies: V1Policy[], updated_at: string, agent: Record<string, unknown> }
  t.ok(v1c, 'v1_config is present')
  t.equal(v1c.agent_id, agentId, 'agent_id is the legacy agent')
  t.equal(v1c.config_hash, cfg.config_hash, 'config_hash is the legacy answer\'s')
  t.ok(!Number.isNaN(Date.parse(v1c.updated_at)), 'updated_at is a timestamp')
  t.match(v1c.agent, { agent_id: agentId, agent_type: 'custom', capabilities: ['llm:invoke'], metadata: { team: 'support' }, deployment_id: 'prod-eu' }, 'agent identity of the legacy agent')

  t.equal(cfg.policies.length, 2, 'the disabled and the other deployment\'s policy are not listed')
  t.equal(v1c.policies.length, cfg.policies.length, 'one v1 policy per legacy policy')
  const expected: Record<string, { enforcement: string, priority: number, scope_type: string, type: string }> = {
    models: { enforcement: 'enforce', priority: 10, scope_type: 'DEPLOYMENT', type: 'model_restriction' },
    tools: { enforcement: 'audit', priority: 3, scope_type: 'ORG', type: 'tool_permission' }
  }
  t.strictSame(v1c.policies.map((p) => p.name).sort(), ['models', 'tools'])
  for (const lp of cfg.policies) {
    const vp = v1c.policies.find((p) => `pol_${p.id.replace(/-/g, '')}` === lp.id)
    t.ok(vp, `legacy policy ${lp.id} has its v1 counterpart`)
    if (vp === undefined) continue
    t.match(vp, expected[vp.name] ?? { name: 'unexpected' }, `${vp.name}: enforcement, priority, scope_type`)
    t.equal(vp.type, lp.type)
    t.strictSame(vp.config, lp.config)
    t.equal(vp.scope_type.toLowerCase(), lp.scope)
  }

  const v1 = await ta.v1('GET', `/config/${twin.agentId}`, { key: twin.key })
  t.equal(v1.statusCode, 200)
  const twinCfg = v1.json() as { config_hash: string, config: unknown, policies: V1Policy[] }
  t.strictSame(v1c.policies, twinCfg.policies, 'the policies are what v1 GET /config answers for an agent with the same scope')
  t.strictSame(v1c.config, twinCfg.config, 'and the settings')
  t.equal(v1c.config_hash, twinCfg.config_hash, 'and the hash')
})
