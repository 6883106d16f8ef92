/**
 * The assistant (interface.md 4.3): POST /assistant/chat streams an answer as server-sent events,
 * `data: {"content": "..."}` and a blank line per chunk, ending with `data: [DONE]`; a failure
 * after the stream began is `data: {"error": "..."}` then `data: [DONE]`. GET /assistant/providers
 * lists the providers the assistant can use. Auth: the user JWT (header or session cookie), or open
 * mode; viewers may chat (the assistant only reads).
 * The answer comes from the provider asked for (or the first one enabled for the assistant: openai,
 * then anthropic, then OpenAI-compatible endpoints), streamed as it arrives; with none enabled, from
 * the built-in `local` provider (no model, no network: assistant/local.ts). A client that goes away
 * aborts the upstream call.
 */
import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../shared/contracts/common.js'
import { ServiceError } from '../../../shared/errors.js'
import { userHook } from '../../graphql/auth.js'
import type { RouteOptions } from '../../services.js'
import { chunksOf, localAnswer } from '../../assistant/local.js'
import { ANTHROPIC_BASE_URL, OPENAI_BASE_URL, streamChat } from '../../assistant/upstream.js'
import { systemContext } from '../../assistant/context.js'
import { modelSupportsTools } from '../../assistant/models.js'
import { toolSet } from '../../assistant/tools.js'
import { openProviderKey } from '../../agents/service.js'
import type { ProviderKeyRecord } from '../../store/store.js'

/** A provider's model when the request names none (an OpenAI-compatible endpoint has no default). */
export const DEFAULT_MODELS: Record<string, string> = { openai: 'gpt-4o-mini', anthropic: 'claude-3-5-haiku-latest' }
const PREFERENCE = ['openai', 'anthropic']
const PROVIDER_NAMES: Record<string, string> = { openai: 'OpenAI', anthropic: 'Anthropic' }

function preferred (a: ProviderKeyRecord, b: ProviderKeyRecord): number {
  const rank = (p: ProviderKeyRecord): number => { const i = PREFERENCE.indexOf(p.provider); return i === -1 ? PREFERENCE.length : i }
  return rank(a) - rank(b) || a.provider.localeCompare(b.provider)
}

const ChatBody = Type.Object({
  message: Type.String({ minLength: 1, maxLength: 20_000 }),
  history: Type.Optional(Type.Array(Type.Object({
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.String({ maxLength: 100_000 })
  }), { maxItems: 200 })),
  page_context: Type.Optional(Type.String({ maxLength: 2_000 })),
  model: Type.Optional(Type.String({ maxLength: 200 })),
  provider: Type.Optional(Type.String({ maxLength: 64 }))
})

const Flag = Type.Union([Type.Literal('true'), Type.Literal('false')])

/** The built-in provider's entry in GET /assistant/providers. */
export const LOCAL_PROVIDER = {
  id: 'local',
  name: 'Built-in (answers from your data, no model, no network)',
  source: 'builtin',
  models: [{
    value: 'local',
    label: 'Built-in answers',
    capabilities: ['chat'],
    contextWindow: 0,
    releaseDate: '2026-11-23',
    supportsTools: false,
    supportsVision: false,
    riskLevel: 'low'
  }]
}

/** Writes one server-sent event; false once the client has gone. */
function sse (reply: FastifyReply, data: string): boolean {
  const res = reply.raw
  if (res.destroyed || res.writableEnded) return false
  res.write(`data: ${data}\n\n`)
  return true
}

export async function assistantRoutes (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const { store, directory, box } = services
  app.addHook('preHandler', userHook(services.userAuth))
  /** The tenant's keys the assistant may use, in the order it prefers them. */
  const enabledProviders = async (tenantId: string): Promise<ProviderKeyRecord[]> =>
    (await store.listProviderKeys(tenantId)).filter((p) => p.is_active && p.enabled_for_assistant).sort(preferred)

  app.get('/assistant/providers', {
    schema: {
      tags: ['assistant'],
      summary: 'The providers and models the assistant can use',
      // Query strings are text (types are not coerced): the booleans are spelled out.
      querystring: Type.Object({ require_tools: Type.Optional(Flag), live: Type.Optional(Flag) }),
      response: { ...errorResponses(400, 401) }
    }
  }, async (req) => {
    const q = req.query as { require_tools?: 'true' | 'false', live?: 'true' | 'false' }
    const requireTools = q.require_tools === 'true'
    const tenantId = (req.user as { tenantId: string }).tenantId
    const enabled = await enabledProviders(tenantId)
    const providers = await Promise.all(enabled.map(async (p) => {
      const { source, models } = await services.models.models(tenantId, {
        provider: p.provider, baseUrl: p.base_url, apiKey: openProviderKey(box, p)
      }, { live: q.live !== 'false', requireTools })
      return { id: p.provider, name: PROVIDER_NAMES[p.provider] ?? `${p.provider} (OpenAI-compatible)`, source, models }
    }))
    const local = requireTools ? { ...LOCAL_PROVIDER, models: LOCAL_PROVIDER.models.filter((m) => m.supportsTools) } : LOCAL_PROVIDER
    return { providers: [...providers, local] }
  })

  app.post('/assistant/chat', {
    schema: { tags: ['assistant'], summary: 'Ask about your agents, policies and events; the answer streams as server-sent events', body: ChatBody, response: { ...errorResponses(400, 401, 413, 415) } }
  }, async (req, reply) => {
    const body = req.body as Static<typeof ChatBody>
    if (body.message.trim() === '') throw new ServiceError('bad_request', 'message must not be blank')
    const tenantId = (req.user as { tenantId: string }).tenantId
    const enabled = await enabledProviders(tenantId)
    let chosen: ProviderKeyRecord | undefined
    if (body.provider === undefined) chosen = enabled[0]
    else if (body.provider !== 'local') {
      chosen = enabled.find((p) => p.provider === body.provider)
      if (chosen === undefined) throw new ServiceError('bad_request', `provider "${body.provider}" has no key enabled for the assistant (see /settings/llm-providers), and is not "local"`)
    }
    const model = chosen === undefined ? 'local' : body.model ?? DEFAULT_MODELS[chosen.provider]
    if (model === undefined) throw new ServiceError('bad_request', `provider "${chosen?.provider ?? ''}" is an OpenAI-compatible endpoint: name the model`)

    reply.hijack()
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no'
    })
    const abort = new AbortController()
    let finished = false
    reply.raw.on('close', () => { if (!finished) abort.abort() })
    try {
      if (chosen === undefined) {
        const answer = await localAnswer(body.message, { store, directory, tenantId })
        for (const chunk of chunksOf(answer)) {
          if (!sse(reply, JSON.stringify({ content: chunk }))) return
        }
      } else {
        await streamChat({
          kind: chosen.provider === 'anthropic' ? 'anthropic' : 'openai',
          baseUrl: chosen.base_url ?? (chosen.provider === 'anthropic' ? ANTHROPIC_BASE_URL : OPENAI_BASE_URL),
          apiKey: openProviderKey(box, chosen),
          model,
          system: await systemContext(store, tenantId, body.page_context),
          messages: [...(body.history ?? []), { role: 'user', content: body.message }],
          signal: abort.signal,
          onText: (text) => { sse(reply, JSON.stringify({ content: text })) },
          ...(modelSupportsTools(chosen.provider, model) ? { tools: toolSet(store, directory, tenantId) } : {})
        })
        await store.touchProviderKey(tenantId, chosen.provider, new Date().toISOString())
      }
    } catch (err) {
      if (abort.signal.aborted) return // the client went away
      services.log.warn({ err: (err as Error).message, provider: chosen?.provider ?? 'local' }, 'assistant: the answer failed')
      sse(reply, JSON.stringify({ error: chosen === undefined ? 'the assistant could not answer: an internal error (logged)' : (err as Error).message }))
    } finally {
      finished = true
    }
    sse(reply, '[DONE]')
    reply.raw.end()
  })
}
