import t from 'tap'
import { SecretsCache } from '../../sidecar/secrets-cache.js'

const H1 = 'a'.repeat(64)
const H2 = 'b'.repeat(64)
const answer = (expiresAt: number, value = 'v'): Record<string, unknown> =>
  ({ secrets: { TOKEN: value }, providers: {}, expires_at: new Date(expiresAt).toISOString() })

t.test('SecretsCache: an answer is served until its expires_at, then dropped', async (t) => {
  let now = 1_000_000
  const c = new SecretsCache(() => now)
  t.teardown(() => c.clear())
  const body = answer(now + 60_000)
  t.equal(c.put(H1, '/secrets', body), true, 'kept')
  t.equal(c.get(H1, '/secrets'), body, 'served as it came')
  t.equal(c.get(H1, '/secrets/bot'), undefined, 'another path of the same key is not answered from it')
  t.equal(c.get(H2, '/secrets'), undefined, 'nor another key')
  now += 59_999
  t.equal(c.get(H1, '/secrets'), body, 'still valid a millisecond before expiry')
  now += 1
  t.equal(c.get(H1, '/secrets'), undefined, 'expired at expires_at')
  t.equal(c.size, 0, 'and dropped')
})

t.test('SecretsCache: answers without a valid, future expires_at are not kept', async (t) => {
  const now = 1_000_000
  const c = new SecretsCache(() => now)
  t.teardown(() => c.clear())
  for (const [label, body] of [
    ['already expired', answer(now - 1)],
    ['expiring now', answer(now)],
    ['no expires_at', { secrets: {} }],
    ['expires_at not a date', { secrets: {}, expires_at: 'tomorrow-ish' }],
    ['expires_at a number', { secrets: {}, expires_at: now + 1000 }],
    ['not an object', null]
  ] as const) {
    t.equal(c.put(H1, '/secrets', body), false, label)
    t.equal(c.get(H1, '/secrets'), undefined, `${label}: nothing served`)
  }
  t.equal(c.size, 0)
})

t.test('SecretsCache: a new answer replaces the old; a refused one drops it', async (t) => {
  const now = 1_000_000
  const c = new SecretsCache(() => now)
  t.teardown(() => c.clear())
  c.put(H1, '/secrets', answer(now + 60_000, 'old'))
  const fresh = answer(now + 120_000, 'new')
  c.put(H1, '/secrets', fresh)
  t.equal(c.get(H1, '/secrets'), fresh, 'the newer answer')
  c.put(H1, '/secrets', answer(now - 5))
  t.equal(c.get(H1, '/secrets'), undefined, 'an answer that cannot be kept removes the one before (no stale credentials)')
  t.equal(c.size, 0)
})

t.test('SecretsCache: forget drops every answer of a key; clear drops all', async (t) => {
  const now = 1_000_000
  const c = new SecretsCache(() => now)
  c.put(H1, '/secrets', answer(now + 60_000))
  c.put(H1, '/secrets/bot', answer(now + 60_000))
  c.put(H2, '/secrets', answer(now + 60_000))
  t.equal(c.size, 3)
  c.forget(H1)
  t.equal(c.size, 1, 'the other key\'s answer stays')
  t.equal(c.get(H1, '/secrets/bot'), undefined)
  c.forget(H1)
  t.equal(c.size, 1, 'forgetting twice is harmless')
  c.clear()
  t.equal(c.size, 0)
})

t.test('SecretsCache: the timer drops an answer at its expiry without being asked', async (t) => {
  const c = new SecretsCache()
  t.teardown(() => c.clear())
  c.put(H1, '/secrets', answer(Date.now() + 50))
  t.equal(c.size, 1)
  await new Promise((resolve) => setTimeout(resolve, 150))
  t.equal(c.size, 0, 'gone from memory at expires_at')
})

t.test('SecretsCache: a timer that fires early (a clock that moved) is armed again until the expiry', async (t) => {
  let now = 1_000_000
  const c = new SecretsCache(() => now)
  t.teardown(() => c.clear())
  c.put(H1, '/secrets', answer(now + 30))
  now -= 10_000 // the clock was set back: at the timer's firing the answer is not due yet
  await new Promise((resolve) => setTimeout(resolve, 80))
  t.equal(c.size, 1, 'not dropped before its expiry')
  now += 20_000
  t.equal(c.get(H1, '/secrets'), undefined, 'dropped once the expiry has passed')
})
