/**
 * Model discovery for the assistant: the live list first (OpenAI-style and Anthropic-style, against
 * fake servers), then the shipped registry, then the curated fallback; the one-hour cache with a fake
 * clock; require_tools.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { CACHE_MS, ModelCatalog, registryKind } from '../../../control-plane/assistant/models.js'
import registry from '../../../control-plane/assistant/models.json' with { type: 'json' }

async function fakeModels (t: Test, status: () => number, data: () => unknown): Promise<{ url: string, hits: () => number, headers: () => Record<string, unknown> }> {
  let hits = 0
  let last: Record<string, unknown> = {}
  const server = createServer((req, res) => {
    hits++
    last = req.headers
    res.writeHead(status(), { 'content-type': 'application/json' })
    res.end(JSON.stringify({ data: data() }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits, headers: () => last }
}

t.test('the registry: every entry has the fields of spec 2.5; providers map to their section', async (t) => {
  for (const [kind, models] of Object.entries(registry)) {
    t.ok(models.length > 0, `${kind} has models`)
    for (const m of models) {
      t.match(m, { value: String, label: String, capabilities: Array, contextWindow: Number, releaseDate: /^\d{4}-\d{2}-\d{2}$/, supportsTools: Boolean, supportsVision: Boolean, riskLevel: String }, `${kind} ${m.value}`)
      t.equal(m.supportsTools, m.capabilities.includes('function_calling'), `${m.value}: supportsTools matches its capabilities`)
    }
  }
  t.equal(registryKind('openai'), 'openai')
  t.equal(registryKind('anthropic'), 'anthropic')
  t.equal(registryKind('ollama'), 'openai_compatible')
})

t.test('live first: an OpenAI-style list is fetched with the key, known models get their registry entry; cached for an hour', async (t) => {
  let now = 1_000_000
  const fake = await fakeModels(t, () => 200, () => [{ id: 'gpt-4o' }, { id: 'my-finetune' }])
  const catalog = new ModelCatalog(() => now)
  const src = { provider: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk-live' }
  const first = await catalog.models('t1', src, { live: true, requireTools: false })
  t.equal(first.source, 'live')
  t.strictSame(first.models.map((m) => m.value), ['gpt-4o', 'my-finetune'])
  t.match(first.models[0], { label: 'GPT-4o', supportsTools: true }, 'a known model: the registry\'s entry')
  t.match(first.models[1], { label: 'my-finetune', supportsTools: false, riskLevel: 'unknown' }, 'an unknown one: what can be said')
  t.equal(fake.headers().authorization, 'Bearer sk-live')
  now += CACHE_MS - 1
  await catalog.models('t1', src, { live: true, requireTools: false })
  t.equal(fake.hits(), 1, 'within the hour: from the cache')
  await catalog.models('t2', src, { live: true, requireTools: false })
  t.equal(fake.hits(), 2, 'per tenant')
  now += 1
  await catalog.models('t1', src, { live: true, requireTools: false })
  t.equal(fake.hits(), 3, 'after an hour: fetched again')
  catalog.forget('t1')
  await catalog.models('t1', src, { live: true, requireTools: false })
  t.equal(fake.hits(), 4, 'forgotten when the tenant\'s keys change')
  const tools = await catalog.models('t1', src, { live: true, requireTools: true })
  t.strictSame(tools.models.map((m) => m.value), ['gpt-4o'], 'require_tools keeps models with function calling')
})

t.test('live for Anthropic: /v1/models with x-api-key and the version header; display names kept for unknown models', async (t) => {
  const fake = await fakeModels(t, () => 200, () => [{ id: 'claude-sonnet-4-5', display_name: 'Claude Sonnet 4.5' }, { id: 'claude-next', display_name: 'Claude Next' }])
  const catalog = new ModelCatalog()
  const r = await catalog.models('t', { provider: 'anthropic', baseUrl: fake.url, apiKey: 'ant-key' }, { live: true, requireTools: false })
  t.equal(r.source, 'live')
  t.match(r.models, [{ value: 'claude-sonnet-4-5', supportsTools: true }, { value: 'claude-next', label: 'Claude Next' }])
  t.match(fake.headers(), { 'x-api-key': 'ant-key', 'anthropic-version': '2023-06-01' })
})

t.test('a failed live call falls through to the registry (and is not cached); live: false skips the call; a compatible endpoint with nothing live gets its registry section', async (t) => {
  let status = 500
  const fake = await fakeModels(t, () => status, () => [{ id: 'x' }])
  const errors: string[] = []
  const catalog = new ModelCatalog(Date.now, (p, err) => errors.push(`${p}: ${err.message}`))
  const src = { provider: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'k' }
  const failed = await catalog.models('t', src, { live: true, requireTools: false })
  t.equal(failed.source, 'registry')
  t.strictSame(failed.models.map((m) => m.value), registry.openai.map((m) => m.value))
  t.match(errors, [/openai: models list answered 500/])
  status = 200
  t.equal((await catalog.models('t', src, { live: true, requireTools: false })).source, 'live', 'the failure was not cached')
  const hits = fake.hits()
  t.equal((await catalog.models('t', { ...src, provider: 'anthropic' }, { live: false, requireTools: false })).source, 'registry', 'live: false')
  t.equal(fake.hits(), hits, 'no call made')
  const ollama = await catalog.models('t', { provider: 'ollama', baseUrl: 'http://127.0.0.1:9', apiKey: 'k' }, { live: true, requireTools: false })
  t.equal(ollama.source, 'registry', 'nothing listening: the registry\'s compatible models')
  t.ok(ollama.models.some((m) => m.value === 'llama3.1'))
  const empty = await fakeModels(t, () => 200, () => [])
  t.equal((await catalog.models('t-empty', { provider: 'openai', baseUrl: `${empty.url}/v1`, apiKey: 'k' }, { live: true, requireTools: false })).source, 'registry', 'an empty live list falls through too')
})
