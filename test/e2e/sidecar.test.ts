/**
 * The sidecar with real processes (issue 4): the v1 lifecycle through the sidecar matching the control
 * plane's answers; with the control plane killed, cached policies are still enforced and events still
 * accepted, and once it is back every acknowledged event is stored exactly once; with no config and no
 * control plane it fails open, or closed with SERVICE_FAIL_OPEN=false.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { BIN, startControlPlane, startSidecar, type Proc } from './helpers.js'

const TENANT = '00000000-0000-0000-0000-000000000001'

function tempDir (t: Test): string {
  const d = mkdtempSync(join(tmpdir(), 'agentgov-e2e-sidecar-'))
  t.teardown(() => rmSync(d, { recursive: true, force: true }))
  return d
}

/** Runs `agentgov admin ...` on a control plane's data folder; the test fails on a non-zero exit. */
function admin (t: Test, cpDir: string, env: Record<string, string>, args: string[]): string {
  const r = spawnSync(process.execPath, [BIN, 'admin', ...args, '--data-dir', cpDir], { encoding: 'utf8', env: { ...process.env, ...env } })
  t.equal(r.status, 0, `agentgov admin ${args.slice(0, 2).join(' ')}: ${r.stderr}`)
  return r.stdout
}

/** Applies policies to a tenant with the admin CLI, through a file in `dir`. */
function applyPolicies (t: Test, dir: string, cpDir: string, env: Record<string, string>, tenantId: string, policies: unknown[], file = 'policies.json'): void {
  writeFileSync(join(dir, file), JSON.stringify(policies))
  admin(t, cpDir, env, ['policy', 'apply', '--tenant', tenantId, '--file', join(dir, file)])
}

async function post (url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, json: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, json: text === '' ? {} : JSON.parse(text) as Record<string, unknown> }
}

async function kill (p: Pick<Proc, 'child' | 'exited'>, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal)
  await p.exited
}

/** The policy.blocked events the sidecar sent on: their reasons. */
function blockedReasons (dbFile: string): string[] {
  const db = new Database(dbFile, { readonly: true })
  try {
    return (db.prepare("SELECT payload FROM events WHERE event_type = 'policy.blocked'").all() as Array<{ payload: string }>)
      .map((r) => (JSON.parse(r.payload) as { reason: string }).reason)
  } finally {
    db.close()
  }
}

/** The events the test sent (ids ev-NNNN), as stored. */
function storedEventIds (dbFile: string): string[] {
  const db = new Database(dbFile, { readonly: true })
  try {
    return (db.prepare("SELECT client_event_id AS id FROM events WHERE client_event_id LIKE 'ev-%' ORDER BY client_event_id").all() as Array<{ id: string }>).map((r) => r.id)
  } finally {
    db.close()
  }
}

const event = (n: number): Record<string, unknown> =>
  ({ id: `ev-${String(n).padStart(4, '0')}`, type: 'tool.invoked', category: 'telemetry', timestamp: new Date().toISOString(), payload: { n } })

t.test('v1 through the sidecar; the control plane killed and brought back: policies enforced, events stored once', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const env = { SERVICE_BOOTSTRAP_SECRET: 'e2e-bootstrap-secret-0123456789' }
  let cp = await startControlPlane(['--data-dir', cpDir], env)
  t.teardown(() => kill(cp))
  const cpPort = new URL(cp.url).port
  applyPolicies(t, dir, cpDir, env, TENANT, [{ name: 'tools', type: 'tool_permission', config: { allowed_tools: ['search'] } }])

  const sc = await startSidecar(['--data-dir', join(dir, 'sidecar')], { SERVICE_CONTROL_PLANE_URL: cp.url, SERVICE_REQUEST_TIMEOUT_MS: '1000', SERVICE_CONNECT_TIMEOUT_MS: '500' })
  t.teardown(() => kill(sc))
  const api = `${sc.url}/api/service/v1`
  const reg = await post(`${api}/register`, { agent_type: 'custom', agent_id: 'side-bot' }, { 'x-service-bootstrap': cp.token })
  t.equal(reg.status, 201, 'register is forwarded')
  const key = reg.json.api_key as string
  t.match(key, /^sk_agent_/)
  const headers = { 'x-service-key': key }

  const config = await (await fetch(`${api}/config/side-bot`, { headers })).json() as { policies: Array<{ name: string }>, config_hash: string }
  const direct = await (await fetch(`${cp.url}/api/service/v1/config/side-bot`, { headers })).json() as { config_hash: string }
  t.equal(config.config_hash, direct.config_hash, 'the sidecar serves the control plane\'s config')
  const bodies = [
    { agent_id: 'side-bot', action: 'tool_call', context: { tool: 'search' } },
    { agent_id: 'side-bot', action: 'tool_call', context: { tool: 'shell' } }
  ]
  for (const body of bodies) {
    const local = await post(`${api}/evaluate`, body, headers)
    const remote = await post(`${cp.url}/api/service/v1/evaluate`, body, headers)
    t.strictSame(local, remote, `evaluate ${body.context.tool}: the sidecar answers as the control plane`)
  }
  t.equal((await post(`${api}/evaluate`, { ...bodies[0], agent_id: 'someone-else' }, headers)).status, 403, 'another agent id: 403')
  t.equal((await post(`${api}/evaluate`, bodies[0], { 'x-service-key': 'sk_agent_' + 'Z'.repeat(43) })).status, 401, 'an unknown key: 401')

  const first = await post(`${api}/events`, { agent_id: 'side-bot', events: [event(1), event(2)] }, headers)
  t.equal(first.status, 202)
  t.equal(first.json.accepted, 2)
  const hb = await post(`${api}/heartbeat`, { agent_id: 'side-bot', status: 'healthy', config_hash: config.config_hash }, headers)
  t.equal(hb.status, 202, 'heartbeat forwarded')
  t.equal(hb.json.config_changed, false)

  admin(t, cpDir, env, ['secret', 'set', '--tenant', TENANT, '--scope', 'agent:side-bot', '--name', 'SEARCH_TOKEN', '--value', 's3cret-value'])
  const secretsUp = await fetch(`${api}/secrets/side-bot`, { headers })
  const secretsBody = await secretsUp.json() as { secrets: Record<string, string>, expires_at: string }
  t.equal(secretsUp.status, 200, '/secrets is forwarded')
  t.same(secretsBody.secrets, { SEARCH_TOKEN: 's3cret-value' }, 'with the agent\'s secrets')

  await kill(cp)
  const secretsDown = await fetch(`${api}/secrets/side-bot`, { headers })
  t.equal(secretsDown.status, 200, 'control plane down: the secrets fetched before are served until they expire')
  t.same(await secretsDown.json(), secretsBody, 'the same answer, expires_at included')
  t.equal((await fetch(`${api}/secrets`, { headers })).status, 503, 'a path never fetched is not made up: 503')
  const blocked = await post(`${api}/evaluate`, bodies[1], headers)
  t.equal(blocked.json.allowed, false, 'control plane down: the cached policy still blocks')
  t.equal((await post(`${api}/evaluate`, bodies[0], headers)).json.allowed, true, 'and allows')
  const during = await post(`${api}/events`, { agent_id: 'side-bot', events: [event(3), event(4), event(5)] }, headers)
  t.equal(during.status, 202, 'events are still accepted')
  const hbDown = await post(`${api}/heartbeat`, { agent_id: 'side-bot', status: 'healthy' }, headers)
  t.equal(hbDown.status, 202, 'a heartbeat is acknowledged locally')

  cp = await startControlPlane(['--data-dir', cpDir, '--port', cpPort], env)
  const dbFile = join(cpDir, 'agentgov.db')
  const want = ['ev-0001', 'ev-0002', 'ev-0003', 'ev-0004', 'ev-0005']
  let stored: string[] = []
  for (let i = 0; i < 150; i++) {
    stored = storedEventIds(dbFile)
    if (stored.length >= want.length) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.strictSame(stored, want, 'every acknowledged event stored exactly once after the control plane came back')
  t.ok(blockedReasons(dbFile).includes('tools: tool "shell" is not in allowed_tools'), 'the blocks decided by the sidecar were sent on as policy.blocked audit events')

  const metrics = await (await fetch(`${sc.url}/metrics`)).text()
  t.match(metrics, /agentgov_sidecar_decisions_total\{result="blocked"\} [1-9]/, '/metrics counts the blocks')
  t.match(metrics, /agentgov_sidecar_events_sent_total [5-9]/, 'and the events sent')
  t.match(metrics, /agentgov_sidecar_upstream_failures_total [1-9]/, 'and the upstream failures while the control plane was down')
  t.match(metrics, /agentgov_sidecar_breaker_state [0-2]/)
  t.match(metrics, /agentgov_sidecar_spool_depth \d+/)

  const gone = await post(`${api}/deregister`, {}, headers)
  t.equal(gone.status, 204, 'deregister forwarded')
  t.equal((await post(`${api}/evaluate`, bodies[0], headers)).status, 401, 'the key no longer works through the sidecar')
  t.equal((await fetch(`${api}/secrets/side-bot`, { headers })).status, 401, 'nor do its kept secrets')
})

t.test('SERVICE_AGENT_KEY with SERVICE_AGENT_ID: the config is fetched at a first start, before the agent asks anything', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const env = { SERVICE_BOOTSTRAP_SECRET: 'e2e-bootstrap-secret-0123456789' }
  const cp = await startControlPlane(['--data-dir', cpDir], env)
  t.teardown(() => kill(cp))
  applyPolicies(t, dir, cpDir, env, TENANT, [{ name: 'tools', type: 'tool_permission', config: { denied_tools: ['shell'] } }])
  const reg = await post(`${cp.url}/api/service/v1/register`, { agent_type: 'custom', agent_id: 'injected' }, { 'x-service-bootstrap': cp.token })
  const key = reg.json.api_key as string

  const sc = await startSidecar(['--data-dir', join(dir, 'sidecar')], { SERVICE_CONTROL_PLANE_URL: cp.url, SERVICE_AGENT_KEY: key, SERVICE_AGENT_ID: 'injected', SERVICE_REQUEST_TIMEOUT_MS: '1000', SERVICE_CONNECT_TIMEOUT_MS: '500' })
  t.teardown(() => kill(sc))
  let ready: Record<string, unknown> = {}
  for (let i = 0; i < 50; i++) {
    ready = await (await fetch(`${sc.url}/readyz`)).json() as Record<string, unknown>
    if (ready.ready === true && ready.agents === 1) break
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.match(ready, { ready: true, agents: 1, without_config: 0 }, 'ready with the injected agent\'s config')

  await kill(cp)
  const d = await post(`${sc.url}/api/service/v1/evaluate`, { agent_id: 'injected', action: 'tool_call', context: { tool: 'shell' } }, { 'x-service-key': key })
  t.equal(d.status, 200)
  t.equal(d.json.allowed, false, 'the control plane is gone, yet its policy is enforced: it was fetched at start')
  t.equal((d.json.policies_evaluated as unknown[]).length, 1)
})

t.test('the sidecar killed with events spooled and the control plane down, both restarted: the saved config is enforced at once, every event stored once', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const scDir = join(dir, 'sidecar')
  const env = { SERVICE_BOOTSTRAP_SECRET: 'e2e-bootstrap-secret-0123456789' }
  let cp = await startControlPlane(['--data-dir', cpDir], env)
  t.teardown(() => kill(cp))
  const cpPort = new URL(cp.url).port
  applyPolicies(t, dir, cpDir, env, TENANT, [{ name: 'tools', type: 'tool_permission', config: { denied_tools: ['shell'] } }])
  const scEnv = { SERVICE_CONTROL_PLANE_URL: cp.url, SERVICE_REQUEST_TIMEOUT_MS: '1000', SERVICE_CONNECT_TIMEOUT_MS: '500' }
  let sc = await startSidecar(['--data-dir', scDir], scEnv)
  t.teardown(() => kill(sc))
  let api = `${sc.url}/api/service/v1`
  const reg = await post(`${api}/register`, { agent_type: 'custom', agent_id: 'crash-bot' }, { 'x-service-bootstrap': cp.token })
  const headers = { 'x-service-key': reg.json.api_key as string }
  const shell = { agent_id: 'crash-bot', action: 'tool_call', context: { tool: 'shell' } }
  t.equal((await post(`${api}/evaluate`, shell, headers)).json.allowed, false, 'the policy is enforced')

  await kill(cp)
  const acked = await post(`${api}/events`, { agent_id: 'crash-bot', events: [event(10), event(11), event(12)] }, headers)
  t.equal(acked.status, 202, 'events acknowledged while the control plane is down')
  await kill(sc)

  sc = await startSidecar(['--data-dir', scDir], scEnv)
  api = `${sc.url}/api/service/v1`
  const before = await post(`${api}/evaluate`, shell, headers)
  t.equal(before.status, 200)
  t.equal(before.json.allowed, false, 'after the restart, the saved config is enforced before the control plane answers')
  t.equal(before.json.reason, 'tools: tool "shell" is denied')

  cp = await startControlPlane(['--data-dir', cpDir, '--port', cpPort], env)
  const want = ['ev-0010', 'ev-0011', 'ev-0012']
  let stored: string[] = []
  for (let i = 0; i < 150; i++) {
    stored = storedEventIds(join(cpDir, 'agentgov.db'))
    if (stored.length >= want.length) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.strictSame(stored, want, 'the spooled events reached the control plane, each once')
})

t.test('no config and no control plane: fail open by default, fail closed with SERVICE_FAIL_OPEN=false', async (t) => {
  const dir = tempDir(t)
  const body = { agent_id: 'ghost', action: 'tool_call', context: { tool: 'search' } }
  const headers = { 'x-service-key': 'sk_agent_' + 'Q'.repeat(43) }
  for (const [failOpen, allowed] of [['true', true], ['false', false]] as const) {
    const sc = await startSidecar(['--data-dir', join(dir, failOpen)], { SERVICE_CONTROL_PLANE_URL: 'http://127.0.0.1:9', SERVICE_FAIL_OPEN: failOpen, SERVICE_CONNECT_TIMEOUT_MS: '300' })
    t.teardown(() => kill(sc))
    const res = await post(`${sc.url}/api/service/v1/evaluate`, body, headers)
    t.equal(res.status, 200)
    t.equal(res.json.allowed, allowed, `SERVICE_FAIL_OPEN=${failOpen}`)
    if (allowed) t.match((res.json.warnings as string[])[0], /fail-open: no policy config: the control plane is unreachable/)
    else t.match(res.json.reason, /fail-closed: no policy config/)
    t.match(await (await fetch(`${sc.url}/metrics`)).text(), allowed ? /result="fail_open"\} 1/ : /result="fail_closed"\} 1/)
    await kill(sc, 'SIGTERM')
    t.equal(await sc.exited, 0, 'SIGTERM: exit 0')
  }
})

t.test('agentgov sidecar: --help documents every variable; a missing control plane URL stops it with exit 2', async (t) => {
  const help = spawnSync(process.execPath, [BIN, 'sidecar', '--help'], { encoding: 'utf8' })
  t.equal(help.status, 0)
  for (const v of ['SERVICE_CONTROL_PLANE_URL', 'SERVICE_AGENT_KEY', 'SERVICE_FAIL_OPEN', 'SERVICE_SIDECAR_DATA_DIR']) t.match(help.stdout, v)
  const env = { ...process.env }
  delete env.SERVICE_CONTROL_PLANE_URL
  const bad = spawnSync(process.execPath, [BIN, 'sidecar'], { encoding: 'utf8', env })
  t.equal(bad.status, 2)
  t.match(bad.stderr, /SERVICE_CONTROL_PLANE_URL: is required/)
})

t.test('bad input to the sidecar gets the control plane\'s 400 body, before any key or config is looked at', async (t) => {
  const dir = tempDir(t)
  const sc = await startSidecar(['--data-dir', dir], { SERVICE_CONTROL_PLANE_URL: 'http://127.0.0.1:9', SERVICE_CONNECT_TIMEOUT_MS: '300' })
  t.teardown(() => kill(sc))
  const api = `${sc.url}/api/service/v1`
  const headers = { 'x-service-key': 'sk_agent_' + 'Q'.repeat(43) }
  const noAction = await post(`${api}/evaluate`, { agent_id: 'x' }, headers)
  t.equal(noAction.status, 400)
  t.equal(noAction.json.error, 'bad_request')
  const badEvent = await post(`${api}/events`, { agent_id: 'x', events: [{ type: 't', category: 'nope', timestamp: new Date().toISOString() }] }, headers)
  t.equal(badEvent.status, 400)
  t.match(JSON.stringify(badEvent.json.details), /events\/0\/category/)
  const badHeartbeat = await post(`${api}/heartbeat`, { agent_id: 'x', status: 'fine' }, headers)
  t.equal(badHeartbeat.status, 400)
  const notJson = await fetch(`${api}/evaluate`, { method: 'POST', headers: { 'content-type': 'text/plain', ...headers }, body: 'hello' })
  t.equal(notJson.status, 415)
  const noKey = await post(`${api}/evaluate`, { agent_id: 'x', action: 'chat' })
  t.equal(noKey.status, 401)
})

t.test('the sidecar sends heartbeats for its agents on its own, at the interval the control plane gives', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const cp = await startControlPlane(['--data-dir', cpDir, '--heartbeat-interval', '1'])
  t.teardown(() => kill(cp))
  const sc = await startSidecar(['--data-dir', join(dir, 'sidecar')], { SERVICE_CONTROL_PLANE_URL: cp.url })
  t.teardown(() => kill(sc))
  const reg = await post(`${sc.url}/api/service/v1/register`, { agent_type: 'custom', agent_id: 'quiet-bot' }, { 'x-service-bootstrap': cp.token })
  t.equal(reg.status, 201)
  let row: { health: string, last_heartbeat: string | null } | undefined
  for (let i = 0; i < 50; i++) {
    const db = new Database(join(cpDir, 'agentgov.db'), { readonly: true })
    row = db.prepare("SELECT health, last_heartbeat FROM agents WHERE agent_id = 'quiet-bot'").get() as typeof row
    db.close()
    if (row?.last_heartbeat != null) break
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.ok(row?.last_heartbeat != null, 'a heartbeat arrived although the agent sent none')
  t.equal(row?.health, 'healthy')
})

t.test('a policy change made with the admin CLI reaches the sidecar through the config watch, within seconds', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const env = { SERVICE_BOOTSTRAP_SECRET: 'e2e-bootstrap-secret-0123456789' }
  const cp = await startControlPlane(['--data-dir', cpDir], env)
  t.teardown(() => kill(cp))
  const sc = await startSidecar(['--data-dir', join(dir, 'sidecar')], { SERVICE_CONTROL_PLANE_URL: cp.url })
  t.teardown(() => kill(sc))
  const api = `${sc.url}/api/service/v1`
  const reg = await post(`${api}/register`, { agent_type: 'custom', agent_id: 'pushed-bot' }, { 'x-service-bootstrap': cp.token })
  const headers = { 'x-service-key': reg.json.api_key as string }
  const shell = { agent_id: 'pushed-bot', action: 'tool_call', context: { tool: 'shell' } }
  t.equal((await post(`${api}/evaluate`, shell, headers)).json.allowed, true, 'no policy yet')
  await new Promise((resolve) => setTimeout(resolve, 300)) // the watch stream opens
  const started = Date.now()
  applyPolicies(t, dir, cpDir, env, TENANT, [{ name: 'no-shell', type: 'tool_permission', config: { denied_tools: ['shell'] } }])
  let allowed = true
  while (allowed && Date.now() - started < 5_000) {
    allowed = (await post(`${api}/evaluate`, shell, headers)).json.allowed as boolean
    if (allowed) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(allowed, false, `the new policy is enforced by the sidecar ${Date.now() - started} ms after the change`)
})

t.test('one sidecar serves several agents, each with its own policies, key and events', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const env = { SERVICE_BOOTSTRAP_SECRET: 'e2e-bootstrap-secret-0123456789' }
  const cp = await startControlPlane(['--data-dir', cpDir], env)
  t.teardown(() => kill(cp))
  applyPolicies(t, dir, cpDir, env, TENANT, [
    { name: 'alpha-no-shell', type: 'tool_permission', scope_type: 'ENDPOINT', scope_id: 'alpha', config: { denied_tools: ['shell'] } },
    { name: 'beta-no-search', type: 'tool_permission', scope_type: 'ENDPOINT', scope_id: 'beta', config: { denied_tools: ['search'] } }
  ])
  const sc = await startSidecar(['--data-dir', join(dir, 'sidecar')], { SERVICE_CONTROL_PLANE_URL: cp.url })
  t.teardown(() => kill(sc))
  const api = `${sc.url}/api/service/v1`
  const agents: Record<string, Record<string, string>> = {}
  for (const id of ['alpha', 'beta']) {
    const reg = await post(`${api}/register`, { agent_type: 'custom', agent_id: id }, { 'x-service-bootstrap': cp.token })
    t.equal(reg.status, 201)
    agents[id] = { 'x-service-key': reg.json.api_key as string }
  }
  const decide = async (id: string, tool: string): Promise<unknown> =>
    (await post(`${api}/evaluate`, { agent_id: id, action: 'tool_call', context: { tool } }, agents[id])).json.allowed
  t.strictSame([await decide('alpha', 'shell'), await decide('alpha', 'search')], [false, true], 'alpha: its own policy')
  t.strictSame([await decide('beta', 'shell'), await decide('beta', 'search')], [true, false], 'beta: its own policy')
  t.equal((await post(`${api}/evaluate`, { agent_id: 'beta', action: 'chat' }, agents.alpha)).status, 403, 'alpha\'s key cannot speak for beta')
  for (const [i, id] of ['alpha', 'beta'].entries()) {
    t.equal((await post(`${api}/events`, { agent_id: id, events: [event(100 + i)] }, agents[id])).status, 202)
  }
  let rows: Array<{ agent_id: string, id: string }> = []
  for (let i = 0; i < 60 && rows.length < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    const db = new Database(join(cpDir, 'agentgov.db'), { readonly: true })
    rows = db.prepare("SELECT agent_id, client_event_id AS id FROM events WHERE client_event_id LIKE 'ev-%' ORDER BY client_event_id").all() as typeof rows
    db.close()
  }
  t.strictSame(rows, [{ agent_id: 'alpha', id: 'ev-0100' }, { agent_id: 'beta', id: 'ev-0101' }], 'each agent\'s events stored as that agent\'s')
})

/** The legacy events a test sent (ids lg-NNNN) and the sidecar's legacy blocks, as stored. */
function legacyStored (dbFile: string): { ids: string[], blocks: Array<{ evaluation_id: string | null }> } {
  const db = new Database(dbFile, { readonly: true })
  try {
    const ids = (db.prepare("SELECT client_event_id AS id FROM events WHERE client_event_id LIKE 'lg-%' ORDER BY client_event_id").all() as Array<{ id: string }>).map((r) => r.id)
    const blocks = db.prepare("SELECT evaluation_id FROM events WHERE event_type = 'policy.blocked'").all() as Array<{ evaluation_id: string | null }>
    return { ids, blocks }
  } finally {
    db.close()
  }
}

t.test('the legacy contract through the sidecar: same answers as the control plane, local decisions with eval_ ids, events stored once across an outage', async (t) => {
  const dir = tempDir(t)
  const cpDir = join(dir, 'cp')
  const env = { SERVICE_BOOTSTRAP_SECRET: 'e2e-bootstrap-secret-0123456789' }
  let cp = await startControlPlane(['--data-dir', cpDir], env)
  t.teardown(() => kill(cp))
  const cpPort = new URL(cp.url).port
  const tenant = JSON.parse(admin(t, cpDir, env, ['tenant', 'create', '--name', 'Legacy Co', '--json'])) as { tenant_id: string, tenant_api_key: string }
  applyPolicies(t, dir, cpDir, env, tenant.tenant_id, [{ name: 'models', type: 'model_restriction', config: { allowed_models: ['gpt-4o*'], max_tokens: 4000 } }])

  const sc = await startSidecar(['--data-dir', join(dir, 'sidecar')], { SERVICE_CONTROL_PLANE_URL: cp.url, SERVICE_REQUEST_TIMEOUT_MS: '1000', SERVICE_CONNECT_TIMEOUT_MS: '500' })
  t.teardown(() => kill(sc))
  const api = `${sc.url}/api/service`
  const reg = await post(`${api}/register`, { name: 'Legacy bot', agent_id: 'legacy-bot' }, { authorization: `Bearer ${tenant.tenant_api_key}` })
  t.equal(reg.status, 201, 'legacy register is forwarded with the tenant key')
  const key = reg.json.api_key as string
  t.match(key, /^zk_live_/)
  const auth = { authorization: `Bearer ${key}` }

  const viaSidecar = await (await fetch(`${api}/config`, { headers: auth })).json() as Record<string, unknown>
  const direct = await (await fetch(`${cp.url}/api/service/config`, { headers: auth })).json() as Record<string, unknown>
  t.same(viaSidecar, direct, 'GET /config: the control plane\'s legacy answer, from the cache')
  t.equal(viaSidecar.agent_id, 'legacy-bot')

  const bodies = [
    { request_type: 'llm.invoke', model: 'gpt-4o-mini', tokens_requested: 100, messages: [{ role: 'user', content: 'hello' }] },
    { request_type: 'llm.invoke', model: 'claude-3-opus', tokens_requested: 100, messages: [{ role: 'user', content: 'hello' }] }
  ]
  for (const body of bodies) {
    const local = await post(`${api}/evaluate`, body, auth)
    const remote = await post(`${cp.url}/api/service/evaluate`, body, auth)
    t.equal(local.status, 200)
    t.match(local.json.evaluation_id, /^eval_[A-Za-z0-9_-]+$/, `${body.model}: an eval_ id of the sidecar's own`)
    t.not(local.json.evaluation_id, remote.json.evaluation_id)
    const { evaluation_id: _l, ...localRest } = local.json
    const { evaluation_id: _r, ...remoteRest } = remote.json
    t.strictSame(localRest, remoteRest, `${body.model}: the sidecar decides as the control plane`)
  }
  t.equal((await post(`${api}/evaluate`, bodies[0], { authorization: `Bearer zk_live_${'Z'.repeat(43)}` })).status, 401, 'an unknown legacy key: 401')
  t.equal((await post(`${api}/evaluate`, bodies[0], { authorization: `Bearer sk_agent_${'Z'.repeat(43)}` })).status, 401, 'a v1 key on the legacy surface: 401')
  t.equal((await post(`${api}/evaluate`, { model: 'x' }, auth)).status, 400, 'a body without request_type: 400')

  const ev = (n: number, extra: Record<string, unknown> = {}): Record<string, unknown> =>
    ({ id: `lg-${String(n).padStart(4, '0')}`, type: 'llm.invoke', timestamp: new Date().toISOString(), data: { n }, ...extra })
  const first = await post(`${api}/events`, { events: [ev(1), ev(2)] }, auth)
  t.equal(first.status, 202)
  t.match(first.json, { accepted: 2, dropped: 0 })
  const hb = await post(`${api}/heartbeat`, { status: 'healthy', config_hash: viaSidecar.config_hash }, auth)
  t.equal(hb.status, 200, 'heartbeat forwarded')
  t.equal(hb.json.config_updated, false)
  t.equal((await fetch(`${api}/secrets`, { headers: auth })).status, 200, '/secrets forwarded')

  await kill(cp)
  const blocked = await post(`${api}/evaluate`, bodies[1], auth)
  t.equal(blocked.json.allowed, false, 'control plane down: the cached policy still blocks')
  const during = await post(`${api}/events`, { events: [ev(3, { evaluation_id: blocked.json.evaluation_id })] }, auth)
  t.equal(during.status, 202, 'events are still accepted')
  const hbDown = await post(`${api}/heartbeat`, { status: 'healthy' }, auth)
  t.match(hbDown, { status: 200, json: { acknowledged: true, config_updated: false } }, 'a heartbeat is acknowledged locally')
  t.equal((await fetch(`${api}/secrets`, { headers: auth })).status, 200, 'the secrets fetched before are served while they are valid')

  cp = await startControlPlane(['--data-dir', cpDir, '--port', cpPort], env)
  const dbFile = join(cpDir, 'agentgov.db')
  let stored = legacyStored(dbFile)
  for (let i = 0; i < 150 && (stored.ids.length < 3 || stored.blocks.length < 2); i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    stored = legacyStored(dbFile)
  }
  t.strictSame(stored.ids, ['lg-0001', 'lg-0002', 'lg-0003'], 'every acknowledged legacy event stored exactly once')
  const blockIds = stored.blocks.map((b) => b.evaluation_id)
  t.ok(blockIds.includes(blocked.json.evaluation_id as string), 'the sidecar\'s block was sent on as a policy.blocked event with its evaluation_id')

  applyPolicies(t, dir, cpDir, env, tenant.tenant_id, [{ name: 'no-mini', type: 'model_restriction', config: { denied_models: ['*-mini'] } }], 'deny.json')
  const since = Date.now()
  let allowed = true
  while (allowed && Date.now() - since < 10_000) {
    allowed = (await post(`${api}/evaluate`, bodies[0], auth)).json.allowed as boolean
    if (allowed) await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.equal(allowed, false, `a policy applied with the admin CLI reaches the sidecar through the legacy config watch (after ${Date.now() - since} ms)`)
})
