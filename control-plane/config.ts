/**
 * The control plane's configuration: environment variables, each also a command-line flag (a flag wins).
 * Validated once at start-up into one frozen object; a bad value stops the process with a message that
 * names the variable.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import {
  ConfigError, LOG_LEVELS, envName, integer, logLevel, optionsHelp as helpOf, readOptions, type OptionSpec
} from '../shared/config-env.js'

export { ConfigError, LOG_LEVELS, envName }

export interface ControlPlaneConfig {
  port: number
  host: string
  dataDir: string
  /** `sqlite:<path>` (default: `<dataDir>/agentgov.db`) or `postgres://...`. */
  databaseUrl: string
  bootstrapSecret: string
  /** Where the generated bootstrap secret lives, when it was not given. */
  bootstrapSecretFile: string | null
  masterKey: Buffer
  masterKeyFile: string | null
  /** The API name segment: paths /api/<name>/v1, headers X-<Name>-Key. */
  apiName: string
  heartbeatIntervalSeconds: number
  logLevel: typeof LOG_LEVELS[number]
  /** Platform rate limits (429), separate from policy rate limits. */
  agentRequestsPerSecond: number
  registrationsPerMinute: number
  /** Events of one request at most (400 above). */
  maxEventsPerBatch: number
  /** Request bodies at most, in bytes (413 above). */
  bodyLimit: number
  /** How long the ingest writer gathers events before one commit. */
  ingestWindowMs: number
  /** How often the process checks the database for changes made by others (the admin CLI). */
  changePollMs: number
  /** User JWTs (GraphQL): HS256 with this secret, and/or RS256/ES256 against jwksUrl. */
  jwtSecret: string | null
  jwksUrl: string | null
  /** `open`: requests without a JWT act as admin of the default tenant (local development only). */
  authMode: 'jwt' | 'open'
}

/** Flag name -> environment variable (SERVICE_ names are renamed by the API name; see `envName`). */
export const OPTIONS = {
  port: { env: 'PORT', help: 'port to listen on (default 8080; 0 picks a free one)' },
  host: { env: 'HOST', help: 'address to listen on (default 127.0.0.1)' },
  'data-dir': { env: 'SERVICE_DATA_DIR', help: 'folder for the database and generated secrets (default ./data)' },
  'database-url': { env: 'SERVICE_DATABASE_URL', help: 'sqlite:<path> (default <data-dir>/agentgov.db)' },
  'bootstrap-secret': { env: 'SERVICE_BOOTSTRAP_SECRET', help: 'HMAC secret of bootstrap tokens (default: generated, kept in the data folder)' },
  'master-key': { env: 'SERVICE_MASTER_KEY', help: '32 bytes, base64: encrypts secrets at rest (default: generated, kept in the data folder)' },
  'api-name': { env: 'SERVICE_API_NAME', help: 'renames /api/service, X-Service-* headers and the SERVICE_ env prefix (default service)' },
  'heartbeat-interval': { env: 'SERVICE_HEARTBEAT_INTERVAL_SECONDS', help: 'heartbeat interval given to agents, seconds (default 60)' },
  'log-level': { env: 'LOG_LEVEL', help: `one of ${LOG_LEVELS.join(', ')} (default info)` },
  'rate-limit-rps': { env: 'SERVICE_RATE_LIMIT_RPS', help: 'requests per second per agent key (default 600)' },
  'register-rate-per-minute': { env: 'SERVICE_REGISTER_RATE_PER_MINUTE', help: 'registrations per minute per bootstrap token (default 50)' },
  'jwt-secret': { env: 'SERVICE_JWT_SECRET', help: 'HS256 secret of user JWTs (GraphQL), 32+ characters' },
  'jwks-url': { env: 'SERVICE_JWKS_URL', help: 'JWKS of an OIDC provider: user JWTs signed RS256 or ES256 (GraphQL)' },
  'auth-mode': { env: 'SERVICE_AUTH_MODE', help: 'jwt (default) or open: requests without a JWT act as admin of the default tenant (local development only)' }
} as const satisfies Record<string, OptionSpec>

/** Reads a generated secret from `file`, or creates it (mode 0600). */
function generatedSecret (file: string, make: () => string): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  writeFileSync(file, make() + '\n', { mode: 0o600, flag: 'wx' })
  return readFileSync(file, 'utf8').trim()
}

export function parseMasterKey (variable: string, raw: string): Buffer {
  const key = Buffer.from(raw.trim(), 'base64')
  if (key.length !== 32 || !/^[A-Za-z0-9+/=_-]+$/.test(raw.trim())) {
    throw new ConfigError(variable, 'must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)')
  }
  return key
}

/**
 * Builds the config from argv and env. `createSecrets: false` (admin commands) never writes the
 * generated secret files, it only reads them.
 */
export function loadConfig (argv: string[], env: NodeJS.ProcessEnv = process.env, opts: { createSecrets?: boolean } = {}): ControlPlaneConfig {
  const { apiName, get } = readOptions(OPTIONS, argv, env)
  const port = get('port')
  const host = get('host')
  const dataDir = resolve(get('data-dir').value ?? './data')
  const db = get('database-url')
  let databaseUrl = db.value ?? `sqlite:${join(dataDir, 'agentgov.db')}`
  if (!databaseUrl.startsWith('sqlite:') && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(db.variable, 'must start with sqlite: or postgres://')
  }
  if (databaseUrl.startsWith('sqlite:') && databaseUrl !== 'sqlite::memory:') databaseUrl = `sqlite:${resolve(databaseUrl.slice(7))}`
  const createSecrets = opts.createSecrets ?? true
  if (createSecrets) mkdirSync(dataDir, { recursive: true, mode: 0o700 })

  const bs = get('bootstrap-secret')
  let bootstrapSecret = bs.value
  let bootstrapSecretFile: string | null = null
  if (bootstrapSecret === undefined) {
    bootstrapSecretFile = join(dataDir, 'bootstrap-secret')
    if (!createSecrets && !existsSync(bootstrapSecretFile)) {
      throw new ConfigError(bs.variable, `is not set and ${bootstrapSecretFile} does not exist (start the control plane once, or set it)`)
    }
    bootstrapSecret = generatedSecret(bootstrapSecretFile, () => randomBytes(32).toString('hex'))
  }
  if (bootstrapSecret.length < 16) throw new ConfigError(bs.variable, 'must be at least 16 characters')

  const mk = get('master-key')
  let masterKeyFile: string | null = null
  let masterKey: Buffer
  if (mk.value === undefined) {
    masterKeyFile = join(dataDir, 'master-key')
    if (!createSecrets && !existsSync(masterKeyFile)) {
      throw new ConfigError(mk.variable, `is not set and ${masterKeyFile} does not exist (start the control plane once, or set it)`)
    }
    masterKey = parseMasterKey(masterKeyFile, generatedSecret(masterKeyFile, () => randomBytes(32).toString('base64')))
  } else {
    masterKey = parseMasterKey(mk.variable, mk.value)
  }

  const level = get('log-level')
  const hb = get('heartbeat-interval')
  const rps = get('rate-limit-rps')
  const reg = get('register-rate-per-minute')
  const hostValue = host.value ?? '127.0.0.1'
  if (hostValue.trim() === '') throw new ConfigError(host.variable, 'must not be empty')
  const js = get('jwt-secret')
  const jwtSecret = js.value === undefined || js.value === '' ? null : js.value
  if (jwtSecret !== null && jwtSecret.length < 32) throw new ConfigError(js.variable, 'must be at least 32 characters (HS256 needs a key as long as its hash)')
  const jw = get('jwks-url')
  let jwksUrl: string | null = null
  if (jw.value !== undefined && jw.value !== '') {
    let u: URL
    try {
      u = new URL(jw.value)
    } catch {
      throw new ConfigError(jw.variable, `must be a URL, got "${jw.value}"`)
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ConfigError(jw.variable, 'must be an http(s) URL')
    jwksUrl = u.href
  }
  const am = get('auth-mode')
  const authMode = am.value === undefined || am.value === '' ? 'jwt' : am.value.trim().toLowerCase()
  if (authMode !== 'jwt' && authMode !== 'open') throw new ConfigError(am.variable, `must be jwt or open, got "${am.value ?? ''}"`)
  return Object.freeze({
    port: port.value === undefined ? 8080 : integer(port.variable, port.value, 0, 65535),
    host: hostValue,
    dataDir,
    databaseUrl,
    bootstrapSecret,
    bootstrapSecretFile,
    masterKey,
    masterKeyFile,
    apiName,
    heartbeatIntervalSeconds: hb.value === undefined ? 60 : integer(hb.variable, hb.value, 1, 86_400),
    logLevel: logLevel(level.variable, level.value),
    agentRequestsPerSecond: rps.value === undefined ? 600 : integer(rps.variable, rps.value, 1, 1_000_000),
    registrationsPerMinute: reg.value === undefined ? 50 : integer(reg.variable, reg.value, 1, 1_000_000),
    maxEventsPerBatch: 1000,
    bodyLimit: 1024 * 1024, // 1 MiB
    ingestWindowMs: 2, // gather for 2 ms, then one transaction
    changePollMs: 250,
    jwtSecret,
    jwksUrl,
    authMode
  })
}

export function optionsHelp (): string {
  return helpOf(OPTIONS)
}
