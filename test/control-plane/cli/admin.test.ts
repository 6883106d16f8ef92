import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { adminCommand, ADMIN_HELP } from '../../../control-plane/cli/admin.js'
import { SqliteStore } from '../../../control-plane/store/sqlite/index.js'
import { SecretBox } from '../../../shared/secret-box.js'
import { verifyBootstrapToken, hashKey } from '../../../shared/keys.js'
import { secretAad } from '../../../control-plane/agents/service.js'
import { UserAuth } from '../../../control-plane/graphql/auth.js'

const SECRET = 'admin-test-bootstrap-secret-000'
const MASTER = Buffer.alloc(32, 3).toString('base64')

async function admin (dir: string, args: string[], stdin = ''): Promise<{ code: number, out: string, err: string }> {
  const out = new PassThrough()
  const err = new PassThrough()
  let o = ''
  let e = ''
  out.on('data', (c: Buffer) => { o += c.toString() })
  err.on('data', (c: Buffer) => { e += c.toString() })
  const code = await adminCommand([...args, '--data-dir', dir, '--bootstrap-secret', SECRET, '--master-key', MASTER], out, err, async () => stdin)
  return { code, out: o, err: e }
}

t.test('admin tenant create: prints a tenant id, a valid bootstrap token and a tenant key stored only as a hash', async (t) => {
  const dir = t.testdir()
  const res = await admin(dir, ['tenant', 'create', '--name', 'Acme', '--json'])
  t.equal(res.code, 0, res.err)
  const created = JSON.parse(res.out) as { tenant_id: string, bootstrap_token: string, tenant_api_key: string, name: string }
  t.equal(created.name, 'Acme')
  t.equal(verifyBootstrapToken(SECRET, created.bootstrap_token), created.tenant_id, 'the token verifies for the tenant')
  t.match(created.tenant_api_key, /^tk_live_[A-Za-z0-9_-]{43}$/)
  const store = new SqliteStore(join(dir, 'agentgov.db'))
  t.teardown(() => store.close())
  t.equal((await store.findTenantByKeyHash(hashKey(created.tenant_api_key)))?.id, created.tenant_id)
  const raw = store.db.prepare('SELECT * FROM tenant_keys').all()
  t.notMatch(JSON.stringify(raw), created.tenant_api_key, 'the key itself is not in the database')

  const text = await admin(dir, ['tenant', 'create', '--name', 'Other'])
  t.equal(text.code, 0)
  t.match(text.out, /tenant_id: +[0-9a-f-]{36}\nbootstrap_token: +bt_/)
  const list = await admin(dir, ['tenant', 'list', '--json'])
  t.same((JSON.parse(list.out) as Array<{ name: string }>).map((x) => x.name).sort(), ['Acme', 'Other'])
  const token = await admin(dir, ['token', 'bootstrap', '--tenant', created.tenant_id])
  t.equal(token.out.trim(), created.bootstrap_token, 'token bootstrap prints the same token')
})

t.test('admin policy apply: upserts by name, bumps versions only on change, refuses a bad file whole', async (t) => {
  const dir = t.testdir()
  const { tenant_id: tenant } = JSON.parse((await admin(dir, ['tenant', 'create', '--name', 'p', '--json'])).out) as { tenant_id: string }
  const file = join(dir, 'p.yaml')
  writeFileSync(file, [
    '- name: tools',
    '  type: tool_permission',
    '  config: { allowed_tools: [search] }',
    '- name: budget',
    '  type: budget_limit',
    '  scope_type: deployment',
    '  scope_id: prod',
    '  enforcement: audit',
    '  priority: 5',
    '  config: { max_cost_usd: 10, period: day }'
  ].join('\n'))
  const first = await admin(dir, ['policy', 'apply', '--tenant', tenant, '--file', file, '--json'])
  t.equal(first.code, 0, first.err)
  t.same(JSON.parse(first.out), [
    { name: 'tools', type: 'tool_permission', version: 1, change: 'created' },
    { name: 'budget', type: 'budget_limit', version: 1, change: 'created' }
  ])
  writeFileSync(file, [
    '- name: tools',
    '  type: tool_permission',
    '  config: { allowed_tools: [search, calc] }',
    '- name: budget',
    '  type: budget_limit',
    '  scope_type: deployment',
    '  scope_id: prod',
    '  enforcement: audit',
    '  priority: 5',
    '  config: { max_cost_usd: 10, period: day }'
  ].join('\n'))
  const second = JSON.parse((await admin(dir, ['policy', 'apply', '--tenant', tenant, '--file', file, '--json'])).out) as Array<{ change: string, version: number }>
  t.same(second.map((p) => [p.change, p.version]), [['updated', 2], ['unchanged', 1]])
  const list = JSON.parse((await admin(dir, ['policy', 'list', '--tenant', tenant, '--json'])).out) as Array<Record<string, unknown>>
  const budget = list.find((p) => p.name === 'budget')
  t.match(budget, { scope_type: 'DEPLOYMENT', scope_id: 'prod', enforcement: 'audit', priority: 5, is_active: true })
  t.equal(list.find((p) => p.name === 'tools')?.scope_id, tenant, 'ORG scope defaults its scope_id to the tenant')

  const bad = join(dir, 'bad.json')
  writeFileSync(bad, JSON.stringify([
    { name: 'tools', type: 'tool_permission', config: { allowed_tools: [] , extra: 1 } },
    { name: 'x', type: 'nope', config: {} },
    { name: 'x', type: 'custom', config: { deny_if: { frob: 1 } } }
  ]))
  const refused = await admin(dir, ['policy', 'apply', '--tenant', tenant, '--file', bad])
  t.equal(refused.code, 1)
  t.match(refused.err, /\[0\]\.config\.extra: unknown field/)
  t.match(refused.err, /\[1\]\.type: must be one of/)
  t.match(refused.err, /\[2\]\.name: duplicate name "x"/)
  t.match(refused.err, /nothing was changed/)
  const after = JSON.parse((await admin(dir, ['policy', 'list', '--tenant', tenant, '--json'])).out) as Array<{ name: string, version: number }>
  t.equal(after.find((p) => p.name === 'tools')?.version, 2, 'the bad file changed nothing')

  writeFileSync(bad, '{ not json')
  const unparsable = await admin(dir, ['policy', 'apply', '--tenant', tenant, '--file', bad])
  t.equal(unparsable.code, 1)
  t.match(unparsable.err, /cannot parse/)
  const missing = await admin(dir, ['policy', 'apply', '--tenant', tenant, '--file', join(dir, 'absent.json')])
  t.equal(missing.code, 1)
  t.match(missing.err, /ENOENT|no such file/)
})

t.test('admin secret set: sealed at rest, scopes parsed, --value - reads standard input', async (t) => {
  const dir = t.testdir()
  const { tenant_id: tenant } = JSON.parse((await admin(dir, ['tenant', 'create', '--name', 's', '--json'])).out) as { tenant_id: string }
  t.equal((await admin(dir, ['secret', 'set', '--tenant', tenant, '--scope', 'tenant', '--name', 'A', '--value', 'alpha'])).code, 0)
  t.equal((await admin(dir, ['secret', 'set', '--tenant', tenant, '--scope', 'deployment:prod', '--name', 'B', '--value', '-'], 'from-stdin')).code, 0)
  t.equal((await admin(dir, ['secret', 'set', '--tenant', tenant, '--scope', 'agent:bot-1', '--name', 'A', '--value', 'agent-alpha'])).code, 0)
  const store = new SqliteStore(join(dir, 'agentgov.db'))
  t.teardown(() => store.close())
  const rows = await store.listSecrets(tenant)
  t.equal(rows.length, 3)
  const box = new SecretBox(Buffer.from(MASTER, 'base64'))
  const values = Object.fromEntries(rows.map((r) => [`${r.scope_type}:${r.scope_id}:${r.name}`, box.open(r.value_sealed, secretAad(r))]))
  t.same(values, { 'tenant::A': 'alpha', 'deployment:prod:B': 'from-stdin', 'agent:bot-1:A': 'agent-alpha' })
  t.notMatch(rows.map((r) => r.value_sealed).join(' '), /alpha|from-stdin/, 'no plaintext at rest')

  const badScope = await admin(dir, ['secret', 'set', '--tenant', tenant, '--scope', 'team:x', '--name', 'A', '--value', 'v'])
  t.equal(badScope.code, 1)
  t.match(badScope.err, /--scope must be tenant, deployment:ID or agent:ID/)
  const badName = await admin(dir, ['secret', 'set', '--tenant', tenant, '--scope', 'tenant', '--name', 'a b', '--value', 'v'])
  t.equal(badName.code, 1)
  t.match(badName.err, /--name may hold/)
})

t.test('admin: missing options, unknown tenants, commands and flags are refused with a clear message', async (t) => {
  const dir = t.testdir()
  const cases: Array<[string[], number, RegExp]> = [
    [['tenant', 'create'], 1, /--name is required/],
    [['policy', 'list'], 1, /--tenant is required/],
    [['policy', 'list', '--tenant', '00000000-0000-0000-0000-00000000beef'], 1, /no tenant/],
    [['agent', 'list', '--tenant', 'nope'], 1, /no tenant nope/],
    [['token', 'bootstrap', '--tenant', 'not-a-uuid'], 1, /must be a tenant id/],
    [['frob', 'x'], 2, /unknown admin command "frob x"/],
    [['tenant', 'create', '--bogus'], 2, /Unknown option/]
  ]
  for (const [args, code, message] of cases) {
    const res = await admin(dir, args)
    t.equal(res.code, code, `${args.join(' ')}: exit ${code}`)
    t.match(res.err, message, `${args.join(' ')}: message`)
  }
  const help = await admin(dir, ['--help'])
  t.equal(help.code, 0)
  t.equal(help.out, ADMIN_HELP)
  const none = await adminCommand([], new PassThrough(), new PassThrough())
  t.equal(none, 2, 'no command: usage on stderr, exit 2')
})

t.test('admin agent list: shows agents without their key hashes', async (t) => {
  const dir = t.testdir()
  const { tenant_id: tenant } = JSON.parse((await admin(dir, ['tenant', 'create', '--name', 'a', '--json'])).out) as { tenant_id: string }
  const store = new SqliteStore(join(dir, 'agentgov.db'))
  const now = new Date().toISOString()
  await store.createAgent({
    id: '6f1c1d1e-0000-4000-8000-000000000001', tenant_id: tenant, agent_id: 'bot', name: 'Bot', agent_type: 'custom', capabilities: [],
    metadata: {}, deployment_id: null, key_hash: 'f'.repeat(64), key_prefix: 'sk_agent_abc', contract: 'v1', status: 'active',
    health: 'unknown', last_heartbeat: null, created_at: now, updated_at: now
  })
  await store.close()
  const res = await admin(dir, ['agent', 'list', '--tenant', tenant, '--json'])
  const agents = JSON.parse(res.out) as Array<Record<string, unknown>>
  t.equal(agents.length, 1)
  t.equal(agents[0]?.agent_id, 'bot')
  t.notOk('key_hash' in (agents[0] ?? {}), 'no key hash in the output')
  const table = await admin(dir, ['agent', 'list', '--tenant', tenant])
  t.match(table.out, /agent_id\s+name\s+agent_type/)
  t.match(table.out, /bot\s+Bot\s+custom\s+v1\s+active/)
})

t.test('admin jwt: mints an HS256 user token that the management API accepts, with the role and lifetime asked for', async (t) => {
  const dir = t.testdir()
  const jwtSecret = 'admin-cli-jwt-secret-0123456789abcdef'
  const tenant = '00000000-0000-0000-0000-000000000001'
  const res = await admin(dir, ['jwt', '--tenant', tenant, '--role', 'viewer', '--ttl', '15m', '--sub', 'ops@example.com', '--json', '--jwt-secret', jwtSecret])
  t.equal(res.code, 0, res.err)
  const printed = JSON.parse(res.out) as { token: string, role: string, sub: string, tenant_id: string, expires_at: string }
  t.match(printed, { role: 'viewer', sub: 'ops@example.com', tenant_id: tenant })
  const inMinutes = (Date.parse(printed.expires_at) - Date.now()) / 60_000
  t.ok(inMinutes > 14 && inMinutes <= 15, `expires in 15 minutes (${inMinutes.toFixed(2)})`)
  const auth = new UserAuth({ jwtSecret, jwksUrl: null, authMode: 'jwt', defaultTenantId: tenant })
  t.strictSame(await auth.user(`Bearer ${printed.token}`), { sub: 'ops@example.com', tenantId: tenant, role: 'viewer' }, 'the token verifies')
  const plain = await admin(dir, ['jwt', '--tenant', tenant, '--role', 'admin', '--jwt-secret', jwtSecret])
  t.equal(plain.code, 0, plain.err)
  t.match(plain.out, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/, 'without --json: the token alone')
  t.match(await auth.user(`Bearer ${plain.out.trim()}`), { role: 'admin', sub: 'admin-cli:admin' }, 'default subject and a 1 h lifetime')
})

t.test('admin jwt: a missing secret, a bad role, tenant or ttl -> a message naming the problem, no token', async (t) => {
  const dir = t.testdir()
  const tenant = '00000000-0000-0000-0000-000000000001'
  const secret = ['--jwt-secret', 'admin-cli-jwt-secret-0123456789abcdef']
  const cases: Array<[string[], RegExp]> = [
    [['jwt', '--tenant', tenant, '--role', 'admin'], /SERVICE_JWT_SECRET/],
    [['jwt', '--tenant', tenant, '--role', 'owner', ...secret], /--role must be admin or viewer/],
    [['jwt', '--tenant', 'acme', '--role', 'admin', ...secret], /--tenant must be a tenant id/],
    [['jwt', '--role', 'admin', ...secret], /--tenant is required/],
    [['jwt', '--tenant', tenant, '--role', 'admin', '--ttl', '1y', ...secret], /--ttl must be like/],
    [['jwt', '--tenant', tenant, '--role', 'admin', '--ttl', '31d', ...secret], /at most 30d/]
  ]
  for (const [args, message] of cases) {
    const r = await admin(dir, args)
    t.not(r.code, 0, args.join(' '))
    t.match(r.err, message, args.join(' '))
    t.equal(r.out, '', 'nothing printed')
  }
})
