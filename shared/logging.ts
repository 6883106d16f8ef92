/**
 * The process logger of both servers (pino), and what fastify is told about it. fastify gets the
 * logger only at LOG_LEVEL debug or trace, where it writes a line per request: with a logger,
 * fastify builds a child logger and listens for the end of every response, for lines that are not
 * written at info (measured: 3-5 µs a request, 10-20% of bare fastify's throughput). Below debug,
 * the servers log through this logger themselves: start-up, shutdown, failed requests (5xx),
 * background work.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import { LogController, type FastifyServerOptions } from 'fastify'

export type { Logger, LoggerOptions }

/**
 * The logger: pino at `level`, with the header values that carry keys and tokens redacted, writing to
 * standard output (or `destination`). `options` replaces these settings (tests); false gives a logger
 * that writes nothing.
 */
export function processLogger (level: string, redactHeaders: string[], options?: LoggerOptions | false, destination?: DestinationStream): Logger {
  if (options === false) return pino({ enabled: false })
  const settings = options ?? { level, redact: redactHeaders.map((h) => `req.headers["${h}"]`) }
  return destination === undefined ? pino(settings) : pino(settings, destination)
}

/** fastify's logging options for `log`: a line per request at debug and trace, no logger otherwise. */
export function fastifyLogging (log: Logger): Pick<FastifyServerOptions, 'logger' | 'loggerInstance' | 'logController'> {
  if (log.isLevelEnabled('debug')) return { loggerInstance: log, logController: new LogController({ disableRequestLogging: false }) }
  return { logger: false }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The process logger (app.log is fastify's, which is silent below debug). */
    logger: Logger
  }
}
