/**
 * The last `/secrets` answer of each agent, in memory only (never on disk) and only until its
 * `expires_at`: served when the control plane cannot be reached, so that an agent restarting during
 * an outage still gets its credentials while they are valid. An entry is dropped at its expiry by a
 * timer, when its key is revoked or deregistered, and when the sidecar stops.
 */

interface Entry {
  body: unknown
  expiresAt: number
  timer: NodeJS.Timeout
}

/** setTimeout's longest delay (about 24.8 days); a later expiry is re-armed when it fires. */
const MAX_DELAY_MS = 2 ** 31 - 1

export class SecretsCache {
  /** By key hash, then by path (`/secrets` or `/secrets/<agent id>`). */
  private readonly entries = new Map<string, Map<string, Entry>>()

  constructor (private readonly now: () => number = Date.now) {}

  /**
   * Keeps a 200 answer until its `expires_at`. An answer without a valid future `expires_at` is not
   * kept (nothing says how long it may be used).
   */
  put (keyHash: string, path: string, body: unknown): boolean {
    const raw = (body as { expires_at?: unknown } | null | undefined)?.expires_at
    const expiresAt = typeof raw === 'string' ? Date.parse(raw) : NaN
    this.drop(keyHash, path)
    if (!Number.isFinite(expiresAt) || expiresAt <= this.now()) return false
    let byPath = this.entries.get(keyHash)
    if (byPath === undefined) {
      byPath = new Map()
      this.entries.set(keyHash, byPath)
    }
    byPath.set(path, { body, expiresAt, timer: this.arm(keyHash, path, expiresAt) })
    return true
  }

  /** The kept answer, if it has not expired. */
  get (keyHash: string, path: string): unknown {
    const e = this.entries.get(keyHash)?.get(path)
    if (e === undefined) return undefined
    if (e.expiresAt <= this.now()) {
      this.drop(keyHash, path)
      return undefined
    }
    return e.body
  }

  /** Drops every answer of a key (revoked, deregistered). */
  forget (keyHash: string): void {
    const byPath = this.entries.get(keyHash)
    if (byPath === undefined) return
    for (const e of byPath.values()) clearTimeout(e.timer)
    this.entries.delete(keyHash)
  }

  /** Drops everything (the sidecar stops). */
  clear (): void {
    for (const keyHash of [...this.entries.keys()]) this.forget(keyHash)
  }

  /** Answers kept, over all keys. */
  get size (): number {
    let n = 0
    for (const byPath of this.entries.values()) n += byPath.size
    return n
  }

  private arm (keyHash: string, path: string, expiresAt: number): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const e = this.entries.get(keyHash)?.get(path)
      if (e === undefined || e.timer !== timer) return
      if (e.expiresAt <= this.now()) this.drop(keyHash, path)
      else e.timer = this.arm(keyHash, path, e.expiresAt)
    }, Math.min(MAX_DELAY_MS, Math.max(0, expiresAt - this.now())))
    timer.unref()
    return timer
  }

  private drop (keyHash: string, path: string): void {
    const byPath = this.entries.get(keyHash)
    const e = byPath?.get(path)
    if (byPath === undefined || e === undefined) return
    clearTimeout(e.timer)
    byPath.delete(path)
    if (byPath.size === 0) this.entries.delete(keyHash)
  }
}
