/**
 * GET /api/service/v1/config/{agent_id}/watch: a server-sent event stream of the agent's effective
 * config, for sidecars (issue 4). It opens with one `config` event holding what GET /config answers,
 * sends another each time that config changes (its `config_hash` differs from the last one sent),
 * and ends with a `revoked` event when the agent's key stops working (deregistered, suspended). A
 * comment line every `keepAliveMs` keeps proxies from closing an idle stream. Changes are seen as the
 * control plane sees them: at once for its own writes, within the change poll (250 ms) for others.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { AgentParams, type ConfigResponse } from '../../../shared/contracts/v1.js'
import { errorResponses } from '../../../shared/contracts/common.js'
import { agentHook, agentOf, ensureOwnAgent } from '../../auth/agent-auth.js'
import type { RouteOptions } from '../../services.js'
import type { AgentRecord } from '../../store/store.js'
import { configResponse, type Directory } from '../../policies/directory.js'

/** Comment lines that keep an idle stream open through proxies. */
export const WATCH_KEEP_ALIVE_MS = 15_000

const ACTIVE = new Set(['active', 'provisioning'])

async function configBody (directory: Directory, agent: AgentRecord): Promise<ConfigResponse> {
  return configResponse(agent, await directory.forAgent(agent))
}

/** The watch streams of one plugin scope: ended when the server closes (an open stream would hold the close forever). */
export function watchStreams (app: FastifyInstance): Set<() => void> {
  const open = new Set<() => void>()
  app.addHook('preClose', async () => {
    for (const end of [...open]) end()
  })
  return open
}

/**
 * Serves one config watch stream: `first` as the opening `config` event, then the config `render`s for
 * the agent after every change whose `config_hash` differs from the last one sent, and `revoked`
 * when the agent's key stops working. `sent` is told of each config sent.
 */
export function serveConfigWatch<T extends { config_hash: string }> (
  services: RouteOptions['services'],
  open: Set<() => void>,
  reply: FastifyReply,
  agent: AgentRecord,
  first: T,
  render: (agent: AgentRecord) => Promise<T>,
  sent: (agent: AgentRecord, body: T) => void = () => {}
): void {
  const { directory } = services
  reply.hijack()
  const res = reply.raw
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no'
  })
  const send = (event: string, data: unknown): void => { res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`) }
  let lastHash = first.config_hash
  send('config', first)
  sent(agent, first)

  let ended = false
  let checking = false
  let again = false
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), WATCH_KEEP_ALIVE_MS)
  keepAlive.unref()
  const end = (): void => {
    if (ended) return
    ended = true
    clearInterval(keepAlive)
    unsubscribe()
    open.delete(end)
    res.end()
  }
  // One check at a time; a change during a check runs one more check after it.
  const check = async (): Promise<void> => {
    if (checking) {
      again = true
      return
    }
    checking = true
    try {
      do {
        again = false
        const now = await directory.agentByKeyHash(agent.key_hash)
        if (ended) return
        if (now === undefined || !ACTIVE.has(now.status)) {
          send('revoked', { agent_id: agent.agent_id, reason: now === undefined ? 'the key no longer exists' : `agent is ${now.status}` })
          end()
          return
        }
        const body = await render(now)
        if (ended) return
        if (body.config_hash !== lastHash) {
          lastHash = body.config_hash
          send('config', body)
          sent(now, body)
        }
      } while (again)
    } catch (err) {
      services.log.error({ err }, 'config watch: cannot read the config')
    } finally {
      checking = false
    }
  }
  const unsubscribe = directory.subscribe(() => { void check() })
  open.add(end)
  res.on('close', end)
}

export async function configWatchRoute (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.addHook('onRequest', agentHook((req) => services.auth.v1Agent(req)))
  const { directory } = services
  const open = watchStreams(app)

  app.get('/config/:agent_id/watch', {
    schema: {
      tags: ['v1'],
      summary: 'Server-sent events: the agent\'s config now and after every change (for sidecars)',
      params: AgentParams,
      response: { ...errorResponses(401, 403, 429) }
    }
  }, async (req, reply: FastifyReply) => {
    const agent = agentOf(req)
    ensureOwnAgent(agent, (req.params as { agent_id: string }).agent_id)
    const render = async (a: AgentRecord): Promise<ConfigResponse> => await configBody(directory, a)
    serveConfigWatch(services, open, reply, agent, await render(agent), render)
  })
}
