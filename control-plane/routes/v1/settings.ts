/**
 * /api/service/v1/settings/llm-providers (interface.md 4.4): a tenant's LLM provider keys. The user
 * JWT (Bearer header or the agentgov_session cookie) or open mode; viewers may only read. A key is
 * sealed with AES-256-GCM under the master key (a fresh nonce per write, tenant and provider bound as
 * associated data) and never leaves in plaintext: records show a short prefix only.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { errorResponses } from '../../../shared/contracts/common.js'
import { ServiceError, forbidden } from '../../../shared/errors.js'
import { userHook } from '../../graphql/auth.js'
import type { RouteOptions } from '../../services.js'
import type { ProviderKeyRecord } from '../../store/store.js'
import { providerAad } from '../../agents/service.js'

/** Providers with an API of their own; any other id names an OpenAI-compatible endpoint (baseUrl required). */
export const NATIVE_PROVIDERS = ['openai', 'anthropic'] as const
const PROVIDER_ID = '^[a-z][a-z0-9_-]{1,63}$'
/** Characters of a key shown in its record. */
export const KEY_PREFIX_SHOWN = 8

export { providerAad }

const ProviderRecord = Type.Object({
  provider: Type.String(),
  keyPrefix: Type.String({ description: 'the first characters of the key; the key itself is never returned' }),
  baseUrl: Type.Union([Type.String(), Type.Null()]),
  isActive: Type.Boolean(),
  enabledForAssistant: Type.Boolean(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
  updatedAt: Type.String()
})

const SetBody = Type.Object({
  provider: Type.String({ pattern: PROVIDER_ID, description: 'openai, anthropic, or the id of an OpenAI-compatible endpoint (e.g. ollama)' }),
  apiKey: Type.String({ minLength: 1, maxLength: 4096 }),
  baseUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'required for an OpenAI-compatible endpoint; optional for openai and anthropic (a proxy)' }))
})
const PatchBody = Type.Object({
  provider: Type.String({ pattern: PROVIDER_ID }),
  enabledForAssistant: Type.Optional(Type.Boolean()),
  isActive: Type.Optional(Type.Boolean())
})

function record (p: ProviderKeyRecord): Static<typeof ProviderRecord> {
  return {
    provider: p.provider,
    keyPrefix: p.key_prefix,
    baseUrl: p.base_url,
    isActive: p.is_active,
    enabledForAssistant: p.enabled_for_assistant,
    lastUsedAt: p.last_used_at,
    updatedAt: p.updated_at
  }
}

function baseUrlOf (provider: string, raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') {
    if ((NATIVE_PROVIDERS as readonly string[]).includes(provider)) return null
    throw new ServiceError('bad_request', `baseUrl is required for "${provider}": an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1`)
  }
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    throw new ServiceError('bad_request', 'baseUrl must be a URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ServiceError('bad_request', 'baseUrl must be an http or https URL')
  if (url.username !== '' || url.password !== '') throw new ServiceError('bad_request', 'baseUrl must not carry credentials; send the key as apiKey')
  return url.href.replace(/\/$/, '')
}

function requireAdmin (req: FastifyRequest): string {
  const user = req.user
  if (user === null) throw forbidden('no user')
  if (user.role !== 'admin') throw forbidden('changing provider keys needs the admin role; the token\'s role is viewer')
  return user.tenantId
}

export async function settingsRoutes (app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const { store, box } = services
  app.addHook('preHandler', userHook(services.userAuth))
  const notFound = (provider: string): ServiceError => new ServiceError('not_found', `no key is stored for provider "${provider}"`)

  app.get('/settings/llm-providers', {
    schema: { tags: ['settings'], summary: 'The tenant\'s LLM provider keys (records; never a key)', response: { 200: Type.Object({ providers: Type.Array(ProviderRecord) }), ...errorResponses(401) } }
  }, async (req) => ({ providers: (await store.listProviderKeys((req.user as { tenantId: string }).tenantId)).map(record) }))

  app.post('/settings/llm-providers', {
    schema: { tags: ['settings'], summary: 'Set (201) or rotate (200) a provider key', body: SetBody, response: { 200: ProviderRecord, 201: ProviderRecord, ...errorResponses(400, 401, 403) } }
  }, async (req, reply) => {
    const tenantId = requireAdmin(req)
    const body = req.body as Static<typeof SetBody>
    const apiKey = body.apiKey.trim()
    if (apiKey === '') throw new ServiceError('bad_request', 'apiKey must not be blank')
    const baseUrl = baseUrlOf(body.provider, body.baseUrl)
    const now = new Date().toISOString()
    const existing = await store.getProviderKey(tenantId, body.provider)
    const outcome = await store.setProviderKey({
      tenant_id: tenantId,
      provider: body.provider,
      key_sealed: box.seal(apiKey, providerAad(tenantId, body.provider)),
      key_prefix: apiKey.slice(0, Math.min(KEY_PREFIX_SHOWN, Math.floor(apiKey.length / 2))),
      base_url: baseUrl,
      is_active: existing?.is_active ?? true,
      enabled_for_assistant: existing?.enabled_for_assistant ?? true,
      last_used_at: existing?.last_used_at ?? null,
      created_at: existing?.created_at ?? now,
      updated_at: now
    })
    services.models.forget(tenantId)
    reply.code(outcome === 'created' ? 201 : 200)
    return record(await store.getProviderKey(tenantId, body.provider) as ProviderKeyRecord)
  })

  app.patch('/settings/llm-providers', {
    schema: { tags: ['settings'], summary: 'Enable or disable a provider (for the assistant, or at all) without removing its key', body: PatchBody, response: { 200: ProviderRecord, ...errorResponses(400, 401, 403, 404) } }
  }, async (req) => {
    const tenantId = requireAdmin(req)
    const body = req.body as Static<typeof PatchBody>
    if (body.enabledForAssistant === undefined && body.isActive === undefined) throw new ServiceError('bad_request', 'send enabledForAssistant and/or isActive')
    const flags: { is_active?: boolean, enabled_for_assistant?: boolean } = {}
    if (body.isActive !== undefined) flags.is_active = body.isActive
    if (body.enabledForAssistant !== undefined) flags.enabled_for_assistant = body.enabledForAssistant
    if (!await store.setProviderFlags(tenantId, body.provider, flags)) throw notFound(body.provider)
    services.models.forget(tenantId)
    return record(await store.getProviderKey(tenantId, body.provider) as ProviderKeyRecord)
  })

  app.delete('/settings/llm-providers/:provider', {
    schema: { tags: ['settings'], summary: 'Remove a provider key', params: Type.Object({ provider: Type.String({ maxLength: 64 }) }), response: { ...errorResponses(401, 403, 404) } }
  }, async (req, reply) => {
    const tenantId = requireAdmin(req)
    const provider = (req.params as { provider: string }).provider
    if (!await store.deleteProviderKey(tenantId, provider)) throw notFound(provider)
    services.models.forget(tenantId)
    return reply.code(204).send()
  })
}
