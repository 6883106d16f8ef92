/**
 * The sidecar's config cache (sidecar/config-cache.ts): configs compiled and cached per key hash,
 * written atomically to disk (0600) and read back after a restart, stale after the refresh interval,
 * bad files skipped and reported, bad configs refused without a trace.
 */
import t, { type Test } from 'tap'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { hashKey } from '../../shared/keys.js'
import type { ConfigResponse } from '../../shared/contracts/v1.js'
import { ConfigCache } from '../../sidecar/config-cache.js'

const H1 = hashKey('sk_agent_' + 'a'.repeat(43))
const H2 = hashKey('sk_agent_' + 'b'.repeat(43))

function dir (t: Test): string {
  const d = mkdtempSync(join(tmpdir(), 'agentgov-cfg-'))
  t.teardown(() => rmSync(d, { recursive: true, force: true }))
  return join(d, 'configs')
}

function config (hash: string, deny: string[], refresh = 300): ConfigResponse {
  return {
    agent_id: 'bot',
    config: { heartbeat_interval_seconds: 60, event_batch_size: 100, event_flush_interval_seconds: 5, config_refresh_interval_seconds: refresh },
    policies: [{ id: 'p1', name: 'tools', type: 'tool_permission', enforcement: 'enforce', config: { denied_tools: deny } }],
    config_hash: hash,
    updated_at: '2026-11-23T00:00:00.000Z',
    agent: { agent_id: 'bot', agent_type: 'custom', capabilities: [], metadata: {}, deployment_id: null }
  }
}

const shellCall = { agent_id: 'bot', action: 'tool_call', context: { tool: 'shell' } }

t.test('put compiles and caches the config per key hash; the enforcer decides with it', async (t) => {
  const cache = new ConfigCache(dir(t))
  const entry = cache.put(H1, config('sha256:1', ['shell']))
  t.equal(cache.get(H1), entry)
  t.equal(cache.get(H2), undefined)
  t.equal(entry.enforcer.evaluateV1(shellCall).allowed, false)
  cache.put(H1, config('sha256:2', []))
  t.equal(cache.get(H1)?.enforcer.evaluateV1(shellCall).allowed, true, 'a new config replaces the old one')
  t.strictSame(cache.keys(), [H1])
})

t.test('configs are on disk (0600, no temporary files left) and come back in a new cache, as they were', async (t) => {
  const d = dir(t)
  let now = 1_000
  const a = new ConfigCache(d, { now: () => now })
  a.put(H1, config('sha256:1', ['shell']))
  now = 2_000
  a.put(H2, config('sha256:2', []))
  t.strictSame(readdirSync(d).sort(), [`${H1}.json`, `${H2}.json`].sort(), 'one file per agent, nothing else')
  t.equal(statSync(join(d, `${H1}.json`)).mode & 0o777, 0o600)
  const b = new ConfigCache(d)
  t.equal(b.loadPersisted(), 2)
  t.equal(b.get(H1)?.config.config_hash, 'sha256:1')
  t.equal(b.get(H1)?.fetchedAt, 1_000, 'with the time it was fetched')
  t.equal(b.get(H1)?.enforcer.evaluateV1(shellCall).allowed, false, 'enforced before the control plane answers')
  b.delete(H1)
  t.equal(b.get(H1), undefined)
  t.strictSame(readdirSync(d), [`${H2}.json`], 'deleted on disk too')
  b.delete('not-a-hash')
})

t.test('stale after config_refresh_interval_seconds (300 s when the config has none)', async (t) => {
  let now = 0
  const cache = new ConfigCache(dir(t), { now: () => now })
  const short = cache.put(H1, config('sha256:1', [], 10))
  const none = cache.put(H2, { ...config('sha256:2', []), config: {} as ConfigResponse['config'] })
  now = 9_999
  t.equal(cache.isStale(short), false)
  now = 10_000
  t.equal(cache.isStale(short), true)
  t.equal(cache.isStale(none), false)
  now = 300_000
  t.equal(cache.isStale(none), true)
})

t.test('a file that cannot be read back is reported and skipped; other files are ignored', async (t) => {
  const d = dir(t)
  const a = new ConfigCache(d)
  a.put(H1, config('sha256:1', []))
  writeFileSync(join(d, `${H2}.json`), '{ not json')
  writeFileSync(join(d, `${'c'.repeat(64)}.json`), JSON.stringify({ something: 'else' }))
  writeFileSync(join(d, `${'d'.repeat(64)}.json`), JSON.stringify({ fetched_at: 1, config: { agent_id: 'x', policies: [] } }))
  writeFileSync(join(d, 'README.txt'), 'not a config')
  const bad: string[] = []
  const b = new ConfigCache(d, { onBadFile: (file, err) => bad.push(`${file.slice(-10)} ${err.message}`) })
  t.equal(b.loadPersisted(), 1, 'the good one')
  t.equal(bad.length, 3, 'three reported')
  t.match(bad.join('\n'), /not a saved config/)
  t.match(bad.join('\n'), /no agent identity/)
})

t.test('a config that cannot be compiled, or a bad key hash, changes neither the cache nor the disk', async (t) => {
  const d = dir(t)
  const cache = new ConfigCache(d)
  const old = cache.put(H1, config('sha256:1', ['shell']))
  const broken = { ...config('sha256:2', []), agent: undefined }
  t.throws(() => cache.put(H1, broken), /no agent identity/)
  t.equal(cache.get(H1), old, 'the last good config stays')
  t.throws(() => cache.put('../escape', config('sha256:3', [])), /SHA-256 hex digest/)
  t.strictSame(readdirSync(d), [`${H1}.json`])
  t.equal(new ConfigCache(d).loadPersisted(), 1)
})

const legacyAnswer = {
  agent_id: 'bot',
  policies: [{ id: 'pol_1', type: 'tool_permission', config: { denied_tools: ['shell'] }, scope: 'org' }],
  allowed_models: [],
  features: { content_scanning: false, audit_logging: true },
  cache_ttl: 300,
  config_hash: 'sha256:1'
}

t.test('put with a legacy answer: get -> entry.legacy is that answer, and it is written to disk with the config', async (t) => {
  const d = dir(t)
  const cache = new ConfigCache(d)
  const entry = cache.put(H1, config('sha256:1', ['shell']), legacyAnswer)
  t.strictSame(entry.legacy, legacyAnswer)
  t.strictSame(cache.get(H1)?.legacy, legacyAnswer)
  t.equal(cache.get(H1)?.config.config_hash, 'sha256:1', 'the v1 config is kept alongside')
  const saved = JSON.parse(readFileSync(join(d, `${H1}.json`), 'utf8')) as Record<string, unknown>
  t.strictSame(saved.legacy, legacyAnswer, 'persisted in the same file')
  t.equal((saved.config as ConfigResponse).config_hash, 'sha256:1')
})

t.test('put without a legacy answer -> the entry has no legacy property, in memory, on disk and after a reload', async (t) => {
  const d = dir(t)
  const cache = new ConfigCache(d)
  const entry = cache.put(H1, config('sha256:1', []))
  t.notOk('legacy' in entry, 'no legacy property, not even undefined')
  const saved = JSON.parse(readFileSync(join(d, `${H1}.json`), 'utf8')) as Record<string, unknown>
  t.notOk('legacy' in saved)
  const b = new ConfigCache(d)
  t.equal(b.loadPersisted(), 1)
  const loaded = b.get(H1)
  t.ok(loaded)
  t.notOk(loaded !== undefined && 'legacy' in loaded)
})

t.test('put replacing a legacy entry with a config alone -> the old legacy answer is gone, in memory and on disk', async (t) => {
  const d = dir(t)
  const cache = new ConfigCache(d)
  cache.put(H1, config('sha256:1', []), legacyAnswer)
  cache.put(H1, config('sha256:2', []))
  t.equal(cache.get(H1)?.legacy, undefined)
  const b = new ConfigCache(d)
  b.loadPersisted()
  t.equal(b.get(H1)?.legacy, undefined)
  t.equal(b.get(H1)?.config.config_hash, 'sha256:2')
})

t.test('loadPersisted: a file written with a legacy answer -> a new cache on the same dir has the same legacy answer and config', async (t) => {
  const d = dir(t)
  const a = new ConfigCache(d, { now: () => 7_000 })
  a.put(H1, config('sha256:1', ['shell']), legacyAnswer)
  a.put(H2, config('sha256:2', []))
  const b = new ConfigCache(d)
  t.equal(b.get(H1), undefined, 'nothing before loadPersisted')
  t.equal(b.loadPersisted(), 2)
  t.strictSame(b.get(H1)?.legacy, legacyAnswer)
  t.equal(b.get(H1)?.fetchedAt, 7_000)
  t.equal(b.get(H1)?.enforcer.evaluateV1(shellCall).allowed, false, 'the v1 config is compiled as before')
  const other = b.get(H2)
  t.ok(other)
  t.notOk(other !== undefined && 'legacy' in other, 'the agent saved without a legacy answer has none')
})

t.test('loadPersisted: a saved file whose legacy is not an object (string, null, number, array) -> loaded, with no legacy', async (t) => {
  const d = dir(t)
  mkdirSync(d, { recursive: true })
  const H3 = 'e'.repeat(64)
  writeFileSync(join(d, `${H1}.json`), JSON.stringify({ fetched_at: 1, config: config('sha256:1', ['shell']), legacy: 'not an object' }))
  writeFileSync(join(d, `${H2}.json`), JSON.stringify({ fetched_at: 2, config: config('sha256:2', []), legacy: null }))
  writeFileSync(join(d, `${H3}.json`), JSON.stringify({ fetched_at: 3, config: config('sha256:3', []), legacy: 5 }))
  const H4 = 'f'.repeat(64)
  writeFileSync(join(d, `${H4}.json`), JSON.stringify({ fetched_at: 4, config: config('sha256:4', []), legacy: [] }))
  const bad: string[] = []
  const b = new ConfigCache(d, { onBadFile: (file) => bad.push(file) })
  t.equal(b.loadPersisted(), 4, 'all four load: the config is good')
  t.strictSame(bad, [], 'none reported as bad')
  for (const h of [H1, H2, H3, H4]) {
    const entry = b.get(h)
    t.ok(entry, `${h.slice(0, 4)} loaded`)
    t.notOk(entry !== undefined && 'legacy' in entry, `${h.slice(0, 4)} has no legacy property`)
  }
  t.equal(b.get(H1)?.enforcer.evaluateV1(shellCall).allowed, false, 'its config is enforced')
})
