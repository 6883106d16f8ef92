/**
 * buildApp(config, deps): the control plane's fastify instance with every service and route, not
 * listening (main.ts listens). `app.close()` stops the workers and drains the ingest writer.
 */
import { EventEmitter } from 'node:events'
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify'
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
import { graphqlRoutes } from './graphql/index.js'
import { UserAuth } from './graphql/auth.js'
import { ModelCatalog } from './assistant/models.js'
import { DEFAULT_TENANT_ID } from './agents/service.js'
import { ErrorResponse } from '../shared/contracts/common.js'
import { errorReply, renderError, useJsonBodies } from '../shared/http.js'
import { FastLane } from '../shared/fast-lane.js'
import { SecretBox } from '../shared/secret-box.js'
import type { Services } from './services.js'
import { fastifyLogging, processLogger, type LoggerOptions } from '../shared/logging.js'

export interface AppDeps {
  store?: Store
  /** Pino options, or false for no logs; default: the config's level with keys and tokens redacted. */
  logger?: false | LoggerOptions
}

export function openStore (config: ControlPlaneConfig): Store {
  if (config.databaseUrl.startsWith('sqlite:')) return new SqliteStore(config.databaseUrl.slice('sqlite:'.length))
  throw new Error('SERVICE_DATABASE_URL: PostgreSQL is not supported by this build yet; use sqlite:<path>')
}

export async function buildApp (config: ControlPlaneConfig, deps: AppDeps = {}): Promise<FastifyInstance> {
  const names = authNames(config.apiName)
  const log = processLogger(config.logLevel, ['authorization', names.keyHeader, names.bootstrapHeader], deps.logger)
  // POST /v1/evaluate of an agent whose key is cached is answered by the fast lane (shared/fast-lane.ts).
  const lane = new FastLane(!log.isLevelEnabled('debug'))
  const app = Fastify({
    ...fastifyLogging(log),
    serverFactory: lane.serverFactory,
    bodyLimit: config.bodyLimit,
    ajv: { customOptions: { coerceTypes: false, allErrors: false } },
    forceCloseConnections: 'idle',
    return503OnClosing: true
  })
  app.decorate('logger', log)
  const store = deps.store ?? openStore(config)
  const ownsStore = deps.store === undefined
  const directory = new Directory(store, { pollMs: config.changePollMs, heartbeatIntervalSeconds: config.heartbeatIntervalSeconds, log })
  /** Told of every batch of events once it is committed (the management API's live feed). */
  const committed = new EventEmitter()
  committed.setMaxListeners(0)
  const ingest = new IngestWriter(store, {
    windowMs: config.ingestWindowMs,
    onCommit: (events) => {
      directory.recordCosts(events)
      committed.emit('events', events)
    },
    onError: (err) => log.error({ err }, 'ingest commit failed')
  })
  const box = new SecretBox(config.masterKey)
  const metrics = new Metrics(() => ingest.status().queued)
  const services: Services = {
    config,
    store,
    directory,
    ingest,
    auth: new Authenticator(store, directory, names, config.bootstrapSecret, config),
    agents: new AgentService(store, directory, ingest, box, log),
    metrics,
    monitor: new HealthMonitor(store, { heartbeatIntervalSeconds: config.heartbeatIntervalSeconds, log }),
    box,
    log,
    committed,
    models: new ModelCatalog(Date.now, (provider, err) => log.warn({ provider, err: err.message }, 'assistant: the live model list failed; the registry answers')),
    userAuth: new UserAuth({ jwtSecret: config.jwtSecret, jwksUrl: config.jwksUrl, authMode: config.authMode, defaultTenantId: DEFAULT_TENANT_ID }),
    legacyServed: new Map(),
    lane
  }
  app.decorate('services', services)
  app.decorateRequest('agent', null)
  app.decorateRequest('user', null)

  app.addSchema(ErrorResponse)
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const { body, retryAfter } = errorReply(err)
    if (body.statusCode >= 500) log.error({ err, reqId: req.id, method: req.method, url: req.url }, 'request failed')
    if (retryAfter !== undefined) reply.header('retry-after', retryAfter)
    reply.code(body.statusCode).send(body)
  })
  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send({ statusCode: 404, error: 'not_found', message: `no route ${req.method} ${req.url.split('?')[0] ?? ''}` })
  })
  lane.attach(app, {
    bodyLimit: config.bodyLimit,
    parse: useJsonBodies(app, config.bodyLimit),
    renderError: (err) => renderError(err, log)
  })
  app.addHook('onResponse', (req, reply, done) => {
    const seconds = reply.elapsedTime / 1000
    metrics.observe(req.method, req.routeOptions.url ?? 'unmatched', reply.statusCode, seconds)
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
  await app.register(graphqlRoutes, { services })
  if (config.authMode === 'open') {
    log.warn('SERVICE_AUTH_MODE=open: requests to the management API without a token act as admin of the default tenant. For local development only: never expose this server.')
  }

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
