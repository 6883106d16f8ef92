/** The services the routes use, built once per app. */
import type { ControlPlaneConfig } from './config.js'
import type { Store } from './store/store.js'
import type { Directory } from './policies/directory.js'
import type { IngestWriter } from './events/ingest-writer.js'
import type { Authenticator } from './auth/agent-auth.js'
import type { AgentService } from './agents/service.js'
import type { Metrics } from './health/metrics.js'
import type { HealthMonitor } from './health/monitor.js'
import type { SecretBox } from '../shared/secret-box.js'
import type { Logger } from '../shared/logging.js'
import type { EventEmitter } from 'node:events'
import type { UserAuth } from './graphql/auth.js'
import type { ModelCatalog } from './assistant/models.js'
import type { FastLane } from '../shared/fast-lane.js'

export interface Services {
  config: ControlPlaneConfig
  store: Store
  directory: Directory
  ingest: IngestWriter
  auth: Authenticator
  agents: AgentService
  metrics: Metrics
  monitor: HealthMonitor
  box: SecretBox
  /** The process logger (fastify's app.log and req.log are silent below debug). */
  log: Logger
  /** Emits 'events' (EventRow[]) after each ingest commit. */
  committed: EventEmitter
  /** Verifies users of the management surfaces (GraphQL, settings, assistant). */
  userAuth: UserAuth
  /** The assistant's model lists per provider (live lists cached for an hour). */
  models: ModelCatalog
  /** Legacy: the config hash last served to each agent (by uuid), for `config_updated`. */
  legacyServed: Map<string, string>
  /** The fast lane of the hot route (v1 /evaluate), beside fastify (shared/fast-lane.ts). */
  lane: FastLane
}

export interface RouteOptions {
  services: Services
}
