/**
 * State that policies read: sliding-window counters (rate_limit), recorded spend (budget_limit) and
 * approvals (human_oversight). Each sits behind a small interface so that the control plane and the
 * sidecar can feed it; the in-memory implementations here are what both use by default. Every method
 * takes the time explicitly, so tests control the clock.
 */

/** A sliding window: `spanMs` long, counted in `buckets` equal sub-windows. */
export interface WindowSpec {
  readonly name: string
  readonly spanMs: number
  readonly buckets: number
}

export const WINDOWS = {
  minute: { name: 'minute', spanMs: 60_000, buckets: 60 }, // 1 s resolution
  hour: { name: 'hour', spanMs: 3_600_000, buckets: 60 }, // 1 min resolution
  day: { name: 'day', spanMs: 86_400_000, buckets: 144 } // 10 min resolution
} as const satisfies Record<string, WindowSpec>

/** Counts per key in sliding windows. */
export interface RateCounterStore {
  /** The amount counted under `key` in the window ending at `now`. */
  total (key: string, window: WindowSpec, now: number): number
  /** Counts `amount` under `key` at `now`. */
  add (key: string, window: WindowSpec, amount: number, now: number): void
}

/** One key's window: a ring of buckets, each holding the amount of one sub-window, and their sum. */
class Ring {
  readonly counts: Float64Array
  /** Index (in sub-windows since the epoch) of the newest bucket written. */
  head = -1
  /** Sum of the buckets, kept up to date so that total() is O(1). */
  sum = 0
  /** When this key was last written, in the store's write order (for eviction). */
  written = 0
  private readonly bucketMs: number
  constructor (readonly window: WindowSpec) {
    this.counts = new Float64Array(window.buckets)
    this.bucketMs = window.spanMs / window.buckets
  }

  private advance (slot: number): void {
    const n = this.counts.length
    if (this.head === -1 || slot - this.head >= n) {
      this.counts.fill(0)
      this.sum = 0
    } else {
      for (let s = this.head + 1; s <= slot; s++) {
        this.sum -= this.counts[s % n] as number
        this.counts[s % n] = 0
      }
    }
    this.head = slot
  }

  total (now: number): number {
    const slot = Math.floor(now / this.bucketMs)
    if (slot > this.head) this.advance(slot)
    return this.sum
  }

  add (amount: number, now: number): void {
    const slot = Math.floor(now / this.bucketMs)
    if (slot > this.head) this.advance(slot)
    // A clock that stepped back counts into the newest bucket.
    const target = (slot < this.head ? this.head : slot) % this.counts.length
    this.counts[target] = (this.counts[target] as number) + amount
    this.sum += amount
  }
}

/**
 * In-memory counters; at most `maxKeys` keys per window. When a new key finds its window full, the
 * least recently written tenth of the keys is dropped in one sweep, so a write costs one map lookup
 * (no re-insertion to keep an order) and eviction is amortised.
 */
export class MemoryRateCounters implements RateCounterStore {
  private readonly rings = new Map<WindowSpec, Map<string, Ring>>()
  private writes = 0
  constructor (private readonly maxKeys = 100_000) {}

  private byWindow (window: WindowSpec): Map<string, Ring> {
    let m = this.rings.get(window)
    if (m === undefined) {
      m = new Map()
      this.rings.set(window, m)
    }
    return m
  }

  total (key: string, window: WindowSpec, now: number): number {
    return this.byWindow(window).get(key)?.total(now) ?? 0
  }

  add (key: string, window: WindowSpec, amount: number, now: number): void {
    const m = this.byWindow(window)
    let ring = m.get(key)
    if (ring === undefined) {
      if (m.size >= this.maxKeys) this.evict(m)
      ring = new Ring(window)
      m.set(key, ring)
    }
    ring.written = ++this.writes
    ring.add(amount, now)
  }

  /** Drops the least recently written tenth of a window's keys (at least one). */
  private evict (m: Map<string, Ring>): void {
    const order = [...m.values()].map((r) => r.written).sort((a, b) => a - b)
    const drop = Math.max(1, Math.floor(m.size / 10))
    const cutoff = order[drop - 1] as number
    for (const [key, ring] of m) if (ring.written <= cutoff) m.delete(key)
  }

  get size (): number {
    let n = 0
    for (const m of this.rings.values()) n += m.size
    return n
  }
}

export type BudgetPer = 'agent' | 'user' | 'tenant'
export type BudgetPeriod = 'day' | 'month'

/** Spend recorded for budget_limit (sum of `cost_usd`). */
export interface BudgetLedger {
  /** USD spent by `subject` (agent id, user id, or '*' for the tenant) in the UTC period holding `now`. */
  spent (per: BudgetPer, subject: string, period: BudgetPeriod, now: number): number
}

const periodCache = { day: { start: 0, end: -1 }, month: { start: 0, end: -1 } }

/** Start of the UTC day or month holding `ms` (the last answer is reused while `ms` stays in it). */
export function periodStart (period: BudgetPeriod, ms: number): number {
  const cached = periodCache[period]
  if (ms >= cached.start && ms < cached.end) return cached.start
  const d = new Date(ms)
  const start = period === 'day'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  const end = period === 'day'
    ? start + 86_400_000
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  if (Number.isFinite(start)) periodCache[period] = { start, end }
  return start
}

/**
 * In-memory ledger of one tenant: `record` each cost as it arrives (from events), `spent` answers in
 * O(1) with one map lookup by subject. Keeps the current period only (a cost of a later period
 * starts the sum again; one of an earlier period is too late to matter).
 */
export class MemoryBudgetLedger implements BudgetLedger {
  private readonly sums: Record<BudgetPeriod, Record<BudgetPer, Map<string, { start: number, usd: number }>>> = {
    day: { agent: new Map(), user: new Map(), tenant: new Map() },
    month: { agent: new Map(), user: new Map(), tenant: new Map() }
  }

  record (cost: { agentId: string, userId?: string | null, usd: number, at: number }): void {
    if (!Number.isFinite(cost.usd) || cost.usd <= 0) return
    const subjects: Array<[BudgetPer, string]> = [['agent', cost.agentId], ['tenant', '*']]
    if (cost.userId != null && cost.userId !== '') subjects.push(['user', cost.userId])
    for (const period of ['day', 'month'] as const) {
      const start = periodStart(period, cost.at)
      for (const [per, subject] of subjects) {
        const sums = this.sums[period][per]
        const cur = sums.get(subject)
        if (cur === undefined || cur.start < start) sums.set(subject, { start, usd: cost.usd })
        else if (cur.start === start) cur.usd += cost.usd
      }
    }
  }

  spent (per: BudgetPer, subject: string, period: BudgetPeriod, now: number): number {
    const cur = this.sums[period][per].get(subject)
    return cur !== undefined && cur.start === periodStart(period, now) ? cur.usd : 0
  }
}

export type ApprovalState = 'approved' | 'pending' | 'rejected' | 'used' | 'unknown'

/** Approvals for human_oversight. */
export interface ApprovalSource {
  /** The state of approval `approvalId` for agent `agentId` (another agent's approval is 'unknown'). */
  state (approvalId: string, agentId: string): ApprovalState
  /** Marks an approved approval used; called once the decision it allowed is made. */
  consume (approvalId: string, agentId: string): void
}

/** In-memory approvals, for tests and for the sidecar's cache. */
export class MemoryApprovals implements ApprovalSource {
  private readonly states = new Map<string, { agentId: string, state: ApprovalState }>()

  set (approvalId: string, agentId: string, state: ApprovalState): void {
    this.states.set(approvalId, { agentId, state })
  }

  state (approvalId: string, agentId: string): ApprovalState {
    const s = this.states.get(approvalId)
    return s === undefined || s.agentId !== agentId ? 'unknown' : s.state
  }

  consume (approvalId: string, agentId: string): void {
    const s = this.states.get(approvalId)
    if (s !== undefined && s.agentId === agentId && s.state === 'approved') s.state = 'used'
  }
}
