/**
 * The models the assistant can use with a provider (interface.md 4.3, GET /assistant/providers).
 * Resolution order: the provider's live model list (OpenAI and compatible: GET <baseUrl>/models;
 * Anthropic: GET /v1/models), then the registry shipped with the project (models.json: known models
 * with the fields of spec 2.5), then a curated fallback. Live lists are cached per tenant and
 * provider for an hour; a live call that fails falls through and is not cached.
 */
import { request } from 'undici'
import registry from './models.json' with { type: 'json' }
import { ANTHROPIC_BASE_URL, OPENAI_BASE_URL } from './upstream.js'

/** A model entry (spec 2.5). */
export interface ModelEntry {
  value: string
  label: string
  capabilities: string[]
  contextWindow: number
  releaseDate: string
  supportsTools: boolean
  supportsVision: boolean
  riskLevel: string
}

export interface ProviderModels {
  source: 'live' | 'registry' | 'curated'
  models: ModelEntry[]
}

export const CACHE_MS = 3_600_000
const LIVE_TIMEOUT_MS = 5_000

/** The registry's section of a provider: openai, anthropic, or (any other id) openai_compatible. */
export function registryKind (provider: string): keyof typeof registry {
  return provider === 'openai' || provider === 'anthropic' ? provider : 'openai_compatible'
}

/** When nothing else answers: one general model per provider kind. */
const CURATED: Record<string, ModelEntry[]> = {
  openai: [{ value: 'gpt-4o-mini', label: 'GPT-4o mini', capabilities: ['chat', 'function_calling'], contextWindow: 128000, releaseDate: '2024-07-18', supportsTools: true, supportsVision: false, riskLevel: 'low' }],
  anthropic: [{ value: 'claude-3-5-haiku-latest', label: 'Claude 3.5 Haiku', capabilities: ['chat', 'function_calling'], contextWindow: 200000, releaseDate: '2024-10-22', supportsTools: true, supportsVision: false, riskLevel: 'low' }],
  openai_compatible: []
}

function registryModels (provider: string): ModelEntry[] {
  return (registry[registryKind(provider)] as ModelEntry[]).map((m) => ({ ...m }))
}

/** A model the live list names: the registry's entry when it knows it, else what can be said of it. */
function liveEntry (provider: string, id: string, label: string | undefined): ModelEntry {
  const known = registryModels(provider).find((m) => m.value === id)
  return known ?? { value: id, label: label ?? id, capabilities: ['chat'], contextWindow: 0, releaseDate: '', supportsTools: false, supportsVision: false, riskLevel: 'unknown' }
}

/**
 * Whether a model calls functions: the registry says for the models it knows; other OpenAI and
 * Anthropic models are taken to (their current models all do), other endpoints' models not.
 */
export function modelSupportsTools (provider: string, model: string): boolean {
  const known = registryModels(provider).find((m) => m.value === model)
  if (known !== undefined) return known.supportsTools
  return provider === 'openai' || provider === 'anthropic'
}

export interface LiveSource {
  provider: string
  baseUrl: string | null
  apiKey: string
}

async function liveModels (src: LiveSource): Promise<ModelEntry[]> {
  const anthropic = src.provider === 'anthropic'
  const url = anthropic ? `${src.baseUrl ?? ANTHROPIC_BASE_URL}/v1/models` : `${src.baseUrl ?? OPENAI_BASE_URL}/models`
  const headers: Record<string, string> = anthropic ? { 'x-api-key': src.apiKey, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${src.apiKey}` }
  const res = await request(url, { method: 'GET', headers, headersTimeout: LIVE_TIMEOUT_MS, bodyTimeout: LIVE_TIMEOUT_MS })
  if (res.statusCode !== 200) {
    await res.body.dump()
    throw new Error(`models list answered ${res.statusCode}`)
  }
  const body = await res.body.json() as { data?: Array<{ id?: unknown, display_name?: unknown }> }
  if (!Array.isArray(body.data)) throw new Error('models list without data')
  return body.data.flatMap((m) => typeof m.id === 'string' ? [liveEntry(src.provider, m.id, typeof m.display_name === 'string' ? m.display_name : undefined)] : [])
}

export class ModelCatalog {
  private readonly cache = new Map<string, { at: number, models: ModelEntry[] }>()

  constructor (private readonly now: () => number = Date.now, private readonly onLiveError: (provider: string, err: Error) => void = () => {}) {}

  /** The models of a tenant's provider, by the resolution order; `live: false` skips the live call. */
  async models (tenantId: string, src: LiveSource, opts: { live: boolean, requireTools: boolean }): Promise<ProviderModels> {
    let found: ProviderModels | undefined
    if (opts.live) {
      const key = `${tenantId}\u0000${src.provider}`
      const cached = this.cache.get(key)
      if (cached !== undefined && this.now() - cached.at < CACHE_MS) {
        found = { source: 'live', models: cached.models }
      } else {
        try {
          const models = await liveModels(src)
          this.cache.set(key, { at: this.now(), models })
          found = { source: 'live', models }
        } catch (err) {
          this.onLiveError(src.provider, err as Error)
        }
      }
    }
    if (found === undefined || found.models.length === 0) {
      const fromRegistry = registryModels(src.provider)
      found = fromRegistry.length > 0 ? { source: 'registry', models: fromRegistry } : { source: 'curated', models: CURATED[registryKind(src.provider)] ?? [] }
    }
    return { source: found.source, models: opts.requireTools ? found.models.filter((m) => m.supportsTools) : found.models }
  }

  /** Forgets a tenant's cached lists (its provider keys changed). */
  forget (tenantId: string): void {
    for (const key of [...this.cache.keys()]) if (key.startsWith(`${tenantId}\u0000`)) this.cache.delete(key)
  }
}
