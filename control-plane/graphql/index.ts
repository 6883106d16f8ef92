/**
 * POST /gql/<api name>/: the management API for the portal (mercurius). Every request is
 * authenticated before GraphQL runs (a missing, bad or expired token is 401 with the error body of
 * the REST API); the caller's tenant and role then scope every resolver. Query depth is limited;
 * GraphiQL is served (GET /graphiql) in open mode only, which is for local development.
 * Subscriptions (eventAdded) run over a WebSocket on the same path; its connection_init payload
 * carries the token as `authorization`.
 */
import type { FastifyInstance } from 'fastify'
import mercurius from 'mercurius'
import type { Services } from '../services.js'
import { credentialsOf, type User } from './auth.js'
import { SCHEMA } from './schema.js'
import { costLimit } from './cost.js'
import { eventNode, eventsTopic, loaders, resolvers, type GqlContext } from './resolvers.js'
import type { EventRow } from '../store/store.js'

/** Deepest selection a query may make (the schema's own nesting is 4: connection, edges, node, field). */
export const MAX_QUERY_DEPTH = 8
/** The most a query may cost (see cost.ts): a full page of 200 items of about 25 fields each. */
export const MAX_QUERY_COST = 5_000

export async function graphqlRoutes (app: FastifyInstance, { services }: { services: Services }): Promise<void> {
  const { config } = services
  const auth = services.userAuth
  const path = `/gql/${config.apiName}/`
  app.addHook('preHandler', async (req) => {
    if (req.routeOptions.url !== path) return
    // A WebSocket (subscriptions) authenticates in its connection_init message: browsers cannot
    // set headers on one.
    if (req.headers.upgrade?.toLowerCase() === 'websocket') return
    req.user = await auth.user(credentialsOf(req.headers))
  })
  await app.register(mercurius, {
    schema: SCHEMA,
    resolvers: resolvers({ store: services.store, directory: services.directory, agents: services.agents, box: services.box }) as never,
    path,
    graphiql: config.authMode === 'open',
    loaders: loaders({ store: services.store }) as never,
    queryDepth: MAX_QUERY_DEPTH,
    validationRules: [costLimit(MAX_QUERY_COST)],
    context: (req): GqlContext => ({ user: req.user as User }),
    subscription: {
      // connection_init's payload carries the token: { authorization: 'Bearer <jwt>' }.
      onConnect: async ({ payload }) => {
        const authorization = (payload as { authorization?: unknown } | null | undefined)?.authorization
        try {
          return { user: await auth.user(typeof authorization === 'string' ? authorization : undefined) }
        } catch {
          return false
        }
      }
    }
  })
  const publish = (events: EventRow[]): void => {
    for (const e of events) void app.graphql.pubsub.publish({ topic: eventsTopic(e.tenant_id), payload: { eventAdded: eventNode(e) } })
  }
  services.committed.on('events', publish)
  app.addHook('onClose', async () => { services.committed.off('events', publish) })
}
