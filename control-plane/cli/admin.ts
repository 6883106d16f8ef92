/**
 * `agentgov admin ...`: tenants, bootstrap tokens, policies, secrets and agents, on the configured
 * database. Safe while a control plane runs on the same database: it sees the change within a second.
 */
import { parseArgs } from 'node:util'
import { randomUUID } from 'node:crypto'
import { ConfigError, OPTIONS, loadConfig, type ControlPlaneConfig } from '../config.js'
import { openStore } from '../app.js'
import { secretAad } from '../agents/service.js'
import type { PolicyWrite, SecretScope, Store } from '../store/store.js'
import { bootstrapToken, isUuid, mintKey } from '../../shared/keys.js'
import { SecretBox } from '../../shared/secret-box.js'
import { normalizeScopeType } from '../../shared/policy/index.js'
import { readPolicyFile, validatePolicyList } from '../../shared/cli/policy.js'
import { mintUserToken } from '../graphql/auth.js'

export const ADMIN_HELP = `Usage: agentgov admin <command> [options]

Commands:
  tenant create --name NAME [--json]       create a tenant; prints tenant_id, bootstrap_token and
                                           tenant_api_key (shown once)
  tenant list [--json]                     the tenants
  token bootstrap --tenant ID              print the tenant's bootstrap token
  policy apply --tenant ID --file FILE     upsert the policies of FILE (JSON or YAML list) by name;
                                           a bad file changes nothing and names every error
  policy list --tenant ID [--json]         the tenant's policies
  secret set --tenant ID --scope SCOPE --name NAME --value VALUE
                                           SCOPE: tenant | deployment:ID | agent:ID;
                                           --value - reads the value from standard input
  agent list --tenant ID [--json]          the tenant's agents
  jwt --tenant ID --role admin|viewer [--ttl 1h] [--sub NAME] [--json]
                                           mint a user token for the management API (GraphQL),
                                           HS256 with SERVICE_JWT_SECRET; --ttl: 30s, 15m, 1h, 7d

Database and secrets come from the same options and environment as the control plane:
  --data-dir (SERVICE_DATA_DIR), --database-url (SERVICE_DATABASE_URL),
  --bootstrap-secret (SERVICE_BOOTSTRAP_SECRET), --master-key (SERVICE_MASTER_KEY), --api-name
`

class UsageError extends Error {}

const ADMIN_OPTIONS = {
  name: { type: 'string' },
  tenant: { type: 'string' },
  file: { type: 'string' },
  scope: { type: 'string' },
  value: { type: 'string' },
  json: { type: 'boolean' },
  role: { type: 'string' },
  ttl: { type: 'string' },
  sub: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...Object.fromEntries(Object.keys(OPTIONS).map((k) => [k, { type: 'string' }]))
} as const

interface Io {
  out: NodeJS.WritableStream
  err: NodeJS.WritableStream
  stdin: () => Promise<string>
}

function table (rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return '(none)\n'
  const cells = rows.map((r) => columns.map((c) => {
    const v = r[c]
    return v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)
  }))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] as string).length)))
  const line = (vals: string[]): string => vals.map((v, i) => v.padEnd(widths[i] as number)).join('  ').trimEnd() + '\n'
  return line(columns) + cells.map(line).join('')
}

async function readStdin (): Promise<string> {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')
}

/** A --ttl: a number of seconds, minutes, hours or days (30s, 15m, 1h, 7d), at most 30 days. */
function ttlSeconds (raw: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(raw.trim())
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }
  const seconds = m === null ? NaN : Number(m[1]) * unit[m[2] as keyof typeof unit]
  if (!Number.isSafeInteger(seconds) || seconds < 1 || seconds > 30 * 86_400) throw new UsageError(`--ttl must be like 30s, 15m, 1h or 7d, at most 30d (got "${raw}")`)
  return seconds
}

function need (value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`--${flag} is required`)
  return value
}

async function tenantOf (store: Store, id: string | undefined): Promise<string> {
  const tenantId = need(id, 'tenant')
  if (await store.getTenant(tenantId) === undefined) throw new UsageError(`no tenant ${tenantId}`)
  return tenantId
}

function parseScope (scope: string): { type: SecretScope, id: string } {
  if (scope === 'tenant') return { type: 'tenant', id: '' }
  const m = /^(deployment|agent):(.+)$/.exec(scope)
  if (m === null) throw new UsageError(`--scope must be tenant, deployment:ID or agent:ID (got "${scope}")`)
  return { type: m[1] as SecretScope, id: m[2] as string }
}

/** The policies of a file as store writes; throws with every validation error. */
export function policiesFromFile (file: string, tenantId: string): PolicyWrite[] {
  const list = readPolicyFile(file)
  const errors = validatePolicyList(list)
  const seen = new Set<string>()
  list.forEach((p, i) => {
    const name = (p as { name?: unknown }).name
    if (typeof name === 'string') {
      if (seen.has(name)) errors.push({ path: `[${i}].name`, message: `duplicate name "${name}" in the file` })
      seen.add(name)
    }
  })
  if (errors.length > 0) {
    throw new UsageError(errors.map((e) => `${file}: ${e.path}: ${e.message}`).join('\n') + `\n${errors.length} error${errors.length === 1 ? '' : 's'}; nothing was changed`)
  }
  return list.map((raw) => {
    const p = raw as Record<string, unknown>
    const scopeType = normalizeScopeType(p.scope_type) as string
    return {
      name: p.name as string,
      type: p.type as string,
      scope_type: scopeType,
      scope_id: typeof p.scope_id === 'string' ? p.scope_id : scopeType === 'ORG' ? tenantId : '',
      config: p.config as Record<string, unknown>,
      enforcement: typeof p.enforcement === 'string' ? p.enforcement : 'enforce',
      priority: typeof p.priority === 'number' ? p.priority : 0,
      is_active: p.is_active !== false
    }
  })
}

async function run (cmd: string, sub: string | undefined, v: Record<string, string | boolean | undefined>, config: ControlPlaneConfig, store: Store, io: Io): Promise<number> {
  const json = v.json === true
  const print = (value: unknown, text: string): void => { io.out.write(json ? `${JSON.stringify(value, null, 2)}\n` : text) }
  const key = `${cmd} ${sub ?? ''}`
  switch (key) {
    case 'tenant create': {
      const name = need(v.name as string | undefined, 'name')
      const id = randomUUID()
      await store.createTenant({ id, name })
      const tk = mintKey('tenant')
      await store.addTenantKey(id, tk.hash, tk.prefix)
      const result = { tenant_id: id, name, bootstrap_token: bootstrapToken(config.bootstrapSecret, id), tenant_api_key: tk.key }
      print(result, `tenant_id:       ${id}\nbootstrap_token: ${result.bootstrap_token}\ntenant_api_key:  ${tk.key}\n(the tenant API key is shown once; keep it)\n`)
      return 0
    }
    case 'tenant list': {
      const tenants = await store.listTenants()
      print(tenants, table(tenants as unknown as Array<Record<string, unknown>>, ['id', 'name', 'created_at']))
      return 0
    }
    case 'jwt ': {
      const tenantId = need(v.tenant as string | undefined, 'tenant')
      if (!isUuid(tenantId)) throw new UsageError('--tenant must be a tenant id (a UUID)')
      const role = need(v.role as string | undefined, 'role')
      if (role !== 'admin' && role !== 'viewer') throw new UsageError(`--role must be admin or viewer (got "${role}")`)
      if (config.jwtSecret === null) throw new UsageError('SERVICE_JWT_SECRET (or --jwt-secret) must be set: tokens are signed with it, and the control plane must have the same one')
      const ttl = ttlSeconds(typeof v.ttl === 'string' ? v.ttl : '1h')
      const subject = typeof v.sub === 'string' && v.sub.trim() !== '' ? v.sub.trim() : `admin-cli:${role}`
      const token = await mintUserToken(config.jwtSecret, { sub: subject, tenantId, role }, ttl)
      const expiresAt = new Date(Date.now() + ttl * 1000).toISOString()
      print({ token, tenant_id: tenantId, role, sub: subject, expires_at: expiresAt }, `${token}\n`)
      return 0
    }
    case 'token bootstrap': {
      const tenantId = need(v.tenant as string | undefined, 'tenant')
      if (!isUuid(tenantId)) throw new UsageError('--tenant must be a tenant id (a UUID)')
      const token = bootstrapToken(config.bootstrapSecret, tenantId)
      print({ tenant_id: tenantId, bootstrap_token: token }, `${token}\n`)
      return 0
    }
    case 'policy apply': {
      const tenantId = await tenantOf(store, v.tenant as string | undefined)
      const writes = policiesFromFile(need(v.file as string | undefined, 'file'), tenantId)
      const before = new Map((await store.listPolicies(tenantId)).map((p) => [p.name, p.version]))
      const stored = await store.upsertPolicies(tenantId, writes)
      const rows = stored.map((p) => ({
        name: p.name, type: p.type, version: p.version,
        change: !before.has(p.name) ? 'created' : before.get(p.name) === p.version ? 'unchanged' : 'updated'
      }))
      print(rows, table(rows, ['name', 'type', 'version', 'change']))
      return 0
    }
    case 'policy list': {
      const tenantId = await tenantOf(store, v.tenant as string | undefined)
      const policies = await store.listPolicies(tenantId)
      print(policies, table(policies as unknown as Array<Record<string, unknown>>, ['name', 'type', 'scope_type', 'scope_id', 'enforcement', 'priority', 'is_active', 'version']))
      return 0
    }
    case 'secret set': {
      const tenantId = await tenantOf(store, v.tenant as string | undefined)
      const scope = parseScope(need(v.scope as string | undefined, 'scope'))
      const name = need(v.name as string | undefined, 'name')
      if (!/^[A-Za-z0-9_.-]{1,200}$/.test(name)) throw new UsageError('--name may hold letters, digits, _ . - (at most 200)')
      let value = need(v.value as string | undefined, 'value')
      if (value === '-') value = await io.stdin()
      const record = { tenant_id: tenantId, scope_type: scope.type, scope_id: scope.id, name }
      await store.setSecret({ ...record, value_sealed: new SecretBox(config.masterKey).seal(value, secretAad(record)), updated_at: new Date().toISOString() })
      print({ ...record, stored: true }, `secret ${name} stored for ${scope.type}${scope.id === '' ? '' : ':' + scope.id}\n`)
      return 0
    }
    case 'agent list': {
      const tenantId = await tenantOf(store, v.tenant as string | undefined)
      const agents = (await store.listAgents(tenantId)).map(({ key_hash: _h, ...a }) => a)
      print(agents, table(agents as unknown as Array<Record<string, unknown>>, ['agent_id', 'name', 'agent_type', 'contract', 'status', 'health', 'last_heartbeat', 'key_prefix']))
      return 0
    }
  }
  throw new UsageError(`unknown admin command "${key.trim()}"`)
}

export async function adminCommand (argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream, stdin: () => Promise<string> = readStdin): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: ADMIN_OPTIONS, strict: true, allowPositionals: true })
  } catch (e) {
    err.write(`agentgov admin: ${(e as Error).message}\n\n${ADMIN_HELP}`)
    return 2
  }
  const { values, positionals } = parsed
  const [cmd, sub] = positionals
  if (values.help === true || cmd === undefined) {
    ;(cmd === undefined && values.help !== true ? err : out).write(ADMIN_HELP)
    return values.help === true ? 0 : 2
  }
  const configArgs = Object.keys(OPTIONS).flatMap((k) => {
    const value = (values as Record<string, unknown>)[k]
    return typeof value === 'string' ? [`--${k}`, value] : []
  })
  let store: Store | undefined
  try {
    const config = loadConfig(configArgs, process.env)
    store = openStore(config)
    return await run(cmd, sub, values as Record<string, string | boolean | undefined>, config, store, { out, err, stdin })
  } catch (e) {
    if (e instanceof UsageError || e instanceof ConfigError) {
      err.write(`agentgov admin: ${e.message}\n`)
      return e instanceof UsageError && e.message.startsWith('unknown admin command') ? 2 : 1
    }
    err.write(`agentgov admin: ${(e as Error).message}\n`)
    return 1
  } finally {
    await store?.close()
  }
}
