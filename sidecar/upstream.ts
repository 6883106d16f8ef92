/**
 * The sidecar's connection to the control plane: undici with a connect timeout and a deadline per
 * request, behind a circuit breaker (design.md: "Upstream calls have timeouts; a circuit breaker
 * stops hammering a dead control plane").
 *
 * The breaker counts consecutive failures: a network error, a timeout, or a 5xx answer (a 4xx is the
 * control plane answering, not failing). After `failureThreshold` of them it opens: calls fail at once
 * with `circuit_open`, for `openMs`. Then one call is let through as a probe (half-open): its success
 * closes the breaker, its failure opens it again.
 */
import { Pool, errors as undiciErrors } from 'undici'

export interface UpstreamOptions {
  /** TCP connect timeout. */
  connectTimeoutMs: number
  /** Deadline of one call, from sending to the end of the answer's body. */
  requestTimeoutMs: number
  /** Consecutive failures that open the breaker. */
  failureThreshold: number
  /** How long the breaker stays open before it lets a probe through. */
  openMs: number
  /** Clock, for tests. */
  now?: () => number
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = {
  connectTimeoutMs: 2_000,
  requestTimeoutMs: 5_000,
  failureThreshold: 5,
  openMs: 10_000
}

export type BreakerState = 'closed' | 'open' | 'half_open'

export type UpstreamFailure = 'circuit_open' | 'timeout' | 'connect' | 'network' | 'server_error'

/** A call that did not get a usable answer: why, in a word (`kind`) and in a sentence. */
export class UpstreamError extends Error {
  constructor (readonly kind: UpstreamFailure, message: string, readonly status?: number) {
    super(message)
    this.name = 'UpstreamError'
  }
}

export interface UpstreamRequest {
  method: 'GET' | 'POST'
  /** Path and query, starting with '/'. */
  path: string
  headers?: Record<string, string>
  /** Sent as JSON. */
  body?: unknown
}

export interface UpstreamResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  /** The parsed JSON body, or undefined for an empty or non-JSON one. */
  json: unknown
  /** The body as received. */
  text: string
}

export interface UpstreamStatus {
  state: BreakerState
  consecutiveFailures: number
  /** Calls that failed (any kind but circuit_open), since start. */
  failures: number
  /** Calls refused at once because the breaker was open. */
  shortCircuited: number
}

export class Upstream {
  private readonly pool: Pool
  private readonly opts: UpstreamOptions
  private readonly now: () => number
  private state: BreakerState = 'closed'
  private consecutive = 0
  private openedAt = 0
  private probing = false
  private failures = 0
  private shortCircuited = 0

  constructor (readonly baseUrl: string, options: Partial<UpstreamOptions> = {}) {
    this.opts = { ...DEFAULT_UPSTREAM_OPTIONS, ...options }
    this.now = this.opts.now ?? Date.now
    const url = new URL(baseUrl)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`control plane URL must be http or https: ${baseUrl}`)
    this.pool = new Pool(url.origin, {
      connect: { timeout: this.opts.connectTimeoutMs },
      headersTimeout: this.opts.requestTimeoutMs,
      bodyTimeout: this.opts.requestTimeoutMs,
      connections: 16
    })
  }

  status (): UpstreamStatus {
    return { state: this.currentState(), consecutiveFailures: this.consecutive, failures: this.failures, shortCircuited: this.shortCircuited }
  }

  /** The breaker's state now ('open' turns 'half_open' once openMs has passed). */
  private currentState (): BreakerState {
    if (this.state === 'open' && this.now() - this.openedAt >= this.opts.openMs) this.state = 'half_open'
    return this.state
  }

  /** Calls the control plane. Resolves with any answer below 500; rejects with UpstreamError otherwise. */
  async request (req: UpstreamRequest): Promise<UpstreamResponse> {
    const state = this.currentState()
    if (state === 'open' || (state === 'half_open' && this.probing)) {
      this.shortCircuited++
      throw new UpstreamError('circuit_open', 'control plane unreachable (circuit open after repeated failures)')
    }
    const probe = state === 'half_open'
    if (probe) this.probing = true
    try {
      const res = await this.send(req)
      if (res.status >= 500) throw new UpstreamError('server_error', `control plane answered ${res.status}`, res.status)
      this.succeeded()
      return res
    } catch (err) {
      const e = err instanceof UpstreamError ? err : classify(err)
      this.failed()
      throw e
    } finally {
      if (probe) this.probing = false
    }
  }

  private async send (req: UpstreamRequest): Promise<UpstreamResponse> {
    const headers: Record<string, string> = { ...req.headers }
    let body: string | undefined
    if (req.body !== undefined) {
      body = JSON.stringify(req.body)
      headers['content-type'] = 'application/json'
    }
    const prefix = new URL(this.baseUrl).pathname.replace(/\/$/, '')
    const res = await this.pool.request({
      method: req.method,
      path: prefix + req.path,
      headers,
      body,
      signal: AbortSignal.timeout(this.opts.requestTimeoutMs)
    })
    const text = await res.body.text()
    let json: unknown
    if (text !== '') {
      try {
        json = JSON.parse(text)
      } catch {
        json = undefined
      }
    }
    return { status: res.statusCode, headers: res.headers as UpstreamResponse['headers'], json, text }
  }

  private succeeded (): void {
    this.consecutive = 0
    this.state = 'closed'
  }

  private failed (): void {
    this.failures++
    this.consecutive++
    if (this.state === 'half_open' || this.consecutive >= this.opts.failureThreshold) {
      this.state = 'open'
      this.openedAt = this.now()
    }
  }

  async close (): Promise<void> {
    await this.pool.close()
  }
}

/** An undici or network error as an UpstreamError. */
export function classify (err: unknown): UpstreamError {
  const e = err as { name?: string, code?: string, message?: string }
  if (err instanceof undiciErrors.ConnectTimeoutError) return new UpstreamError('connect', 'control plane connect timeout')
  if (err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError ||
      e.name === 'TimeoutError' || e.name === 'AbortError') {
    return new UpstreamError('timeout', 'control plane did not answer in time')
  }
  if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'EHOSTUNREACH' || e.code === 'ECONNRESET') {
    return new UpstreamError('connect', `control plane unreachable (${e.code})`)
  }
  return new UpstreamError('network', `control plane call failed: ${e.message ?? String(err)}`)
}
