/**
 * `agentgov sidecar`: read the config, build the sidecar, listen; on SIGTERM or SIGINT stop accepting,
 * finish the flush under way (the spool keeps the rest) and exit 0.
 */
import { ConfigError } from '../shared/config-env.js'
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
  let app: Awaited<ReturnType<typeof buildSidecar>>
  try {
    const config = loadSidecarConfig(argv, process.env)
    app = await buildSidecar(config)
    const address = await app.listen({ port: config.port, host: config.host })
    out.write(`agentgov sidecar listening on ${address}\n`)
    out.write(`  control plane: ${config.controlPlaneUrl}   data: ${config.dataDir}   fail open: ${config.failOpen}\n`)
  } catch (e) {
    if (e instanceof ConfigError || (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      err.write(`agentgov sidecar: ${(e as Error).message}\n`)
      return 2
    }
    err.write(`agentgov sidecar: cannot start: ${(e as Error).message}\n`)
    return 1
  }
  return await new Promise<number>((resolve) => {
    let closing = false
    const stop = (signal: string): void => {
      if (closing) return
      closing = true
      app.log.info({ signal }, 'shutting down')
      app.close().then(() => resolve(0), (e: unknown) => {
        err.write(`agentgov sidecar: shutdown failed: ${(e as Error).message}\n`)
        resolve(1)
      })
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
}
