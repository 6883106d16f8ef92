/**
 * The sidecar's configuration (sidecar/config.ts): defaults, every variable and flag, the API-name
 * renaming, and a clear error naming the variable for each bad value (never echoing a key).
 */
import t, { type Test } from 'tap'
import { resolve } from 'node:path'
import { ConfigError } from '../../shared/config-env.js'
import { SIDECAR_DEFAULTS, SIDECAR_OPTIONS, loadSidecarConfig, sidecarOptionsHelp } from '../../sidecar/config.js'

const CP = { SERVICE_CONTROL_PLANE_URL: 'http://127.0.0.1:8080' }
const V1_KEY = 'sk_agent_' + 'A'.repeat(43)
const LEGACY_KEY = 'zk_live_' + 'b'.repeat(43)

function refused (t: Test, argv: string[], env: Record<string, string>, variable: string, message: RegExp): void {
  const err = t.throws(() => loadSidecarConfig(argv, env)) as ConfigError
  t.type(err, ConfigError)
  t.equal(err.variable, variable, `names ${variable}`)
  t.match(err.message, message)
}

t.test('defaults: only the control plane URL is required', async (t) => {
  const c = loadSidecarConfig([], CP)
  t.strictSame(c, {
    port: 8181,
    host: '127.0.0.1',
    controlPlaneUrl: 'http://127.0.0.1:8080',
    agentKey: null,
    agentId: null,
    failOpen: true,
    dataDir: resolve('./data/sidecar'),
    apiName: 'service',
    logLevel: 'info',
    connectTimeoutMs: SIDECAR_DEFAULTS.connectTimeoutMs,
    requestTimeoutMs: SIDECAR_DEFAULTS.requestTimeoutMs,
    breakerFailures: 5,
    breakerOpenMs: 10_000,
    spoolMaxEvents: 100_000,
    spoolMaxBytes: 256 * 1024 * 1024
  })
  t.ok(Object.isFrozen(c))
})

t.test('every variable is read, and every flag wins over its variable', async (t) => {
  const env = {
    PORT: '9000', HOST: '0.0.0.0', SERVICE_CONTROL_PLANE_URL: 'https://cp.example.com/', SERVICE_AGENT_KEY: ` ${V1_KEY} `,
    SERVICE_FAIL_OPEN: 'false', SERVICE_SIDECAR_DATA_DIR: '/tmp/sc', LOG_LEVEL: 'warn', SERVICE_CONNECT_TIMEOUT_MS: '100',
    SERVICE_REQUEST_TIMEOUT_MS: '200', SERVICE_BREAKER_FAILURES: '2', SERVICE_BREAKER_OPEN_SECONDS: '3',
    SERVICE_SPOOL_MAX_EVENTS: '10', SERVICE_SPOOL_MAX_BYTES: '4096'
  }
  const c = loadSidecarConfig([], env)
  t.equal(c.port, 9000)
  t.equal(c.host, '0.0.0.0')
  t.equal(c.controlPlaneUrl, 'https://cp.example.com', 'a trailing slash is dropped')
  t.equal(c.agentKey, V1_KEY, 'trimmed')
  t.equal(c.failOpen, false)
  t.equal(c.dataDir, '/tmp/sc')
  t.equal(c.logLevel, 'warn')
  t.strictSame([c.connectTimeoutMs, c.requestTimeoutMs, c.breakerFailures, c.breakerOpenMs, c.spoolMaxEvents, c.spoolMaxBytes], [100, 200, 2, 3000, 10, 4096])
  const flags = loadSidecarConfig(['--port', '0', '--fail-open', 'yes', '--agent-key', LEGACY_KEY, '--control-plane-url', 'http://10.0.0.1:1'], env)
  t.equal(flags.port, 0)
  t.equal(flags.failOpen, true)
  t.equal(flags.agentKey, LEGACY_KEY, 'a legacy agent key is accepted too')
  t.equal(flags.controlPlaneUrl, 'http://10.0.0.1:1')
  t.strictSame(Object.keys(SIDECAR_OPTIONS).filter((k) => !sidecarOptionsHelp().includes(`--${k}`)), [], 'every option has a help line')
})

t.test('SERVICE_API_NAME renames the SERVICE_ variables; the SERVICE_ name is the fallback', async (t) => {
  const c = loadSidecarConfig([], { SERVICE_API_NAME: 'acme', ACME_CONTROL_PLANE_URL: 'http://acme:1', SERVICE_FAIL_OPEN: 'false', ACME_FAIL_OPEN: 'true' })
  t.equal(c.apiName, 'acme')
  t.equal(c.controlPlaneUrl, 'http://acme:1')
  t.equal(c.failOpen, true, 'ACME_ wins over SERVICE_')
  t.equal(loadSidecarConfig([], { SERVICE_API_NAME: 'acme', ...CP }).controlPlaneUrl, 'http://127.0.0.1:8080', 'fallback')
})

t.test('bad values stop start-up with the variable named', async (t) => {
  refused(t, [], {}, 'SERVICE_CONTROL_PLANE_URL', /is required/)
  refused(t, [], { SERVICE_CONTROL_PLANE_URL: '  ' }, 'SERVICE_CONTROL_PLANE_URL', /is required/)
  refused(t, [], { SERVICE_CONTROL_PLANE_URL: 'cp:8080' }, 'SERVICE_CONTROL_PLANE_URL', /http or https/)
  refused(t, [], { SERVICE_CONTROL_PLANE_URL: 'not a url' }, 'SERVICE_CONTROL_PLANE_URL', /must be a URL/)
  refused(t, [], { SERVICE_CONTROL_PLANE_URL: 'http://cp/?x=1' }, 'SERVICE_CONTROL_PLANE_URL', /query or a fragment/)
  refused(t, ['--control-plane-url', 'ftp://x'], CP, '--control-plane-url', /http or https/)
  refused(t, [], { ...CP, PORT: '70000' }, 'PORT', /between 0 and 65535/)
  refused(t, [], { ...CP, PORT: 'eighty' }, 'PORT', /must be an integer/)
  refused(t, [], { ...CP, HOST: ' ' }, 'HOST', /must not be empty/)
  refused(t, [], { ...CP, SERVICE_FAIL_OPEN: 'maybe' }, 'SERVICE_FAIL_OPEN', /true or false/)
  refused(t, [], { ...CP, LOG_LEVEL: 'loud' }, 'LOG_LEVEL', /one of fatal/)
  refused(t, [], { ...CP, SERVICE_BREAKER_FAILURES: '0' }, 'SERVICE_BREAKER_FAILURES', /between 1 and/)
  refused(t, [], { ...CP, SERVICE_SPOOL_MAX_BYTES: '10' }, 'SERVICE_SPOOL_MAX_BYTES', /between 1024 and/)
  refused(t, [], { ...CP, SERVICE_API_NAME: 'Bad Name' }, 'SERVICE_API_NAME', /must match/)
  t.throws(() => loadSidecarConfig(['--no-such-flag', 'x'], CP), /no-such-flag/, 'an unknown flag')
})

t.test('an agent key that is not an agent key is refused, and the message never repeats it', async (t) => {
  for (const bad of ['tk_live_' + 'c'.repeat(43), 'sk_agent_short', 'password123']) {
    const err = t.throws(() => loadSidecarConfig([], { ...CP, SERVICE_AGENT_KEY: bad })) as ConfigError
    t.equal(err.variable, 'SERVICE_AGENT_KEY')
    t.notMatch(err.message, bad, 'the value is not in the message')
  }
})

t.test('loadSidecarConfig: SERVICE_AGENT_ID names the injected key\'s agent; it is checked and needs the key', async (t) => {
  const base = { SERVICE_CONTROL_PLANE_URL: 'http://127.0.0.1:8080' }
  const key = 'sk_agent_' + 'a'.repeat(43)
  t.equal(loadSidecarConfig([], base).agentId, null, 'absent: null')
  t.equal(loadSidecarConfig([], { ...base, SERVICE_AGENT_KEY: key, SERVICE_AGENT_ID: ' support-bot ' }).agentId, 'support-bot', 'trimmed')
  t.equal(loadSidecarConfig(['--agent-key', key, '--agent-id', 'bot-2'], base).agentId, 'bot-2', 'as flags')
  t.throws(() => loadSidecarConfig([], { ...base, SERVICE_AGENT_ID: 'support-bot' }), /SERVICE_AGENT_ID.*SERVICE_AGENT_KEY/, 'without the key')
  t.throws(() => loadSidecarConfig([], { ...base, SERVICE_AGENT_KEY: key, SERVICE_AGENT_ID: 'Not A Slug' }), /SERVICE_AGENT_ID: must be an agent id/, 'not a slug')
})

