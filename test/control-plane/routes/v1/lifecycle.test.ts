import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { testApp, DEFAULT_TENANT_ID } from '../../helpers.js'
import { adminCommand } from '../../../../control-plane/cli/admin.js'

/** Runs `agentgov admin ...` against the test app's database; resolves to {code, out, err}. */
async function admin (dataDir: string, args: string[], env: Record<string, string>): Promise<{ code: number, out: string, err: string }> {
  const out = new PassThrough()
  const err = new PassThrough()
  let o = ''
  let e = ''
  out.on('data', (c: Buffer) => { o += c.toString() })
  err.on('data', (c: Buffer) => { e += c.toString() })
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    const code = await adminCommand([...args, '--data-dir', dataDir], out, err)
    return { code, out: o, err: e }
  } finally {
    process.env = saved
  }
}

t.test('v1 lifecycle: register -> config -> evaluate allowed, then blocked by a CLI policy -> events -> heartbeat -> secrets -> deregister -> key refused', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const env = { SERVICE_BOOTSTRAP_SECRET: ta.config.bootstrapSecret, SERVICE_MASTER_KEY: ta.config.masterKey.toString('base64') }

  const reg = await ta.v1('POST', '/register', {
    headers: { 'x-service-bootstrap': ta.token },
    body: { agent_type: 'langchain', name: 'Research bot', capabilities: ['chat', 'tool:search'], metadata: { team: 'research', version: '1.2' } }
  })
  t.equal(reg.statusCode, 201, 'register answers 201')
  const r = reg.json()
  t.match(r.agent_id, /^langchain-[0-9a-f]{8}$/, 'generated agent_id is <agent_type>-<8 hex>')
  t.match(r.api_key, /^sk_agent_[A-Za-z0-9_-]{43}$/, 'runtime key has the sk_agent_ prefix')
  t.same(r.config, { heartbeat_interval_seconds: 60, event_batch_size: 100, event_flush_interval_seconds: 5, config_refresh_interval_seconds: 300 })
  t.same(r.policies, [], 'no policies yet')
  const key = r.api_key as string
  const agentId = r.agent_id as string

  const stored = await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, agentId)
  t.ok(stored, 'agent stored')
  t.equal(stored?.status, 'active')
  t.equal(stored?.health, 'unknown')
  t.not(stored?.key_hash, key, 'the key itself is not stored')
  t.equal(stored?.key_prefix, key.slice(0, 12), 'only a 12-character prefix is kept')

  const cfg = await ta.v1('GET', `/config/${agentId}`, { key })
  t.equal(cfg.statusCode, 200)
  t.equal(cfg.json().agent_id, agentId)
  t.match(cfg.json().config_hash, /^sha256:[0-9a-f]{64}$/)
  t.ok(!Number.isNaN(Date.parse(cfg.json().updated_at)), 'updated_at is a timestamp')
  const hashBefore = cfg.json().config_hash as string

  const evalBody = { agent_id: agentId, action: 'tool_call', user_id: 'u1', context: { tool: 'shell', tool_input: { cmd: 'ls' } } }
  const allowed = await ta.v1('POST', '/evaluate', { key, body: evalBody })
  t.equal(allowed.statusCode, 200)
  t.same(allowed.json(), { allowed: true, reason: null, policies_evaluated: [], warnings: [], restrictions: {}, context: evalBody.context })

  const file = join(ta.dir, 'policies.json')
  writeFileSync(file, JSON.stringify([{ name: 'tools', type: 'tool_permission', config: { allowed_tools: ['search', 'calc'] } }]))
  const applied = await admin(ta.dir, ['policy', 'apply', '--tenant', DEFAULT_TENANT_ID, '--file', file], env)
  t.equal(applied.code, 0, `policy apply succeeds: ${applied.err}`)
  t.match(applied.out, /tools\s+tool_permission\s+1\s+created/)
  // The app notices the other process's change by polling; force the poll instead of waiting.
  await ta.app.services.directory.changed()

  const blocked = await ta.v1('POST', '/evaluate', { key, body: evalBody })
  t.equal(blocked.statusCode, 200, 'a block is still HTTP 200')
  const b = blocked.json()
  t.equal(b.allowed, false)
  t.match(b.reason, /^tools: .*shell/)
  t.equal(b.policies_evaluated.length, 1)
  t.match(b.policies_evaluated[0], { name: 'tools', type: 'tool_permission', result: 'fail' })
  t.match(b.policies_evaluated[0].id, /^[0-9a-f-]{36}$/, 'v1 policy ids are UUIDs')
  const ok = await ta.v1('POST', '/evaluate', { key, body: { ...evalBody, context: { tool: 'search' } } })
  t.equal(ok.json().allowed, true, 'an allowed tool passes')
  t.equal(ok.json().policies_evaluated[0].result, 'pass')

  const cfg2 = await ta.v1('GET', `/config/${agentId}`, { key })
  t.equal(cfg2.json().policies.length, 1)
  t.match(cfg2.json().policies[0], { name: 'tools', type: 'tool_permission', enforcement: 'enforce', config: { allowed_tools: ['search', 'calc'] } })
  t.not(cfg2.json().config_hash, hashBefore, 'config hash changes with the policies')

  // The blocked decision above is kept as a policy.blocked audit event, written off the decision
  // path: let it land first, so that the count below sees the batch alone.
  await ta.app.services.ingest.flush()
  const before = await ta.app.services.store.countEvents(DEFAULT_TENANT_ID)
  const events = await ta.v1('POST', '/events', {
    key,
    body: {
      agent_id: agentId,
      events: [
        { type: 'llm.response', category: 'telemetry', timestamp: '2026-11-22T10:00:00Z', user_id: 'u1', payload: { cost_usd: 0.25, model: 'gpt' } },
        { type: 'tool.blocked', category: 'audit', timestamp: '2026-11-22T10:00:01.5+02:00', payload: {} },
        { type: 'anomaly', category: 'alert', timestamp: '2026-11-22T10:00:02Z' }
      ]
    }
  })
  t.equal(events.statusCode, 202)
  t.equal(events.json().accepted, 3)
  t.match(events.json().batch_id, /^batch_/)
  t.equal(await ta.app.services.store.countEvents(DEFAULT_TENANT_ID), before + 3, 'the 202 came after the commit: all three are stored')
  const rows = await ta.app.services.store.listEvents(DEFAULT_TENANT_ID, { limit: 3 })
  t.same(rows.map((e) => e.category).sort(), ['alert', 'audit', 'telemetry'])
  t.ok(rows.some((e) => e.timestamp === '2026-11-22T08:00:01.500Z'), 'timestamps are stored normalised to UTC')

  const stale = await ta.v1('POST', '/heartbeat', { key, body: { agent_id: agentId, status: 'degraded', config_hash: hashBefore, metrics: { requests_processed: 10, errors_last_5min: 1, avg_latency_ms: 3.5 }, version: '1.2' } })
  t.equal(stale.statusCode, 202)
  t.same(stale.json(), { acknowledged: true, config_changed: true, next_heartbeat_seconds: 60 }, 'an old hash gets config_changed')
  const fresh = await ta.v1('POST', '/heartbeat', { key, body: { agent_id: agentId, status: 'healthy', config_hash: cfg2.json().config_hash } })
  t.equal(fresh.json().config_changed, false, 'the current hash does not')
  t.equal((await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, agentId))?.health, 'healthy', 'health follows the heartbeat')

  const none = await ta.v1('GET', '/secrets', { key })
  t.equal(none.statusCode, 200)
  t.same(none.json().secrets, {})
  t.same(none.json().providers, {})
  const set = await admin(ta.dir, ['secret', 'set', '--tenant', DEFAULT_TENANT_ID, '--scope', `agent:${agentId}`, '--name', 'SEARCH_KEY', '--value', 's3cr3t-value'], env)
  t.equal(set.code, 0, set.err)
  const set2 = await admin(ta.dir, ['secret', 'set', '--tenant', DEFAULT_TENANT_ID, '--scope', 'agent:someone-else', '--name', 'OTHER', '--value', 'nope'], env)
  t.equal(set2.code, 0, set2.err)
  const secrets = await ta.v1('GET', `/secrets/${agentId}`, { key })
  t.equal(secrets.statusCode, 200)
  t.same(secrets.json().secrets, { SEARCH_KEY: 's3cr3t-value' }, 'only the secrets granted to this agent')
  const expires = Date.parse(secrets.json().expires_at) - Date.now()
  t.ok(expires > 4 * 60_000 && expires <= 5 * 60_000, 'expires_at is five minutes ahead')

  const dereg = await ta.v1('POST', '/deregister', { key })
  t.equal(dereg.statusCode, 204)
  t.equal(dereg.body, '')
  const after = await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, agentId)
  t.equal(after?.status, 'terminated')
  t.equal(after?.health, 'unknown')
  const audit = await ta.app.services.store.listEvents(DEFAULT_TENANT_ID, { limit: 1 })
  t.equal(audit[0]?.event_type, 'agent.deregistered')
  t.equal(audit[0]?.category, 'audit')
  const refused = await ta.v1('GET', `/config/${agentId}`, { key })
  t.equal(refused.statusCode, 401, 'the key stops working')
  t.equal(refused.json().error, 'unauthorized')
})

t.test('v1 register: an explicit agent_id is kept, a second registration of it is 409 conflict', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const a = await ta.registerV1({ agent_type: 'mcp', agent_id: 'my-agent', deployment_id: 'prod' })
  t.equal(a.agentId, 'my-agent')
  const res = await ta.v1('POST', '/register', { headers: { 'x-service-bootstrap': ta.token }, body: { agent_type: 'mcp', agent_id: 'my-agent' } })
  t.equal(res.statusCode, 409)
  t.match(res.json(), { statusCode: 409, error: 'conflict' })
  const stored = await ta.app.services.store.getAgent(DEFAULT_TENANT_ID, 'my-agent')
  t.equal(stored?.name, 'my-agent', 'name defaults to the agent_id')
  t.equal(stored?.deployment_id, 'prod')
})

t.test('v1 register: a valid bootstrap token for a tenant that does not exist yet creates the tenant', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { bootstrapToken } = await import('../../../../shared/keys.js')
  const tenantId = '11111111-2222-4333-8444-555555555555'
  const res = await ta.v1('POST', '/register', { headers: { 'x-service-bootstrap': bootstrapToken(ta.config.bootstrapSecret, tenantId) }, body: { agent_type: 'codex' } })
  t.equal(res.statusCode, 201)
  t.ok(await ta.app.services.store.getTenant(tenantId), 'tenant created')
  t.ok(await ta.app.services.store.getAgent(tenantId, res.json().agent_id), 'agent belongs to the new tenant')
})

t.test('v1 events: a repeated sender id is stored once and still acknowledged', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1()
  const ev = { id: 'evt-1', type: 'x', category: 'telemetry', timestamp: '2026-11-22T00:00:00Z' }
  const before = await ta.app.services.store.countEvents(DEFAULT_TENANT_ID)
  for (let i = 0; i < 2; i++) {
    const res = await ta.v1('POST', '/events', { key, body: { agent_id: agentId, events: [ev] } })
    t.equal(res.statusCode, 202)
    t.equal(res.json().accepted, 1)
  }
  t.equal(await ta.app.services.store.countEvents(DEFAULT_TENANT_ID), before + 1)
})

t.test('v1 events: an empty batch is accepted with accepted 0', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1()
  const res = await ta.v1('POST', '/events', { key, body: { agent_id: agentId, events: [] } })
  t.equal(res.statusCode, 202)
  t.equal(res.json().accepted, 0)
})

t.test('v1 budget: cost_usd in events is spent against a budget_limit policy', async (t) => {
  const ta = await testApp()
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1()
  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [{
    name: 'budget', type: 'budget_limit', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID,
    config: { max_cost_usd: 1, period: 'day', per: 'agent' }, enforcement: 'enforce', priority: 0, is_active: true
  }])
  await ta.app.services.directory.changed()
  const body = { agent_id: agentId, action: 'llm_call', context: { model: 'gpt-4o' } }
  t.equal((await ta.v1('POST', '/evaluate', { key, body })).json().allowed, true, 'nothing spent yet')
  const now = new Date().toISOString()
  await ta.v1('POST', '/events', { key, body: { agent_id: agentId, events: [{ type: 'llm.response', category: 'telemetry', timestamp: now, payload: { cost_usd: 0.6 } }] } })
  t.equal((await ta.v1('POST', '/evaluate', { key, body })).json().allowed, true, '0.6 of 1 spent')
  await ta.v1('POST', '/events', { key, body: { agent_id: agentId, events: [{ type: 'llm.response', category: 'telemetry', timestamp: now, payload: { cost_usd: 0.5 } }] } })
  const res = (await ta.v1('POST', '/evaluate', { key, body })).json()
  t.equal(res.allowed, false, '1.1 of 1 spent: blocked')
  t.match(res.reason, /^budget: /)
})
