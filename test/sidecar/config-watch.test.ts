/**
 * The sidecar's config watch (sidecar/config-watch.ts) against a real control plane: the current
 * config at once, a change pushed, revocation, a refused key, and reconnection after a failed attempt.
 */
import t from 'tap'
import { testApp, DEFAULT_TENANT_ID } from '../control-plane/helpers.js'
import { hashKey } from '../../shared/keys.js'
import type { ConfigResponse } from '../../shared/contracts/v1.js'
import { ConfigWatch, type WatchTarget } from '../../sidecar/config-watch.js'

async function until (cond: () => boolean, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms
  while (!cond() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
  return cond()
}

t.test('the current config at once, each change pushed, and revoked when the agent is deregistered', async (t) => {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerV1({ agent_type: 'custom', agent_id: 'watched' })
  const configs: ConfigResponse[] = []
  const revoked: string[] = []
  const watch = new ConfigWatch(address, {
    apiName: 'service', baseMs: 50, maxMs: 200, connectTimeoutMs: 1_000,
    onConfig: (_t, c) => configs.push(c as ConfigResponse), onRevoked: (x) => revoked.push(x.agentId)
  })
  t.teardown(() => watch.stop())
  const target: WatchTarget = { keyHash: hashKey(key), contract: 'v1', key, agentId }
  watch.ensure(target)
  watch.ensure(target)
  t.ok(await until(() => configs.length === 1), 'the current config first')
  t.strictSame(watch.watched(), [target.keyHash], 'one stream per agent')
  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [{
    name: 'tools', type: 'tool_permission', scope_type: 'ORG', scope_id: '', config: { denied_tools: ['x'] }, enforcement: 'enforce', priority: 0, is_active: true
  }])
  await ta.app.services.directory.changed()
  t.ok(await until(() => configs.length === 2), 'the change is pushed')
  t.strictSame(configs[1]?.policies.map((p) => p.name), ['tools'])
  t.equal((await ta.v1('POST', '/deregister', { key, body: {} })).statusCode, 204)
  t.ok(await until(() => revoked.length === 1), 'revoked')
  t.strictSame(watch.watched(), [], 'and no longer watched')
})

t.test('a refused key is reported revoked at once; a control plane that is away is retried until it answers', async (t) => {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => ta.close())
  const revoked: string[] = []
  const problems: string[] = []
  const configs: ConfigResponse[] = []
  const watch = new ConfigWatch(address, {
    apiName: 'service', baseMs: 20, maxMs: 100, connectTimeoutMs: 500, random: () => 0.5,
    onConfig: (_t, c) => configs.push(c as ConfigResponse), onRevoked: (x) => revoked.push(x.agentId), onProblem: (m) => problems.push(m)
  })
  t.teardown(() => watch.stop())
  const bad = 'sk_agent_' + 'R'.repeat(43)
  watch.ensure({ keyHash: hashKey(bad), contract: 'v1', key: bad, agentId: 'nobody' })
  t.ok(await until(() => revoked.length === 1), 'a 401 means revoked')

  const away = new ConfigWatch('http://127.0.0.1:9', {
    apiName: 'service', baseMs: 20, maxMs: 100, connectTimeoutMs: 300,
    onConfig: () => {}, onRevoked: () => {}, onProblem: (m) => problems.push(m)
  })
  away.ensure({ keyHash: 'h', contract: 'v1', key: bad, agentId: 'a' })
  t.ok(await until(() => problems.length >= 3), 'failed attempts are retried (and reported)')
  away.stop()
  const n = problems.length
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(problems.length, n, 'stopped: no more attempts')
  away.ensure({ keyHash: 'h2', contract: 'v1', key: bad, agentId: 'a' })
  t.strictSame(away.watched(), [], 'a stopped watch starts nothing')
  watch.forget('not-watched')
})

t.test('a legacy key watches the legacy stream: legacy /config answers (with v1_config), each change pushed; a refused legacy key is revoked', async (t) => {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => ta.close())
  const { agentId, key } = await ta.registerLegacy({ name: 'legacy watched', agent_id: 'legacy-watched' })
  const configs: Array<Record<string, unknown> & { v1_config: ConfigResponse, config_hash: string }> = []
  const revoked: string[] = []
  const watch = new ConfigWatch(address, {
    apiName: 'service', baseMs: 50, maxMs: 200, connectTimeoutMs: 1_000,
    onConfig: (_t, c) => configs.push(c as (typeof configs)[number]), onRevoked: (x) => revoked.push(x.agentId)
  })
  t.teardown(() => watch.stop())
  watch.ensure({ keyHash: hashKey(key), contract: 'legacy', key, agentId })
  t.ok(await until(() => configs.length === 1), 'the current legacy config first')
  const direct = (await ta.legacy('GET', '/config', { key })).json() as Record<string, unknown>
  t.strictSame(configs[0], direct, 'the same answer as legacy GET /config')
  t.equal(configs[0]?.v1_config.agent_id, agentId, 'with the v1 config of the same agent')
  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [{
    name: 'models', type: 'model_restriction', scope_type: 'ORG', scope_id: '', config: { allowed_models: ['gpt-4o*'] }, enforcement: 'enforce', priority: 0, is_active: true
  }])
  await ta.app.services.directory.changed()
  t.ok(await until(() => configs.length === 2), 'the change is pushed')
  t.not(configs[1]?.config_hash, configs[0]?.config_hash)
  t.strictSame(configs[1]?.v1_config.policies.map((p) => p.name), ['models'])
  const hb = (await ta.legacy('POST', '/heartbeat', { key, body: { status: 'healthy' } })).json() as { config_updated: boolean }
  t.equal(hb.config_updated, false, 'the pushed config counts as served: a heartbeat without a hash is not told to re-fetch')

  const bad = 'zk_live_' + 'R'.repeat(43)
  watch.ensure({ keyHash: hashKey(bad), contract: 'legacy', key: bad, agentId: 'nobody' })
  t.ok(await until(() => revoked.includes('nobody')), 'a 401 means revoked')
})

