/**
 * `agentgov control-plane`: read the config, open the store, build the app, listen; on SIGTERM or
 * SIGINT stop accepting, drain (in-flight requests, queued events) and exit 0.
 */
import type { FastifyInstance } from 'fastify'
import { loadConfig, optionsHelp, type ControlPlaneConfig } from './config.js'
import { serveUntilSignal } from '../shared/serve.js'
import { buildApp } from './app.js'
import { DEFAULT_TENANT_ID } from './agents/service.js'
import { bootstrapToken } from '../shared/keys.js'

export const CONTROL_PLANE_HELP = `Usage: agentgov control-plane [options]

Starts the control plane (REST v1 and legacy, /docs, /metrics) on embedded SQLite by default.
Every option is also an environment variable; the flag wins.

${optionsHelp()}
`

export interface Running {
  app: FastifyInstance
  config: ControlPlaneConfig
  url: string
}

/** Starts a control plane; resolves once it listens. */
export async function startControlPlane (argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<Running> {
  const config = loadConfig(argv, env)
  const app = await buildApp(config)
  const { services } = app
  if (await services.store.getTenant(DEFAULT_TENANT_ID) === undefined) {
    await services.store.createTenant({ id: DEFAULT_TENANT_ID, name: 'default' })
  }
  const address = await app.listen({ port: config.port, host: config.host })
  const url = address.replace('[::1]', 'localhost')
  out.write(`agentgov control plane listening on ${url}\n`)
  out.write(`  API (v1):      ${url}/api/${config.apiName}/v1   docs: ${url}/docs\n`)
  out.write(`  database:      ${config.databaseUrl}\n`)
  if (config.bootstrapSecretFile !== null) out.write(`  bootstrap secret kept in ${config.bootstrapSecretFile}\n`)
  if (config.masterKeyFile !== null) out.write(`  master key kept in ${config.masterKeyFile}\n`)
  out.write(`  default tenant bootstrap token: ${bootstrapToken(config.bootstrapSecret, DEFAULT_TENANT_ID)}\n`)
  return { app, config, url }
}

export async function controlPlaneCommand (argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.write(CONTROL_PLANE_HELP)
    return 0
  }
  return await serveUntilSignal('control-plane', async () => (await startControlPlane(argv, process.env, out)).app, err,
    'shutting down: draining requests and queued events')
}
