/** The versioned contract, `/api/<name>/v1` (interface.md section 4.1). */
import type { FastifyInstance } from 'fastify'
import type { RouteOptions } from '../../services.js'
import { registerRoute } from './register.js'
import { configRoute } from './config.js'
import { configWatchRoute } from './config-watch.js'
import { secretsRoutes } from './secrets.js'
import { evaluateRoute } from './evaluate.js'
import { eventsRoute } from './events.js'
import { heartbeatRoute } from './heartbeat.js'
import { deregisterRoute } from './deregister.js'
import { settingsRoutes } from './settings.js'
import { assistantRoutes } from './assistant.js'

export async function v1Routes (app: FastifyInstance, opts: RouteOptions): Promise<void> {
  for (const route of [registerRoute, configRoute, configWatchRoute, secretsRoutes, evaluateRoute, eventsRoute, heartbeatRoute, deregisterRoute, settingsRoutes, assistantRoutes]) {
    await app.register(route, { services: opts.services })
  }
}
