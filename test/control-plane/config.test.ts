import t from 'tap'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ConfigError, LOG_LEVELS, OPTIONS, envName, loadConfig, optionsHelp, parseMasterKey } from '../../control-plane/config.js'

const KEY = Buffer.alloc(32, 5).toString('base64')
const SECRET = 's'.repeat(20)

/** An env with a temp data folder and given secrets, so no test writes outside its own folder. */
function env (dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_DATA_DIR: dir, SERVICE_BOOTSTRAP_SECRET: SECRET, SERVICE_MASTER_KEY: KEY, ...extra }
}

/** Pattern for a ConfigError naming `variable`, with the variable also at the start of the message. */
function configError (variable: string): { name: string, variable: string, message: RegExp } {
  return { name: 'ConfigError', variable, message: new RegExp(`^${variable.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&')}: `) }
}

t.test('defaults: port 8080 on 127.0.0.1, SQLite in the data folder, documented limits, frozen', async (t) => {
  const dir = t.testdir()
  const c = loadConfig([], { SERVICE_DATA_DIR: dir })
  t.same({ ...c, masterKey: undefined, bootstrapSecret: undefined }, {
    port: 8080,
    host: '127.0.0.1',
    dataDir: dir,
    databaseUrl: `sqlite:${join(dir, 'agentgov.db')}`,
    bootstrapSecret: undefined,
    bootstrapSecretFile: join(dir, 'bootstrap-secret'),
    masterKey: undefined,
    masterKeyFile: join(dir, 'master-key'),
    apiName: 'service',
    heartbeatIntervalSeconds: 60,
    logLevel: 'info',
    agentRequestsPerSecond: 600,
    registrationsPerMinute: 50,
    maxEventsPerBatch: 1000,
    bodyLimit: 1024 * 1024,
    ingestWindowMs: 2,
    changePollMs: 250,
    jwtSecret: null,
    jwksUrl: null,
    authMode: 'jwt'
  })
  t.ok(Object.isFrozen(c), 'the config object is frozen')
  t.throws(() => { (c as { port: number }).port = 1 }, TypeError, 'assigning to it throws in strict mode')
})

t.test('defaults: a generated bootstrap secret and master key are written with mode 0600 and reused on the next load', async (t) => {
  const dir = t.testdir()
  const first = loadConfig([], { SERVICE_DATA_DIR: dir })
  const bsFile = join(dir, 'bootstrap-secret')
  const mkFile = join(dir, 'master-key')
  t.equal(statSync(bsFile).mode & 0o777, 0o600, 'bootstrap-secret is 0600')
  t.equal(statSync(mkFile).mode & 0o777, 0o600, 'master-key is 0600')
  t.match(first.bootstrapSecret, /^[0-9a-f]{64}$/, 'generated secret: 32 random bytes in hex')
  t.equal(readFileSync(bsFile, 'utf8').trim(), first.bootstrapSecret)
  t.equal(first.masterKey.length, 32)
  t.equal(Buffer.from(readFileSync(mkFile, 'utf8').trim(), 'base64').toString('hex'), first.masterKey.toString('hex'))

  const second = loadConfig([], { SERVICE_DATA_DIR: dir })
  t.equal(second.bootstrapSecret, first.bootstrapSecret, 'the bootstrap secret is reused')
  t.equal(second.masterKey.toString('hex'), first.masterKey.toString('hex'), 'the master key is reused')

  const other = loadConfig([], { SERVICE_DATA_DIR: t.testdir() })
  t.not(other.bootstrapSecret, first.bootstrapSecret, 'another data folder gets another secret')
})

t.test('defaults: a missing data folder is created (mode 0700) with its parents', async (t) => {
  const dir = join(t.testdir(), 'a', 'b', 'data')
  const c = loadConfig([], { SERVICE_DATA_DIR: dir })
  t.equal(c.dataDir, dir)
  t.ok(statSync(dir).isDirectory())
  t.equal(statSync(dir).mode & 0o777, 0o700)
  t.ok(existsSync(join(dir, 'bootstrap-secret')))
})

t.test('given secrets: nothing is generated, and the file fields are null', async (t) => {
  const dir = t.testdir()
  const c = loadConfig([], env(dir))
  t.equal(c.bootstrapSecret, SECRET)
  t.equal(c.masterKey.toString('base64'), KEY)
  t.equal(c.bootstrapSecretFile, null)
  t.equal(c.masterKeyFile, null)
  t.notOk(existsSync(join(dir, 'bootstrap-secret')), 'no bootstrap-secret file')
  t.notOk(existsSync(join(dir, 'master-key')), 'no master-key file')
})

t.test('every environment variable is read', async (t) => {
  const dir = t.testdir()
  const c = loadConfig([], {
    PORT: '9000',
    HOST: '0.0.0.0',
    SERVICE_DATA_DIR: dir,
    SERVICE_DATABASE_URL: 'sqlite:' + join(dir, 'other.db'),
    SERVICE_BOOTSTRAP_SECRET: SECRET,
    SERVICE_MASTER_KEY: KEY,
    SERVICE_API_NAME: 'service',
    SERVICE_HEARTBEAT_INTERVAL_SECONDS: '30',
    LOG_LEVEL: 'warn',
    SERVICE_RATE_LIMIT_RPS: '7',
    SERVICE_REGISTER_RATE_PER_MINUTE: '3'
  })
  t.match(c, {
    port: 9000,
    host: '0.0.0.0',
    dataDir: dir,
    databaseUrl: 'sqlite:' + join(dir, 'other.db'),
    bootstrapSecret: SECRET,
    apiName: 'service',
    heartbeatIntervalSeconds: 30,
    logLevel: 'warn',
    agentRequestsPerSecond: 7,
    registrationsPerMinute: 3
  })
  t.equal(c.masterKey.toString('base64'), KEY)
})

t.test('every flag is read', async (t) => {
  const dir = t.testdir()
  const key = Buffer.alloc(32, 9).toString('base64')
  const c = loadConfig([
    '--port', '9001', '--host', '::1', '--data-dir', dir, '--database-url', 'postgres://u:p@db:5432/agentgov',
    '--bootstrap-secret', 'flag-secret-0123456789', '--master-key', key, '--api-name', 'acme',
    '--heartbeat-interval', '45', '--log-level=debug', '--rate-limit-rps=11', '--register-rate-per-minute=4'
  ], {})
  t.match(c, {
    port: 9001,
    host: '::1',
    dataDir: dir,
    databaseUrl: 'postgres://u:p@db:5432/agentgov',
    bootstrapSecret: 'flag-secret-0123456789',
    apiName: 'acme',
    heartbeatIntervalSeconds: 45,
    logLevel: 'debug',
    agentRequestsPerSecond: 11,
    registrationsPerMinute: 4,
    bootstrapSecretFile: null,
    masterKeyFile: null
  })
  t.equal(c.masterKey.toString('base64'), key)
})

t.test('OPTIONS: every flag has an environment variable and a help line', async (t) => {
  t.same(Object.keys(OPTIONS).sort(), [
    'api-name', 'auth-mode', 'bootstrap-secret', 'data-dir', 'database-url', 'heartbeat-interval', 'host', 'jwks-url', 'jwt-secret',
    'log-level', 'master-key', 'port', 'rate-limit-rps', 'register-rate-per-minute'
  ])
  const help = optionsHelp()
  for (const [flag, o] of Object.entries(OPTIONS)) {
    t.match(help, `--${flag}`, `help names --${flag}`)
    t.match(help, o.env, `help names ${o.env}`)
  }
})

t.test('a flag wins over its environment variable', async (t) => {
  const dir = t.testdir()
  const flagDir = t.testdir()
  const c = loadConfig([
    '--port', '1234', '--host', '10.0.0.1', '--data-dir', flagDir, '--bootstrap-secret', 'flag-secret-0123456789',
    '--log-level', 'error', '--heartbeat-interval', '5', '--rate-limit-rps', '2', '--register-rate-per-minute', '9',
    '--api-name', 'flagged', '--database-url', 'sqlite::memory:'
  ], env(dir, {
    PORT: '9000', HOST: '0.0.0.0', LOG_LEVEL: 'warn', SERVICE_HEARTBEAT_INTERVAL_SECONDS: '30', SERVICE_RATE_LIMIT_RPS: '7',
    SERVICE_REGISTER_RATE_PER_MINUTE: '3', SERVICE_API_NAME: 'acme', SERVICE_DATABASE_URL: 'sqlite:' + join(dir, 'env.db')
  }))
  t.match(c, {
    port: 1234,
    host: '10.0.0.1',
    dataDir: flagDir,
    bootstrapSecret: 'flag-secret-0123456789',
    logLevel: 'error',
    heartbeatIntervalSeconds: 5,
    agentRequestsPerSecond: 2,
    registrationsPerMinute: 9,
    apiName: 'flagged',
    databaseUrl: 'sqlite::memory:'
  })
  const badFlag = (): unknown => loadConfig(['--port', 'abc'], env(dir, { PORT: '9000' }))
  t.throws(badFlag, configError('--port'), 'a bad flag is named as the flag, even when the variable is fine')
})

t.test('an empty environment variable counts as unset', async (t) => {
  const dir = t.testdir()
  const c = loadConfig([], env(dir, { PORT: '', HOST: '', LOG_LEVEL: '', SERVICE_HEARTBEAT_INTERVAL_SECONDS: '', SERVICE_DATABASE_URL: '' }))
  t.match(c, { port: 8080, host: '127.0.0.1', logLevel: 'info', heartbeatIntervalSeconds: 60, databaseUrl: `sqlite:${join(dir, 'agentgov.db')}` })
})

t.test('PORT: 0 (a free port) and 65535 are accepted; surrounding spaces are tolerated', async (t) => {
  const dir = t.testdir()
  t.equal(loadConfig([], env(dir, { PORT: '0' })).port, 0)
  t.equal(loadConfig([], env(dir, { PORT: '65535' })).port, 65535)
  t.equal(loadConfig([], env(dir, { PORT: ' 8081 ' })).port, 8081)
})

t.test('PORT: a non-integer or out-of-range value stops with a ConfigError naming PORT', async (t) => {
  const dir = t.testdir()
  for (const bad of ['abc', '70000', '65536', '-1', '1.5', '8080x', '0x50', '1e3']) {
    t.throws(() => loadConfig([], env(dir, { PORT: bad })), configError('PORT'), `PORT=${bad}`)
  }
  t.throws(() => loadConfig([], env(dir, { PORT: 'abc' })), { message: /must be an integer, got "abc"/ })
  t.throws(() => loadConfig([], env(dir, { PORT: '70000' })), { message: /between 0 and 65535, got 70000/ })
  t.throws(() => loadConfig([], env(dir, { PORT: '70000' })), ConfigError, 'is a ConfigError instance')
})

t.test('integer settings: out-of-range or non-integer values name their variable', async (t) => {
  const dir = t.testdir()
  const cases: Array<[string, string]> = [
    ['SERVICE_HEARTBEAT_INTERVAL_SECONDS', '0'],
    ['SERVICE_HEARTBEAT_INTERVAL_SECONDS', '86401'],
    ['SERVICE_HEARTBEAT_INTERVAL_SECONDS', 'often'],
    ['SERVICE_RATE_LIMIT_RPS', '0'],
    ['SERVICE_RATE_LIMIT_RPS', '1000001'],
    ['SERVICE_REGISTER_RATE_PER_MINUTE', '0'],
    ['SERVICE_REGISTER_RATE_PER_MINUTE', 'x']
  ]
  for (const [variable, value] of cases) {
    t.throws(() => loadConfig([], env(dir, { [variable]: value })), configError(variable), `${variable}=${value}`)
  }
  t.equal(loadConfig([], env(dir, { SERVICE_HEARTBEAT_INTERVAL_SECONDS: '86400' })).heartbeatIntervalSeconds, 86400, 'upper bound accepted')
  t.equal(loadConfig([], env(dir, { SERVICE_RATE_LIMIT_RPS: '1' })).agentRequestsPerSecond, 1, 'lower bound accepted')
})

t.test('LOG_LEVEL: each pino level is accepted; anything else names LOG_LEVEL', async (t) => {
  const dir = t.testdir()
  for (const level of LOG_LEVELS) t.equal(loadConfig([], env(dir, { LOG_LEVEL: level })).logLevel, level)
  t.throws(() => loadConfig([], env(dir, { LOG_LEVEL: 'loud' })), configError('LOG_LEVEL'))
  t.throws(() => loadConfig([], env(dir, { LOG_LEVEL: 'loud' })), { message: /got "loud"/ })
  t.throws(() => loadConfig([], env(dir, { LOG_LEVEL: 'INFO' })), configError('LOG_LEVEL'), 'levels are lower case')
  t.throws(() => loadConfig(['--log-level', 'verbose'], env(dir)), configError('--log-level'))
})

t.test('SERVICE_MASTER_KEY: anything but 32 bytes of base64 names the variable', async (t) => {
  const dir = t.testdir()
  for (const [label, bad] of [
    ['16 bytes', Buffer.alloc(16, 1).toString('base64')],
    ['31 bytes', Buffer.alloc(31, 1).toString('base64')],
    ['33 bytes', Buffer.alloc(33, 1).toString('base64')],
    ['hex of 32 bytes (64 characters, decodes to 48 bytes)', Buffer.alloc(32, 1).toString('hex')],
    ['not base64', '!'.repeat(44)],
    ['32 bytes with a character outside the alphabet', KEY.slice(0, 10) + '*' + KEY.slice(11)]
  ] as const) {
    t.throws(() => loadConfig([], env(dir, { SERVICE_MASTER_KEY: bad })), configError('SERVICE_MASTER_KEY'), label)
  }
  t.throws(() => loadConfig(['--master-key', 'short'], env(dir)), configError('--master-key'))
  const url = Buffer.alloc(32, 0xfb).toString('base64url')
  t.equal(loadConfig([], env(dir, { SERVICE_MASTER_KEY: url })).masterKey.toString('hex'), Buffer.alloc(32, 0xfb).toString('hex'),
    'base64url is accepted too')
  t.equal(loadConfig([], env(dir, { SERVICE_MASTER_KEY: ` ${KEY}\n` })).masterKey.toString('base64'), KEY, 'surrounding whitespace is trimmed')
})

t.test('parseMasterKey: returns the 32 decoded bytes, or a ConfigError naming the given variable', async (t) => {
  t.equal(parseMasterKey('X', KEY).toString('base64'), KEY)
  t.throws(() => parseMasterKey('MY_VAR', 'abc'), configError('MY_VAR'))
})

t.test('a corrupted master-key file stops with a ConfigError naming the file', async (t) => {
  const dir = t.testdir({ 'master-key': 'not a key\n' })
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir }), configError(join(dir, 'master-key')))
})

t.test('SERVICE_BOOTSTRAP_SECRET: shorter than 16 characters names the variable; 16 is accepted', async (t) => {
  const dir = t.testdir()
  t.throws(() => loadConfig([], env(dir, { SERVICE_BOOTSTRAP_SECRET: 'x'.repeat(15) })), configError('SERVICE_BOOTSTRAP_SECRET'))
  t.throws(() => loadConfig([], env(dir, { SERVICE_BOOTSTRAP_SECRET: 'x'.repeat(15) })), { message: /at least 16 characters/ })
  t.throws(() => loadConfig(['--bootstrap-secret', 'short'], env(dir)), configError('--bootstrap-secret'))
  t.equal(loadConfig([], env(dir, { SERVICE_BOOTSTRAP_SECRET: 'x'.repeat(16) })).bootstrapSecret, 'x'.repeat(16))
})

t.test('an empty bootstrap-secret file stops with a ConfigError instead of using an empty secret', async (t) => {
  const dir = t.testdir({ 'bootstrap-secret': '\n' })
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir, SERVICE_MASTER_KEY: KEY }), configError('SERVICE_BOOTSTRAP_SECRET'))
})

t.test('SERVICE_API_NAME: lower-case slugs up to 32 characters are accepted; others name the variable', async (t) => {
  const dir = t.testdir()
  for (const good of ['acme', 'a', 'my-api2', 'a' + 'b'.repeat(31)]) {
    t.equal(loadConfig([], env(dir, { SERVICE_API_NAME: good })).apiName, good, good)
  }
  for (const bad of ['Acme', '1acme', '-acme', 'ac_me', 'ac me', 'a/b', '../x', 'a' + 'b'.repeat(32), 'acme\n']) {
    t.throws(() => loadConfig([], env(dir, { SERVICE_API_NAME: bad })), configError('SERVICE_API_NAME'), JSON.stringify(bad))
  }
  t.throws(() => loadConfig(['--api-name', 'BAD'], env(dir)), { name: 'ConfigError', message: /got "BAD"/ }, 'the flag is checked too')
})

t.test('SERVICE_API_NAME=acme: ACME_BOOTSTRAP_SECRET is read first, SERVICE_BOOTSTRAP_SECRET is the fallback', async (t) => {
  const dir = t.testdir()
  const base = { SERVICE_DATA_DIR: dir, SERVICE_MASTER_KEY: KEY, SERVICE_API_NAME: 'acme' }
  const both = loadConfig([], { ...base, ACME_BOOTSTRAP_SECRET: 'acme-secret-0123456789', SERVICE_BOOTSTRAP_SECRET: 'service-secret-0123456789' })
  t.equal(both.bootstrapSecret, 'acme-secret-0123456789', 'the renamed variable wins')
  const fallback = loadConfig([], { ...base, SERVICE_BOOTSTRAP_SECRET: 'service-secret-0123456789' })
  t.equal(fallback.bootstrapSecret, 'service-secret-0123456789', 'the SERVICE_ variable is the fallback')
  const emptyOwn = loadConfig([], { ...base, ACME_BOOTSTRAP_SECRET: '', SERVICE_BOOTSTRAP_SECRET: 'service-secret-0123456789' })
  t.equal(emptyOwn.bootstrapSecret, 'service-secret-0123456789', 'an empty renamed variable falls back too')
  t.throws(() => loadConfig([], { ...base, ACME_BOOTSTRAP_SECRET: 'short' }), configError('ACME_BOOTSTRAP_SECRET'),
    'an error names the renamed variable that was used')
  t.throws(() => loadConfig([], { ...base, SERVICE_BOOTSTRAP_SECRET: 'short' }), configError('SERVICE_BOOTSTRAP_SECRET'),
    'an error names the fallback variable that was used')
  const flag = loadConfig(['--bootstrap-secret', 'flag-secret-0123456789'], { ...base, ACME_BOOTSTRAP_SECRET: 'acme-secret-0123456789' })
  t.equal(flag.bootstrapSecret, 'flag-secret-0123456789', 'the flag still wins')
})

t.test('SERVICE_API_NAME=acme: other SERVICE_ variables are renamed too; PORT, HOST and LOG_LEVEL are not', async (t) => {
  const dir = t.testdir()
  const acmeKey = Buffer.alloc(32, 2).toString('base64')
  const c = loadConfig([], {
    SERVICE_API_NAME: 'acme',
    ACME_DATA_DIR: dir,
    SERVICE_DATA_DIR: join(dir, 'not-this-one'),
    ACME_MASTER_KEY: acmeKey,
    SERVICE_MASTER_KEY: KEY,
    ACME_BOOTSTRAP_SECRET: SECRET,
    ACME_HEARTBEAT_INTERVAL_SECONDS: '15',
    PORT: '7000',
    ACME_PORT: '7001',
    LOG_LEVEL: 'warn'
  })
  t.equal(c.dataDir, dir)
  t.equal(c.masterKey.toString('base64'), acmeKey)
  t.equal(c.heartbeatIntervalSeconds, 15)
  t.equal(c.port, 7000, 'PORT is not renamed')
  t.equal(c.logLevel, 'warn')
  t.throws(() => loadConfig([], { SERVICE_API_NAME: 'acme', ACME_DATA_DIR: dir, ACME_BOOTSTRAP_SECRET: SECRET, ACME_MASTER_KEY: KEY, ACME_RATE_LIMIT_RPS: '0' }),
    configError('ACME_RATE_LIMIT_RPS'))
})

t.test('SERVICE_API_NAME: an empty value counts as unset (like every other variable) and gives the default name', async (t) => {
  // Every other variable treats '' as unset (get() in config.ts); SERVICE_API_NAME= (as docker env files
  // write it) instead stops the process with "must match ...".
  t.equal(loadConfig([], env(t.testdir(), { SERVICE_API_NAME: '' })).apiName, 'service')
})

t.test('envName: SERVICE_ variables take the API name as prefix; others and the default name are unchanged', async (t) => {
  t.equal(envName('SERVICE_BOOTSTRAP_SECRET', 'acme'), 'ACME_BOOTSTRAP_SECRET')
  t.equal(envName('SERVICE_BOOTSTRAP_SECRET', 'my-api'), 'MY_API_BOOTSTRAP_SECRET', 'dashes become underscores')
  t.equal(envName('SERVICE_BOOTSTRAP_SECRET', 'service'), 'SERVICE_BOOTSTRAP_SECRET')
  t.equal(envName('PORT', 'acme'), 'PORT')
  t.equal(envName('LOG_LEVEL', 'acme'), 'LOG_LEVEL')
})

t.test('SERVICE_DATABASE_URL: sqlite paths become absolute; :memory: and postgres URLs are kept; others name the variable', async (t) => {
  const dir = t.testdir()
  t.equal(loadConfig([], env(dir, { SERVICE_DATABASE_URL: 'sqlite:rel/x.db' })).databaseUrl, `sqlite:${resolve('rel/x.db')}`)
  t.equal(loadConfig([], env(dir, { SERVICE_DATABASE_URL: 'sqlite::memory:' })).databaseUrl, 'sqlite::memory:')
  t.equal(loadConfig([], env(dir, { SERVICE_DATABASE_URL: 'postgres://h/db' })).databaseUrl, 'postgres://h/db')
  t.equal(loadConfig([], env(dir, { SERVICE_DATABASE_URL: 'postgresql://h/db' })).databaseUrl, 'postgresql://h/db')
  for (const bad of ['mysql://h/db', '/var/lib/agentgov.db', 'postgres:h', 'SQLITE:x.db', 'http://h/db']) {
    t.throws(() => loadConfig([], env(dir, { SERVICE_DATABASE_URL: bad })), configError('SERVICE_DATABASE_URL'), bad)
  }
  t.throws(() => loadConfig(['--database-url', 'mysql://h/db'], env(dir)), configError('--database-url'))
})

t.test('HOST: an empty --host flag is refused, naming the flag', async (t) => {
  t.throws(() => loadConfig(['--host', ' '], env(t.testdir())), configError('--host'))
})

t.test('createSecrets:false refuses when the generated secret files do not exist, and writes nothing', async (t) => {
  const dir = t.testdir()
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir }, { createSecrets: false }), configError('SERVICE_BOOTSTRAP_SECRET'))
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir }, { createSecrets: false }), { message: /does not exist/ })
  t.notOk(existsSync(join(dir, 'bootstrap-secret')), 'no bootstrap-secret was written')
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir, SERVICE_BOOTSTRAP_SECRET: SECRET }, { createSecrets: false }),
    configError('SERVICE_MASTER_KEY'), 'the master key file is required too')
  t.notOk(existsSync(join(dir, 'master-key')), 'no master-key was written')
  const missing = join(dir, 'never-created')
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: missing }, { createSecrets: false }), ConfigError)
  t.notOk(existsSync(missing), 'the data folder is not created')
})

t.test('createSecrets:false reads the files a previous start generated, and accepts given secrets', async (t) => {
  const dir = t.testdir()
  const started = loadConfig([], { SERVICE_DATA_DIR: dir })
  const admin = loadConfig([], { SERVICE_DATA_DIR: dir }, { createSecrets: false })
  t.equal(admin.bootstrapSecret, started.bootstrapSecret)
  t.equal(admin.masterKey.toString('hex'), started.masterKey.toString('hex'))
  const given = loadConfig([], env(t.testdir()), { createSecrets: false })
  t.equal(given.bootstrapSecret, SECRET)
})

t.test('an existing bootstrap-secret file is used as it is (trimmed), not replaced', async (t) => {
  const dir = t.testdir({ 'bootstrap-secret': '  a-hand-written-secret-value  \n' })
  const c = loadConfig([], { SERVICE_DATA_DIR: dir, SERVICE_MASTER_KEY: KEY })
  t.equal(c.bootstrapSecret, 'a-hand-written-secret-value')
  t.equal(readFileSync(join(dir, 'bootstrap-secret'), 'utf8'), '  a-hand-written-secret-value  \n', 'the file is untouched')
})

t.test('command line: an unknown flag, a positional argument or a flag without a value throws', async (t) => {
  const dir = t.testdir()
  t.throws(() => loadConfig(['--nope', 'x'], env(dir)), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' })
  t.throws(() => loadConfig(['--prot=80'], env(dir)), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }, 'a typo of --port')
  t.throws(() => loadConfig(['serve'], env(dir)), { code: 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' })
  t.throws(() => loadConfig(['--port'], env(dir)), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' })
})

t.test('a start that fails validation after generating the secrets leaves complete files that the next start reuses', async (t) => {
  const dir = t.testdir()
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir, LOG_LEVEL: 'loud' }), configError('LOG_LEVEL'))
  // The secrets were generated before LOG_LEVEL was checked; they are complete and reused.
  const c = loadConfig([], { SERVICE_DATA_DIR: dir })
  t.match(c.bootstrapSecret, /^[0-9a-f]{64}$/)
  t.equal(c.bootstrapSecret, readFileSync(join(dir, 'bootstrap-secret'), 'utf8').trim())
})

t.test('a pre-existing secret file with another mode keeps its content (no silent regeneration)', async (t) => {
  const dir = t.testdir()
  const file = join(dir, 'master-key')
  writeFileSync(file, KEY + '\n', { mode: 0o644 })
  const c = loadConfig([], { SERVICE_DATA_DIR: dir, SERVICE_BOOTSTRAP_SECRET: SECRET })
  t.equal(c.masterKey.toString('base64'), KEY)
  t.equal(c.masterKeyFile, file)
})

t.test('user JWT settings: SERVICE_JWT_SECRET (32+ characters), SERVICE_JWKS_URL (http/https), SERVICE_AUTH_MODE (jwt or open)', async (t) => {
  const dir = t.testdir()
  const base = { SERVICE_DATA_DIR: dir }
  const c = loadConfig([], { ...base, SERVICE_JWT_SECRET: 's'.repeat(32), SERVICE_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json', SERVICE_AUTH_MODE: ' OPEN ' })
  t.equal(c.jwtSecret, 's'.repeat(32))
  t.equal(c.jwksUrl, 'https://idp.example.com/.well-known/jwks.json')
  t.equal(c.authMode, 'open', 'trimmed, any case')
  t.equal(loadConfig([], { ...base, SERVICE_JWT_SECRET: '' }).jwtSecret, null, 'empty: none')
  t.throws(() => loadConfig([], { ...base, SERVICE_JWT_SECRET: 'short' }), /SERVICE_JWT_SECRET: must be at least 32 characters/)
  t.throws(() => loadConfig([], { ...base, SERVICE_JWKS_URL: 'not a url' }), /SERVICE_JWKS_URL: must be a URL/)
  t.throws(() => loadConfig([], { ...base, SERVICE_JWKS_URL: 'ftp://idp.example.com/jwks' }), /SERVICE_JWKS_URL: must be an http\(s\) URL/)
  t.throws(() => loadConfig([], { ...base, SERVICE_AUTH_MODE: 'none' }), /SERVICE_AUTH_MODE: must be jwt or open/)
  t.equal(loadConfig(['--auth-mode', 'open'], base).authMode, 'open', 'as a flag')
})

