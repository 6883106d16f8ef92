/**
 * The sidecar's config cache (design.md: "the last good config is persisted to disk and used after a
 * restart while the control plane is unreachable"): per agent key (by its SHA-256 hash, never the
 * key), the last good v1 config and the enforcer compiled from it. Every config put is written to
 * `<dir>/<key hash>.json` atomically (a temporary file, fsync, rename; mode 0600), and `loadPersisted`
 * reads them all back at start. A config is stale `config_refresh_interval_seconds` after it was
 * fetched; a stale config is still enforced until a fresh one arrives.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import type { ConfigResponse } from '../shared/contracts/v1.js'
import type { PolicySetOptions } from '../shared/policy/index.js'
import { Enforcer } from './enforcer.js'

export interface CachedConfig {
  config: ConfigResponse
  /** For a legacy key: the control plane's legacy /config answer, served as it came. */
  legacy?: Record<string, unknown>
  enforcer: Enforcer
  /** When the config was fetched (ms); for a config loaded from disk, when it was written. */
  fetchedAt: number
}

export interface ConfigCacheOptions {
  /** Options of every compiled policy set (one long-lived rate counter store, so counts survive). */
  policySet?: PolicySetOptions
  /** Told about a persisted file that cannot be read back (it is skipped). */
  onBadFile?: (file: string, err: Error) => void
  now?: () => number
}

const KEY_HASH = /^[0-9a-f]{64}$/
/** Refresh after this long when a config carries no interval of its own. */
const DEFAULT_REFRESH_MS = 300_000

export class ConfigCache {
  private readonly entries = new Map<string, CachedConfig>()
  private readonly now: () => number

  constructor (private readonly dir: string, private readonly opts: ConfigCacheOptions = {}) {
    this.now = opts.now ?? Date.now
    mkdirSync(dir, { recursive: true, mode: 0o700 })
  }

  get (keyHash: string): CachedConfig | undefined {
    return this.entries.get(keyHash)
  }

  /** The key hashes with a config. */
  keys (): string[] {
    return [...this.entries.keys()]
  }

  /**
   * Compiles and caches a config fetched for the agent of `keyHash`, and writes it to disk. A config
   * that cannot be compiled throws, and neither the cache nor the disk changes.
   */
  put (keyHash: string, config: ConfigResponse, legacy?: Record<string, unknown>): CachedConfig {
    if (!KEY_HASH.test(keyHash)) throw new TypeError('keyHash must be a SHA-256 hex digest')
    const entry: CachedConfig = { config, enforcer: new Enforcer(config, this.opts.policySet), fetchedAt: this.now(), ...(legacy !== undefined ? { legacy } : {}) }
    this.persist(keyHash, { fetched_at: entry.fetchedAt, config, ...(legacy !== undefined ? { legacy } : {}) })
    this.entries.set(keyHash, entry)
    return entry
  }

  /** Forgets an agent's config (its key was revoked), on disk too. */
  delete (keyHash: string): void {
    this.entries.delete(keyHash)
    if (KEY_HASH.test(keyHash)) rmSync(join(this.dir, `${keyHash}.json`), { force: true })
  }

  /** Whether an entry is due for a refresh. */
  isStale (entry: CachedConfig): boolean {
    const seconds = entry.config.config?.config_refresh_interval_seconds
    const refreshMs = typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : DEFAULT_REFRESH_MS
    return this.now() - entry.fetchedAt >= refreshMs
  }

  /** Loads every persisted config (at start); returns how many. Unreadable files are reported and skipped. */
  loadPersisted (): number {
    let loaded = 0
    for (const file of readdirSync(this.dir)) {
      const m = /^([0-9a-f]{64})\.json$/.exec(file)
      if (m === null) continue
      const path = join(this.dir, file)
      try {
        const saved = JSON.parse(readFileSync(path, 'utf8')) as { fetched_at?: unknown, config?: ConfigResponse, legacy?: unknown }
        if (saved.config === undefined || typeof saved.fetched_at !== 'number') throw new Error('not a saved config')
        const config = saved.config
        const legacy = saved.legacy !== null && typeof saved.legacy === 'object' && !Array.isArray(saved.legacy) ? saved.legacy as Record<string, unknown> : undefined
        this.entries.set(m[1] as string, { config, enforcer: new Enforcer(config, this.opts.policySet), fetchedAt: saved.fetched_at, ...(legacy !== undefined ? { legacy } : {}) })
        loaded++
      } catch (err) {
        this.opts.onBadFile?.(path, err as Error)
      }
    }
    return loaded
  }

  private persist (keyHash: string, value: unknown): void {
    const final = join(this.dir, `${keyHash}.json`)
    const tmp = `${final}.${process.pid}.tmp`
    const fd = openSync(tmp, 'w', 0o600)
    let written = false
    try {
      writeSync(fd, JSON.stringify(value))
      fsyncSync(fd)
      written = true
    } finally {
      closeSync(fd)
      if (!written) rmSync(tmp, { force: true })
    }
    renameSync(tmp, final)
  }
}
