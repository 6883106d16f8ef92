/**
 * The platform rate limit (429 with Retry-After), separate from policy rate limits: a fixed window per
 * key (agent key hash, bootstrap token). Memory is bounded: a window's counts are dropped when the
 * next window starts.
 */
export class WindowLimiter {
  private window = -1
  private counts = new Map<string, number>()

  constructor (private readonly limit: number, private readonly windowMs: number) {}

  /** Counts one request under `key`; returns 0 when allowed, else the seconds until the next window. */
  hit (key: string, now = Date.now()): number {
    const w = Math.floor(now / this.windowMs)
    if (w !== this.window) {
      this.window = w
      this.counts = new Map()
    }
    const n = (this.counts.get(key) ?? 0) + 1
    this.counts.set(key, n)
    if (n <= this.limit) return 0
    return Math.max(1, Math.ceil(((w + 1) * this.windowMs - now) / 1000))
  }
}
