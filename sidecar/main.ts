/**
 * `agentgov sidecar`: read the config, build the sidecar, listen; on SIGTERM or SIGINT stop accepting,
 * finish the flush under way (the spool keeps the rest) and exit 0.
 */
import { serveUntilSignal } from '../shared/serve.js'
import { loadSidecarConfig, sidecarOptionsHelp } from './config.js'
import { buildSidecar } from './app.js'

export const SIDECAR_HELP = `Usage: agentgov sidecar [options]

Starts the sidecar beside an agent: the agent-facing v1 REST surface on localhost, /evaluate answered
from the agent's cached policies, events spooled to disk before the 202 and sent on to the control
plane, the last good config kept on disk. Every option is also an environment variable; the flag wins.

${sidecarOptionsHelp()}
`

export async function sidecarCommand (argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out.write(SIDECAR_HELP)
    return 0
  }
  return await serveUntilSignal('sidecar', async () => {
    const config = loadSidecarConfig(argv, process.env)
    const app = await buildSidecar(config)
    const address = await app.listen({ port: config.port, host: config.host })
    out.write(`agentgov sidecar listening on ${address}\n`)
    out.write(`  control plane: ${config.controlPlaneUrl}   data: ${config.dataDir}   fail open: ${config.failOpen}\n`)
    return app
  }, err, 'shutting down')
}
