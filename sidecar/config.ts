/**
 * The sidecar's configuration (issue 4): environment variables, each also a flag of
 * `agentgov sidecar` (the flag wins), validated once into a frozen object; a bad value stops the
 * process with a message that names the variable. Defaults are in one place, with their units.
 */
import { resolve } from 'node:path'
import { ConfigError, boolean, integer, logLevel, optionsHelp as helpOf, readOptions, type LogLevel, type OptionSpec } from '../shared/config-env.js'
import { keyKind } from '../shared/keys.js'
import { AGENT_ID_PATTERN } from '../shared/contracts/common.js'

export interface SidecarConfig {
  port: number
  host: string
  /** Base URL of the control plane's API, e.g. http://cp:8080 (its /api/<name> paths are added). */
  controlPlaneUrl: string
  /** An already registered agent's key (v1 or legacy), for pods where operators inject it; else null. */
  agentKey: string | null
  /** The agent id of agentKey, so that its config is fetched at start even before any was saved; else null. */
  agentId: string | null
  /** With no config and an unreachable control plane: allow (true) or block (false) with the cause. */
  failOpen: boolean
  /** Folder of the event spool and the last good configs. */
  dataDir: string
  apiName: string
  logLevel: LogLevel
  connectTimeoutMs: number
  requestTimeoutMs: number
  /** Consecutive upstream failures that open the circuit breaker, and how long it stays open. */
  breakerFailures: number
  breakerOpenMs: number
  spoolMaxEvents: number
  spoolMaxBytes: number
}

export const SIDECAR_DEFAULTS = {
  port: 8181,
  host: '127.0.0.1',
  failOpen: true,
  dataDir: './data/sidecar',
  connectTimeoutMs: 2_000, // 2 s
  requestTimeoutMs: 5_000, // 5 s
  breakerFailures: 5,
  breakerOpenMs: 10_000, // 10 s
  spoolMaxEvents: 100_000,
  spoolMaxBytes: 256 * 1024 * 1024 // 256 MiB
} as const

export const SIDECAR_OPTIONS = {
  port: { env: 'PORT', help: `port to listen on (default ${SIDECAR_DEFAULTS.port}; 0 picks a free one)` },
  host: { env: 'HOST', help: `address to listen on (default ${SIDECAR_DEFAULTS.host})` },
  'control-plane-url': { env: 'SERVICE_CONTROL_PLANE_URL', help: 'the control plane, e.g. http://control-plane:8080 (required)' },
  'agent-key': { env: 'SERVICE_AGENT_KEY', help: 'an already registered agent\'s key; its config is fetched at start (optional)' },
  'agent-id': { env: 'SERVICE_AGENT_ID', help: 'the agent id of SERVICE_AGENT_KEY: its config is fetched at start even on a first start (optional)' },
  'fail-open': { env: 'SERVICE_FAIL_OPEN', help: 'with no config and no control plane: true allows, false blocks (default true)' },
  'data-dir': { env: 'SERVICE_SIDECAR_DATA_DIR', help: `event spool and last good configs (default ${SIDECAR_DEFAULTS.dataDir})` },
  'api-name': { env: 'SERVICE_API_NAME', help: 'renames /api/service, X-Service-* headers and the SERVICE_ env prefix (default service)' },
  'log-level': { env: 'LOG_LEVEL', help: 'fatal, error, warn, info, debug, trace or silent (default info)' },
  'connect-timeout-ms': { env: 'SERVICE_CONNECT_TIMEOUT_MS', help: `control-plane connect timeout, ms (default ${SIDECAR_DEFAULTS.connectTimeoutMs})` },
  'request-timeout-ms': { env: 'SERVICE_REQUEST_TIMEOUT_MS', help: `control-plane call deadline, ms (default ${SIDECAR_DEFAULTS.requestTimeoutMs})` },
  'breaker-failures': { env: 'SERVICE_BREAKER_FAILURES', help: `consecutive failures that open the circuit breaker (default ${SIDECAR_DEFAULTS.breakerFailures})` },
  'breaker-open-seconds': { env: 'SERVICE_BREAKER_OPEN_SECONDS', help: `seconds the breaker stays open before a probe (default ${SIDECAR_DEFAULTS.breakerOpenMs / 1000})` },
  'spool-max-events': { env: 'SERVICE_SPOOL_MAX_EVENTS', help: `events the spool holds; the oldest are dropped past it (default ${SIDECAR_DEFAULTS.spoolMaxEvents})` },
  'spool-max-bytes': { env: 'SERVICE_SPOOL_MAX_BYTES', help: `bytes of events the spool holds (default ${SIDECAR_DEFAULTS.spoolMaxBytes})` }
} as const satisfies Record<string, OptionSpec>

function controlPlaneUrl (variable: string, raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') throw new ConfigError(variable, 'is required: the URL of the control plane, e.g. http://127.0.0.1:8080')
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new ConfigError(variable, `must be a URL, got "${raw}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(variable, `must be an http or https URL, got "${raw}"`)
  if (url.search !== '' || url.hash !== '') throw new ConfigError(variable, 'must not have a query or a fragment')
  return url.href.replace(/\/$/, '')
}

function agentKey (variable: string, raw: string | undefined): string | null {
  if (raw === undefined) return null
  const key = raw.trim()
  const kind = keyKind(key)
  // The message never repeats the value: it is a secret.
  if (kind !== 'agentV1' && kind !== 'agentLegacy') throw new ConfigError(variable, 'must be an agent key (sk_agent_... or zk_live_...)')
  return key
}

function agentIdOf (variable: string, raw: string | undefined, haveKey: boolean, keyVariable: string): string | null {
  if (raw === undefined) return null
  const id = raw.trim()
  if (!haveKey) throw new ConfigError(variable, `is the agent id of ${keyVariable}, which is not set`)
  if (!new RegExp(AGENT_ID_PATTERN).test(id)) throw new ConfigError(variable, `must be an agent id (lower-case letters, digits, _ and -, at most 100), got "${raw}"`)
  return id
}

export function loadSidecarConfig (argv: string[], env: NodeJS.ProcessEnv = process.env): SidecarConfig {
  const { apiName, get } = readOptions(SIDECAR_OPTIONS, argv, env)
  const int = (name: keyof typeof SIDECAR_OPTIONS, dflt: number, min: number, max: number): number => {
    const o = get(name)
    return o.value === undefined ? dflt : integer(o.variable, o.value, min, max)
  }
  const url = get('control-plane-url')
  const key = get('agent-key')
  const id = get('agent-id')
  const failOpen = get('fail-open')
  const host = get('host')
  const hostValue = host.value ?? SIDECAR_DEFAULTS.host
  if (hostValue.trim() === '') throw new ConfigError(host.variable, 'must not be empty')
  const level = get('log-level')
  return Object.freeze({
    port: int('port', SIDECAR_DEFAULTS.port, 0, 65535),
    host: hostValue,
    controlPlaneUrl: controlPlaneUrl(url.variable, url.value),
    agentKey: agentKey(key.variable, key.value),
    agentId: agentIdOf(id.variable, id.value, key.value !== undefined, key.variable),
    failOpen: failOpen.value === undefined ? SIDECAR_DEFAULTS.failOpen : boolean(failOpen.variable, failOpen.value),
    dataDir: resolve(get('data-dir').value ?? SIDECAR_DEFAULTS.dataDir),
    apiName,
    logLevel: logLevel(level.variable, level.value),
    connectTimeoutMs: int('connect-timeout-ms', SIDECAR_DEFAULTS.connectTimeoutMs, 1, 600_000),
    requestTimeoutMs: int('request-timeout-ms', SIDECAR_DEFAULTS.requestTimeoutMs, 1, 600_000),
    breakerFailures: int('breaker-failures', SIDECAR_DEFAULTS.breakerFailures, 1, 1_000),
    breakerOpenMs: int('breaker-open-seconds', SIDECAR_DEFAULTS.breakerOpenMs / 1000, 1, 86_400) * 1000,
    spoolMaxEvents: int('spool-max-events', SIDECAR_DEFAULTS.spoolMaxEvents, 1, 100_000_000),
    spoolMaxBytes: int('spool-max-bytes', SIDECAR_DEFAULTS.spoolMaxBytes, 1024, Number.MAX_SAFE_INTEGER)
  })
}

export function sidecarOptionsHelp (): string {
  return helpOf(SIDECAR_OPTIONS)
}
