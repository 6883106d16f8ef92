/**
 * What the control plane's and the sidecar's configurations share: options that are both an
 * environment variable and a command-line flag (the flag wins), the SERVICE_API_NAME renaming of
 * SERVICE_ variables (decisions.md), and value parsers whose errors name the variable.
 */
import { parseArgs } from 'node:util'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = typeof LOG_LEVELS[number]

export class ConfigError extends Error {
  constructor (readonly variable: string, message: string) {
    super(`${variable}: ${message}`)
    this.name = 'ConfigError'
  }
}

/** One option: its environment variable and its help line. */
export interface OptionSpec {
  env: string
  help: string
}

export const API_NAME = /^[a-z][a-z0-9-]{0,31}$/

/** The name of a SERVICE_ variable under an API name: SERVICE_BOOTSTRAP_SECRET -> ACME_BOOTSTRAP_SECRET. */
export function envName (variable: string, apiName: string): string {
  return variable.startsWith('SERVICE_') && apiName !== 'service'
    ? `${apiName.toUpperCase().replace(/-/g, '_')}_${variable.slice('SERVICE_'.length)}`
    : variable
}

export function integer (variable: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(variable, `must be an integer, got "${raw}"`)
  const n = Number(raw)
  if (n < min || n > max) throw new ConfigError(variable, `must be between ${min} and ${max}, got ${n}`)
  return n
}

const TRUE = new Set(['true', '1', 'yes', 'on'])
const FALSE = new Set(['false', '0', 'no', 'off'])

export function boolean (variable: string, raw: string): boolean {
  const v = raw.trim().toLowerCase()
  if (TRUE.has(v)) return true
  if (FALSE.has(v)) return false
  throw new ConfigError(variable, `must be true or false, got "${raw}"`)
}

export function logLevel (variable: string, raw: string | undefined): LogLevel {
  const level = raw ?? 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigError(variable, `must be one of ${LOG_LEVELS.join(', ')}, got "${level}"`)
  }
  return level as LogLevel
}

/** A value and where it came from (`--flag` or the variable's name), for error messages. */
export interface OptionValue {
  variable: string
  value: string | undefined
}

/**
 * Parses `argv` against `options` and returns the API name and a reader: a flag wins, then the
 * variable under the API name (ACME_...), then the SERVICE_ variable; an empty variable is unset.
 */
export function readOptions<O extends Record<string, OptionSpec>> (options: O, argv: string[], env: NodeJS.ProcessEnv):
{ apiName: string, get: (name: keyof O & string) => OptionValue } {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(Object.keys(options).map((k) => [k, { type: 'string' as const }])),
    strict: true,
    allowPositionals: false
  })
  const flagged = (values as Record<string, string | undefined>)['api-name']
  const apiName = flagged ?? (env.SERVICE_API_NAME === '' ? undefined : env.SERVICE_API_NAME) ?? 'service'
  if (!API_NAME.test(apiName)) throw new ConfigError('SERVICE_API_NAME', `must match ${API_NAME.source}, got "${apiName}"`)
  const get = (name: keyof O & string): OptionValue => {
    const flag = (values as Record<string, string | undefined>)[name]
    const base = (options[name] as OptionSpec).env
    const variable = envName(base, apiName)
    if (flag !== undefined) return { variable: `--${name}`, value: flag }
    const own = env[variable]
    if (own !== undefined && own !== '') return { variable, value: own }
    const fallback = env[base]
    return { variable: base, value: fallback === '' ? undefined : fallback }
  }
  return { apiName, get }
}

/** The options as help lines: flag, variable, meaning. */
export function optionsHelp (options: Record<string, OptionSpec>): string {
  return Object.entries(options)
    .map(([flag, o]) => `  --${flag.padEnd(26)} ${o.env.padEnd(36)} ${o.help}`)
    .join('\n')
}
