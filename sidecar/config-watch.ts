/**
 * Config pushed by the control plane (issue 4): for each agent it knows, the sidecar holds the
 * server-sent event stream GET /v1/config/{agent_id}/watch open (a legacy key: GET /config/watch,
 * whose events are legacy /config answers). A `config` event replaces the cached config at once;
 * `revoked` forgets the key and its config. A stream that ends or fails is opened
 * again after a delay that doubles from `baseMs` to `maxMs` (with full jitter), and resets once a
 * stream delivers an event.
 */
import { request } from 'undici'
import { readEvents } from '../shared/sse.js'

export interface WatchTarget {
  keyHash: string
  /** A v1 key watches the v1 route; a legacy key (bearer) the legacy one. */
  contract: 'v1' | 'legacy'
  key: string
  agentId: string
}

export interface ConfigWatchOptions {
  apiName: string
  baseMs: number
  maxMs: number
  connectTimeoutMs: number
  /** A pushed config: a v1 config document, or for a legacy key a legacy /config answer. */
  onConfig: (target: WatchTarget, config: unknown) => void
  onRevoked: (target: WatchTarget) => void
  onProblem?: (message: string) => void
  random?: () => number
}

interface Stream {
  target: WatchTarget
  abort: AbortController
  failures: number
  timer: NodeJS.Timeout | null
}

export class ConfigWatch {
  private readonly streams = new Map<string, Stream>()
  private stopped = false

  constructor (private readonly baseUrl: string, private readonly opts: ConfigWatchOptions) {}

  /** Starts watching an agent's config, unless it is watched already. */
  ensure (target: WatchTarget): void {
    if (this.stopped || this.streams.has(target.keyHash)) return
    const stream: Stream = { target, abort: new AbortController(), failures: 0, timer: null }
    this.streams.set(target.keyHash, stream)
    void this.run(stream)
  }

  /** Stops watching an agent (its key was revoked or deregistered). */
  forget (keyHash: string): void {
    const s = this.streams.get(keyHash)
    if (s === undefined) return
    this.streams.delete(keyHash)
    if (s.timer !== null) clearTimeout(s.timer)
    s.abort.abort()
  }

  watched (): string[] {
    return [...this.streams.keys()]
  }

  stop (): void {
    this.stopped = true
    for (const keyHash of [...this.streams.keys()]) this.forget(keyHash)
  }

  private async run (s: Stream): Promise<void> {
    const { target } = s
    let delivered = false
    try {
      const name = this.opts.apiName
      const [path, auth] = target.contract === 'v1'
        ? [`/api/${name}/v1/config/${encodeURIComponent(target.agentId)}/watch`, { [`x-${name}-key`]: target.key }]
        : [`/api/${name}/config/watch`, { authorization: `Bearer ${target.key}` }]
      const res = await request(`${this.baseUrl}${path}`, {
        headers: { ...auth, accept: 'text/event-stream' },
        signal: s.abort.signal,
        headersTimeout: this.opts.connectTimeoutMs,
        bodyTimeout: 0
      })
      if (res.statusCode === 401 || res.statusCode === 403) {
        await res.body.dump()
        this.forget(target.keyHash)
        this.opts.onRevoked(target)
        return
      }
      if (res.statusCode !== 200) {
        await res.body.dump()
        throw new Error(`config watch answered ${res.statusCode}`)
      }
      let revoked = false
      await readEvents(res.body, (event, data) => {
        if (event === 'message') return undefined // the stream names every event it sends
        delivered = true
        s.failures = 0
        if (event === 'config') this.opts.onConfig(target, JSON.parse(data) as unknown)
        if (event === 'revoked') revoked = true
        return revoked
      })
      if (revoked) {
        this.forget(target.keyHash)
        this.opts.onRevoked(target)
        return
      }
    } catch (err) {
      if (s.abort.signal.aborted) return
      this.opts.onProblem?.(`config watch of ${target.agentId}: ${(err as Error).message}`)
    }
    if (this.streams.get(target.keyHash) !== s) return
    if (!delivered) s.failures++
    const cap = Math.min(this.opts.maxMs, this.opts.baseMs * 2 ** Math.min(s.failures, 20))
    const delay = Math.floor((this.opts.random ?? Math.random)() * cap) + 1
    s.timer = setTimeout(() => {
      s.timer = null
      if (this.streams.get(target.keyHash) === s) void this.run(s)
    }, delay)
    s.timer.unref()
  }
}
