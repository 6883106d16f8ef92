/**
 * What `agentgov control-plane` and `agentgov sidecar` do alike around their server: start it (a bad
 * setting is exit 2 with its message, any other failure exit 1), then run until SIGTERM or SIGINT,
 * close it (which drains what it holds) and resolve with the exit code.
 */
import type { FastifyInstance } from 'fastify'
import { ConfigError } from './config-env.js'
import type {} from './logging.js' // app.logger

export async function serveUntilSignal (
  command: string,
  start: () => Promise<FastifyInstance>,
  err: NodeJS.WritableStream,
  closing: string
): Promise<number> {
  let app: FastifyInstance
  try {
    app = await start()
  } catch (e) {
    if (e instanceof ConfigError || (e as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      err.write(`agentgov ${command}: ${(e as Error).message}\n`)
      return 2
    }
    err.write(`agentgov ${command}: cannot start: ${(e as Error).message}\n`)
    return 1
  }
  return await new Promise<number>((resolve) => {
    let stopping = false
    const stop = (signal: string): void => {
      if (stopping) return
      stopping = true
      app.logger.info({ signal }, closing)
      app.close().then(() => resolve(0), (e: unknown) => {
        err.write(`agentgov ${command}: shutdown failed: ${(e as Error).message}\n`)
        resolve(1)
      })
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  })
}
