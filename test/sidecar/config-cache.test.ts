/**
 * The sidecar's config cache (sidecar/config-cache.ts): configs compiled and cached per key hash,
 * written atomically to disk (0600) and read back after a restart, stale after the refresh interval,
 * bad files skipped and reported, bad configs refused without a trace.
 */
import t, { type Test } from 'tap'
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
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
