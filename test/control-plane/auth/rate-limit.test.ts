import t from 'tap'
import { WindowLimiter } from '../../../control-plane/auth/rate-limit.js'

const MIN = 60_000
/** The start of a minute window (windows are aligned to multiples of windowMs). */
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % MIN)

t.test('WindowLimiter: up to the limit within one window is allowed (0), the next hit is refused', async (t) => {
  const l = new WindowLimiter(3, MIN)
  t.equal(l.hit('k', T0), 0)
  t.equal(l.hit('k', T0 + 1), 0)
  t.equal(l.hit('k', T0 + 2), 0)
  t.equal(l.hit('k', T0 + 3), 60, 'the 4th hit is refused with the seconds left in the window')
  t.equal(l.hit('k', T0 + 4), 60, 'and stays refused')
})

t.test('WindowLimiter: a new window starts from zero', async (t) => {
  const l = new WindowLimiter(1, MIN)
  t.equal(l.hit('k', T0), 0)
  t.not(l.hit('k', T0 + MIN - 1), 0, 'last millisecond of the window: still refused')
  t.equal(l.hit('k', T0 + MIN), 0, 'first millisecond of the next window: allowed')
  t.not(l.hit('k', T0 + MIN + 1), 0)
  t.equal(l.hit('k', T0 + 5 * MIN), 0, 'several windows later: allowed')
})

t.test('WindowLimiter: keys are counted apart', async (t) => {
  const l = new WindowLimiter(2, MIN)
  t.equal(l.hit('a', T0), 0)
  t.equal(l.hit('a', T0), 0)
  t.not(l.hit('a', T0), 0, 'a is over its limit')
  t.equal(l.hit('b', T0), 0, 'b is not affected')
  t.equal(l.hit('b', T0), 0)
  t.not(l.hit('b', T0), 0)
})

t.test('WindowLimiter: Retry-After is the whole seconds until the next window, rounded up, at least 1', async (t) => {
  const l = new WindowLimiter(0, MIN)
  t.equal(l.hit('k', T0), 60, 'at the start of the window')
  t.equal(l.hit('k', T0 + 30_000), 30, 'half way')
  t.equal(l.hit('k', T0 + 30_001), 30, '29.999 s rounds up to 30')
  t.equal(l.hit('k', T0 + 59_000), 1)
  t.equal(l.hit('k', T0 + 59_999), 1, '1 ms left rounds up to 1')
  const perSecond = new WindowLimiter(0, 1000)
  t.equal(perSecond.hit('k', T0 + 1), 1)
  const short = new WindowLimiter(0, 100)
  t.equal(short.hit('k', T0 + 50), 1, 'a sub-second window still says 1 second, never 0')
})

t.test('WindowLimiter: a per-second limit of 600 allows exactly 600 hits per second per key', async (t) => {
  const l = new WindowLimiter(600, 1000)
  let allowed = 0
  for (let i = 0; i < 700; i++) if (l.hit('agent', T0 + (i % 1000)) === 0) allowed++
  t.equal(allowed, 600)
  t.equal(l.hit('agent', T0 + 1000), 0, 'the next second starts again')
})

t.test('WindowLimiter: the counts of a past window are dropped when the next one starts', async (t) => {
  const l = new WindowLimiter(5, MIN)
  for (let i = 0; i < 100; i++) l.hit(`key-${i}`, T0)
  const counts = (): number => (l as unknown as { counts: Map<string, number> }).counts.size
  t.equal(counts(), 100)
  l.hit('new', T0 + MIN)
  t.equal(counts(), 1, 'only the key of the new window is held')
})

t.test('WindowLimiter: without an explicit now, the wall clock is used', async (t) => {
  const l = new WindowLimiter(1, 1e15) // one window from 1970 to ~33,658, so no boundary can fall between the hits
  t.equal(l.hit('k'), 0)
  const retry = l.hit('k')
  t.ok(retry > 1e9, `the second hit is refused until the far end of the window (${retry} s)`)
})
