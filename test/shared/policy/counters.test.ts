import t from 'tap'
import { MemoryApprovals, MemoryBudgetLedger, MemoryRateCounters, WINDOWS, periodStart } from '../../../shared/policy/counters.js'

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0)

t.test('MemoryRateCounters: counts within a minute, forgets after it slides past', async (t) => {
  const c = new MemoryRateCounters()
  t.equal(c.total('k', WINDOWS.minute, T0), 0, 'unknown key counts 0')
  c.add('k', WINDOWS.minute, 1, T0)
  c.add('k', WINDOWS.minute, 1, T0 + 30_000)
  t.equal(c.total('k', WINDOWS.minute, T0 + 30_000), 2)
  t.equal(c.total('k', WINDOWS.minute, T0 + 59_999), 2, 'both still inside the window')
  t.equal(c.total('k', WINDOWS.minute, T0 + 60_000), 1, 'the first has slid out')
  t.equal(c.total('k', WINDOWS.minute, T0 + 90_000), 0, 'both have slid out')
})

t.test('MemoryRateCounters: a jump of more than a window clears every bucket', async (t) => {
  const c = new MemoryRateCounters()
  for (let i = 0; i < 60; i++) c.add('k', WINDOWS.minute, 1, T0 + i * 1000)
  t.equal(c.total('k', WINDOWS.minute, T0 + 59_000), 60)
  c.add('k', WINDOWS.minute, 5, T0 + 10 * 60_000)
  t.equal(c.total('k', WINDOWS.minute, T0 + 10 * 60_000), 5)
})

t.test('MemoryRateCounters: keys and windows are counted apart', async (t) => {
  const c = new MemoryRateCounters()
  c.add('a', WINDOWS.minute, 3, T0)
  c.add('a', WINDOWS.hour, 7, T0)
  c.add('b', WINDOWS.minute, 1, T0)
  t.equal(c.total('a', WINDOWS.minute, T0), 3)
  t.equal(c.total('a', WINDOWS.hour, T0), 7)
  t.equal(c.total('b', WINDOWS.minute, T0), 1)
  t.equal(c.total('a', WINDOWS.hour, T0 + 59 * 60_000), 7, 'the hour window still holds it 59 minutes later')
  t.equal(c.total('a', WINDOWS.hour, T0 + 60 * 60_000), 0)
})

t.test('MemoryRateCounters: the day window has 10-minute resolution and slides', async (t) => {
  const c = new MemoryRateCounters()
  c.add('tokens', WINDOWS.day, 1000, T0)
  c.add('tokens', WINDOWS.day, 500, T0 + 12 * 3_600_000)
  t.equal(c.total('tokens', WINDOWS.day, T0 + 23 * 3_600_000), 1500)
  t.equal(c.total('tokens', WINDOWS.day, T0 + 24 * 3_600_000), 500)
})

t.test('MemoryRateCounters: a clock that steps back counts into the newest bucket', async (t) => {
  const c = new MemoryRateCounters()
  c.add('k', WINDOWS.minute, 1, T0 + 10_000)
  c.add('k', WINDOWS.minute, 1, T0)
  t.equal(c.total('k', WINDOWS.minute, T0 + 10_000), 2)
  t.equal(c.total('k', WINDOWS.minute, T0 + 70_000), 0, 'both leave with the newer bucket')
})

t.test('MemoryRateCounters: holds at most maxKeys keys per window, dropping the least recently written', async (t) => {
  const c = new MemoryRateCounters(2)
  c.add('a', WINDOWS.minute, 1, T0)
  c.add('b', WINDOWS.minute, 1, T0)
  c.add('a', WINDOWS.minute, 1, T0)
  t.equal(c.total('b', WINDOWS.minute, T0), 1, 'reading b does not make it recent')
  c.add('c', WINDOWS.minute, 1, T0)
  t.equal(c.size, 2)
  t.equal(c.total('b', WINDOWS.minute, T0), 0, 'b, written least recently, was dropped')
  t.equal(c.total('a', WINDOWS.minute, T0), 2)
  t.equal(c.total('c', WINDOWS.minute, T0), 1)
  c.add('h', WINDOWS.hour, 1, T0)
  t.equal(c.size, 3, 'each window has its own keys')
})

t.test('MemoryRateCounters: the running sum stays exact as buckets expire', async (t) => {
  const c = new MemoryRateCounters()
  for (let s = 0; s < 120; s++) c.add('k', WINDOWS.minute, s, T0 + s * 1000)
  // At T0 + 119 s the minute window holds seconds 60..119.
  let want = 0
  for (let s = 60; s < 120; s++) want += s
  t.equal(c.total('k', WINDOWS.minute, T0 + 119_000), want)
  t.equal(c.total('k', WINDOWS.minute, T0 + 119_000 + 30_000), want - (60 + 89) * 30 / 2, 'thirty seconds later the oldest thirty are gone')
  t.equal(c.total('k', WINDOWS.minute, T0 + 500_000), 0, 'a long silence empties the window')
})

t.test('periodStart: UTC day and month boundaries', async (t) => {
  t.equal(periodStart('day', Date.UTC(2026, 10, 22, 23, 59, 59)), Date.UTC(2026, 10, 22))
  t.equal(periodStart('month', Date.UTC(2026, 10, 22, 5)), Date.UTC(2026, 10, 1))
  t.equal(periodStart('month', Date.UTC(2026, 11, 31, 23, 59)), Date.UTC(2026, 11, 1))
})

t.test('MemoryBudgetLedger: sums per agent, user and tenant within the UTC period', async (t) => {
  const l = new MemoryBudgetLedger()
  l.record({ agentId: 'a1', userId: 'u1', usd: 1.5, at: T0 })
  l.record({ agentId: 'a2', userId: 'u1', usd: 2, at: T0 + 1000 })
  l.record({ agentId: 'a1', usd: 0.25, at: T0 + 2000 })
  t.equal(l.spent('agent', 'a1', 'day', T0), 1.75)
  t.equal(l.spent('agent', 'a2', 'day', T0), 2)
  t.equal(l.spent('user', 'u1', 'day', T0), 3.5)
  t.equal(l.spent('tenant', '*', 'month', T0), 3.75)
  t.equal(l.spent('agent', 'nobody', 'day', T0), 0)
})

t.test('MemoryBudgetLedger: a new day starts from zero; the month keeps counting', async (t) => {
  const l = new MemoryBudgetLedger()
  l.record({ agentId: 'a', usd: 10, at: Date.UTC(2026, 10, 22, 23, 0) })
  const nextDay = Date.UTC(2026, 10, 23, 1, 0)
  t.equal(l.spent('agent', 'a', 'day', nextDay), 0)
  t.equal(l.spent('agent', 'a', 'month', nextDay), 10)
  l.record({ agentId: 'a', usd: 1, at: nextDay })
  t.equal(l.spent('agent', 'a', 'day', nextDay), 1)
  t.equal(l.spent('agent', 'a', 'month', nextDay), 11)
  t.equal(l.spent('agent', 'a', 'month', Date.UTC(2026, 11, 1)), 0, 'December starts a new month')
})

t.test('MemoryBudgetLedger: ignores zero, negative, non-finite and late costs', async (t) => {
  const l = new MemoryBudgetLedger()
  l.record({ agentId: 'a', usd: 0, at: T0 })
  l.record({ agentId: 'a', usd: -5, at: T0 })
  l.record({ agentId: 'a', usd: Number.NaN, at: T0 })
  l.record({ agentId: 'a', usd: Infinity, at: T0 })
  t.equal(l.spent('agent', 'a', 'day', T0), 0)
  l.record({ agentId: 'a', usd: 2, at: T0 })
  l.record({ agentId: 'a', usd: 3, at: T0 - 86_400_000 })
  t.equal(l.spent('agent', 'a', 'day', T0), 2, 'a cost of yesterday does not count today')
})

t.test('MemoryApprovals: state per agent; consume turns approved into used, once', async (t) => {
  const a = new MemoryApprovals()
  a.set('ap1', 'agent-1', 'approved')
  a.set('ap2', 'agent-1', 'pending')
  t.equal(a.state('ap1', 'agent-1'), 'approved')
  t.equal(a.state('ap1', 'agent-2'), 'unknown', "another agent's approval is unknown to it")
  t.equal(a.state('nope', 'agent-1'), 'unknown')
  a.consume('ap1', 'agent-2')
  t.equal(a.state('ap1', 'agent-1'), 'approved', 'another agent cannot consume it')
  a.consume('ap1', 'agent-1')
  t.equal(a.state('ap1', 'agent-1'), 'used')
  a.consume('ap2', 'agent-1')
  t.equal(a.state('ap2', 'agent-1'), 'pending', 'pending approvals are not consumed')
  a.consume('missing', 'agent-1')
})
