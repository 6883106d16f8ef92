/** Operations: /healthz (liveness), /readyz (database reachable, writer healthy), /metrics (Prometheus). */
import type { FastifyInstance } from 'fastify'
import type { RouteOptions } from '../services.js'

export async function healthRoutes (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const { store, ingest, metrics } = services
  app.get('/healthz', { schema: { tags: ['operations'], summary: 'Liveness', hide: true } }, async () => ({ status: 'ok' }))
  app.get('/readyz', { schema: { tags: ['operations'], summary: 'Readiness', hide: true } }, async (_req, reply) => {
    try {
      await store.configSeq()
    } catch {
      reply.code(503).header('retry-after', '1')
      return { status: 'not ready', reason: 'database unreachable' }
    }
    return { status: 'ready', store: store.kind, ingest: ingest.status() }
  })
  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    reply.header('content-type', metrics.contentType)
    return metrics.render()
  })
}
