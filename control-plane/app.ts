/**
 * buildApp(config, deps): the control plane's fastify instance with every service and route, not
 * listening (main.ts listens). `app.close()` stops the workers and drains the ingest writer.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { ControlPlaneConfig } from './config.js'
import type { Store } from './store/store.js'
import { SqliteStore } from './store/sqlite/index.js'
import { Directory } from './policies/directory.js'
import { IngestWriter } from './events/ingest-writer.js'
import { Authenticator, authNames } from './auth/agent-auth.js'
import { AgentService } from './agents/service.js'
import { Metrics } from './health/metrics.js'
import { HealthMonitor } from './health/monitor.js'
import { healthRoutes } from './health/routes.js'
import { v1Routes } from './routes/v1/index.js'
import { legacyRoutes } from './routes/legacy/index.js'
import { ErrorResponse } from '../shared/contracts/common.js'
import { ServiceError, codeForStatus, type ErrorBody } from '../shared/errors.js'
import { SecretBox } from '../shared/secret-box.js'
import type { Services } from './services.js'

/** JSON bodies nested deeper than this are refused (400) before anything walks them. */
export const MAX_BODY_DEPTH = 64

export interface AppDeps {
  store?: Store
  /** Pino options or false; default: the config's level with keys redacted. */
  logger?: boolean | Record<string, unknown>
}

export function openStore (config: ControlPlaneConfig): Store {
  if (config.databaseUrl.startsWith('sqlite:')) return new SqliteStore(config.databaseUrl.slice('sqlite:'.length))
  throw new Error('SERVICE_DATABASE_URL: PostgreSQL is not supported by this build yet; use sqlite:<path>')
}

/**
 * Deepest bracket nesting of a JSON text (brackets inside strings do not count); stops past `limit`.
 * Run on the raw body before parsing, so a hostile body costs one linear scan and nothing else.
 */
export function jsonTextDepth (text: string, limit: number): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 123 || c === 91) {
      if (++depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return max
}

function errorBody (err: FastifyError): ErrorBody {
  if (err instanceof ServiceError) return err.toBody()
  if (err.validation !== undefined) {
    const details = err.validation.map((v) => {
      const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty
      const path = missing === undefined ? v.instancePath : `${v.instancePath}/${missing}`
      const allowed = (v.params as { allowedValues?: unknown[] } | undefined)?.allowedValues
      const message = (v.message ?? 'is invalid') + (v.keyword === 'enum' && Array.isArray(allowed) ? `: ${allowed.join(', ')}` : '')
      return { path: path === '' ? '/' : path, message }
    })
    const where = err.validationContext ?? 'request'
    return { statusCode: 400, error: 'bad_request', message: `invalid ${where}: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, details }
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, error: 'payload_too_large', message: 'request body is larger than 1 MiB' }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, error: 'unsupported_media_type', message: 'send application/json' }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, error: 'bad_request', message: 'the JSON body is empty' }
  }
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) {
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) {
      return { statusCode: 400, error: 'bad_request', message: `malformed JSON: ${err.message}`, details: [{ path: '/', message: err.message }] }
    }
    return { statusCode: status, error: codeForStatus(status), message: err.message }
  }
  return { statusCode: 500, error: 'internal', message: 'internal error' }
}

export async function buildApp (config: ControlPlaneConfig, deps: AppDeps = {}): Promise<FastifyInstance> {
  const names = authNames(config.apiName)
  const debug = config.logLevel === 'debug' || config.logLevel === 'trace'
  const app = Fastify({
    logger: deps.logger ?? {
      level: config.logLevel,
      redact: ['req.headers.authorization', `req.headers["${names.keyHeader}"]`, `req.headers["${names.bootstrapHeader}"]`]
    },
    bodyLimit: config.bodyLimit,
    ajv: { customOptions: { coerceTypes: false, allErrors: false } },
    forceCloseConnections: 'idle',
    // One log line per request costs more than the decision itself; requests are counted and timed
    // in /metrics, failures are logged by the error handler, and LOG_LEVEL=debug logs each request.
    logController: new LogController({ disableRequestLogging: true }),
    // A child logger per request only when requests are logged (debug); otherwise the app's logger.
    ...(debug ? {} : { childLoggerFactory: (logger: FastifyBaseLogger) => logger }),
    return503OnClosing: true
  })
  const store = deps.store ?? openStore(config)
  const ownsStore = deps.store === undefined
  const directory = new Directory(store, { pollMs: config.changePollMs, heartbeatIntervalSeconds: config.heartbeatIntervalSeconds, log: app.log })
  const ingest = new IngestWriter(store, {
    windowMs: config.ingestWindowMs,
    onCommit: (events) => directory.recordCosts(events),
    onError: (err) => app.log.error({ err }, 'ingest commit failed')
  })
  const box = new SecretBox(config.masterKey)
  const metrics = new Metrics(() => ingest.status().queued)
  const services: Services = {
    config,
    store,
    directory,
    ingest,
    auth: new Authenticator(store, directory, names, config.bootstrapSecret, config),
    agents: new AgentService(store, directory, ingest, box, app.log),
    metrics,
    monitor: new HealthMonitor(store, { heartbeatIntervalSeconds: config.heartbeatIntervalSeconds, log: app.log }),
    box,
    legacyServed: new Map()
  }
  app.decorate('services', services)
  app.decorateRequest('agent', null)

  app.addSchema(ErrorResponse)
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const body = errorBody(err)
    if (body.statusCode >= 500) req.log.error({ err, reqId: req.id, method: req.method, url: req.url }, 'request failed')
    if (err instanceof ServiceError && err.retryAfter !== undefined) reply.header('retry-after', String(err.retryAfter))
    reply.code(body.statusCode).send(body)
  })
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ statusCode: 404, error: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0] ?? ''}` })
  })
  // An empty body is no body (POST /deregister takes none); any other body must be valid JSON.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  // Bodies are JSON only: anything else is 415, text/plain included.
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: config.bodyLimit }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text.trim() === '') {
      done(null, undefined)
      return
    }
    if (jsonTextDepth(text, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
      done(new ServiceError('bad_request', `JSON nested deeper than ${MAX_BODY_DEPTH} levels`), undefined)
      return
    }
    parseJson(req, text, done)
  })
  app.addHook('onResponse', (req, reply, done) => {
    const seconds = reply.elapsedTime / 1000
    metrics.observe(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, seconds)
    if (debug) req.log.debug({ method: req.method, url: req.url, statusCode: reply.statusCode, ms: reply.elapsedTime }, 'request completed')
    done()
  })

  const base = `/api/${config.apiName}`
  await app.register(swagger, {
    openapi: {
      info: { title: 'agentgov control plane', description: 'Agent-facing REST API (v1 and legacy)', version: '1' },
      components: {
        securitySchemes: {
          agentKey: { type: 'apiKey', in: 'header', name: `X-${config.apiName[0]?.toUpperCase() ?? ''}${config.apiName.slice(1)}-Key` },
          bearer: { type: 'http', scheme: 'bearer' }
        }
      }
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` }
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get(`${base}/v1/openapi.json`, { schema: { hide: true } }, async () => app.swagger())

  await app.register(healthRoutes, { services })
  await app.register(v1Routes, { services, prefix: `${base}/v1` })
  await app.register(legacyRoutes, { services, prefix: base })

  app.addHook('onReady', async () => {
    await directory.start()
    ingest.start()
    services.monitor.start()
  })
  app.addHook('onClose', async () => {
    services.monitor.stop()
    directory.stop()
    await ingest.stop()
    if (ownsStore) await store.close()
  })
  return app
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services
  }
}
