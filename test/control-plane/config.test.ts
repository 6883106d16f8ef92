import t from 'tap'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, envName, loadConfig, optionsHelp } from '../../control-plane/config.js'

const KEY = Buffer.alloc(32, 5).toString('base64')

t.test('defaults: port 8080 on 127.0.0.1, SQLite in the data folder, generated secrets kept with mode 0600', async (t) => {
  const dir = t.testdir()
  const c = loadConfig([], { SERVICE_DATA_DIR: dir })
  t.match(c, { port: 8080, host: '127.0.0.1', dataDir: dir, apiName: 'service', heartbeatIntervalSeconds: 60, logLevel: 'info', agentRequestsPerSecond: 600, registrationsPerMinute: 50, maxEventsPerBatch: 1000, bodyLimit: 1048576 })
  t.equal(c.databaseUrl, `sqlite:${join(dir, 'agentgov.db')}`)
  t.equal(c.bootstrapSecretFile, join(dir, 'bootstrap-secret'))
  t.equal(statSync(join(dir, 'bootstrap-secret')).mode & 0o777, 0o600)
  t.equal(statSync(join(dir, 'master-key')).mode & 0o777, 0o600)
  t.equal(c.masterKey.length, 32)
  const again = loadConfig([], { SERVICE_DATA_DIR: dir })
  t.equal(again.bootstrapSecret, c.bootstrapSecret, 'the generated secret is reused')
  t.same(again.masterKey, c.masterKey)
  t.ok(Object.isFrozen(c))
})

t.test('every variable and its flag; the flag wins', async (t) => {
  const dir = t.testdir()
  const env = {
    PORT: '9000', HOST: '0.0.0.0', SERVICE_DATA_DIR: dir, SERVICE_DATABASE_URL: 'sqlite:rel.db', SERVICE_BOOTSTRAP_SECRET: 's'.repeat(20),
    SERVICE_MASTER_KEY: KEY, SERVICE_HEARTBEAT_INTERVAL_SECONDS: '30', LOG_LEVEL: 'warn', SERVICE_RATE_LIMIT_RPS: '7', SERVICE_REGISTER_RATE_PER_MINUTE: '3'
  }
  const c = loadConfig([], env)
  t.match(c, { port: 9000, host: '0.0.0.0', heartbeatIntervalSeconds: 30, logLevel: 'warn', agentRequestsPerSecond: 7, registrationsPerMinute: 3, bootstrapSecretFile: null, masterKeyFile: null })
  t.match(c.databaseUrl, /^sqlite:\/.*rel\.db$/, 'a relative SQLite path is made absolute')
  const f = loadConfig(['--port', '0', '--log-level', 'debug', '--heartbeat-interval', '5'], env)
  t.match(f, { port: 0, logLevel: 'debug', heartbeatIntervalSeconds: 5 })
  t.equal(loadConfig([], { ...env, SERVICE_DATABASE_URL: 'postgres://u@h/db' }).databaseUrl, 'postgres://u@h/db')
  t.equal(loadConfig([], { ...env, SERVICE_DATABASE_URL: 'sqlite::memory:' }).databaseUrl, 'sqlite::memory:')
  t.match(optionsHelp(), /--data-dir\s+SERVICE_DATA_DIR/)
})

t.test('invalid values stop with a ConfigError naming the variable or flag', async (t) => {
  const dir = t.testdir()
  const base = { SERVICE_DATA_DIR: dir, SERVICE_BOOTSTRAP_SECRET: 's'.repeat(20), SERVICE_MASTER_KEY: KEY }
  const cases: Array<[Record<string, string>, string[], RegExp]> = [
    [{ PORT: 'abc' }, [], /^PORT: must be an integer/],
    [{ PORT: '70000' }, [], /^PORT: must be between 0 and 65535/],
    [{}, ['--port', '1.5'], /^--port: must be an integer/],
    [{ LOG_LEVEL: 'loud' }, [], /^LOG_LEVEL: must be one of/],
    [{ SERVICE_MASTER_KEY: Buffer.alloc(16).toString('base64') }, [], /^SERVICE_MASTER_KEY: must be 32 bytes/],
    [{ SERVICE_BOOTSTRAP_SECRET: 'short' }, [], /^SERVICE_BOOTSTRAP_SECRET: must be at least 16/],
    [{ SERVICE_API_NAME: 'Bad Name' }, [], /^SERVICE_API_NAME: must match/],
    [{ SERVICE_DATABASE_URL: 'mysql://x' }, [], /^SERVICE_DATABASE_URL: must start with sqlite: or postgres/],
    [{ SERVICE_HEARTBEAT_INTERVAL_SECONDS: '0' }, [], /^SERVICE_HEARTBEAT_INTERVAL_SECONDS: must be between 1/],
    [{ HOST: ' ' }, [], /^HOST: must not be empty/]
  ]
  for (const [env, argv, message] of cases) {
    const err = t.throws(() => loadConfig(argv, { ...base, ...env })) as ConfigError
    t.type(err, ConfigError)
    t.match(err.message, message, message.source)
  }
  t.throws(() => loadConfig(['--bogus', '1'], base), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' })
})

t.test('createSecrets false (admin commands) refuses when the generated files do not exist', async (t) => {
  const dir = t.testdir()
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir }, { createSecrets: false }), /SERVICE_BOOTSTRAP_SECRET: is not set and .*bootstrap-secret does not exist/)
  t.throws(() => loadConfig([], { SERVICE_DATA_DIR: dir, SERVICE_BOOTSTRAP_SECRET: 's'.repeat(20) }, { createSecrets: false }), /SERVICE_MASTER_KEY: is not set/)
})

t.test('envName: SERVICE_ variables follow the API name', async (t) => {
  t.equal(envName('SERVICE_BOOTSTRAP_SECRET', 'service'), 'SERVICE_BOOTSTRAP_SECRET')
  t.equal(envName('SERVICE_BOOTSTRAP_SECRET', 'my-api'), 'MY_API_BOOTSTRAP_SECRET')
  t.equal(envName('PORT', 'acme'), 'PORT')
})
