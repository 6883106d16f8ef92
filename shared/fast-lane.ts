/**
 * The fast lane: a server's hottest route (POST /evaluate) answered next to fastify rather than
 * through it, for the requests that need nothing but the decision.
 *
 * Why: a decision costs a few microseconds; fastify's per-request machinery (request and reply
 * objects, the hook runners, the content-type parser's stream handling, the reply's send pipeline)
 * costs about as much again. The lane reads the body, runs the same steps in the same order with the
 * same functions, and writes the answer straight to node's response.
 *
 * What it takes: a POST to the route's exact path, with `content-type: application/json`, a
 * `content-length` within the body limit, and a request the route can `claim` from its headers alone
 * (for /evaluate: an agent key already cached, with its policies compiled). Everything else goes to
 * fastify untouched, before a byte of the body is read: other routes, query strings, chunked bodies,
 * other media types, empty or oversized bodies, unknown keys, a server that is closing. So fastify
 * keeps every edge (413, 415, 503 when closing, the first request of an agent) and the lane only
 * the steady state.
 *
 * Same answers: the lane runs the route's steps in fastify's order (the onRequest check, the JSON
 * parser, the body schema through the app's own compiled validator, the handler) and renders a refusal
 * with the app's error renderer, so its answers equal fastify's byte for byte (tested against
 * `inject`, which never takes the lane). The route's onResponse work (metrics, stats) is its `served`.
 *
 * It is off when fastify logs every request (LOG_LEVEL debug or trace), so that no request goes
 * unlogged.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { ByteSlab } from './bytes.js'

/** A validator as fastify's compiler makes it (ajv): mutates `parentData[parentDataProperty]` as fastify's does. */
export interface BodyValidator {
  (data: unknown, ctx?: { parentData: Record<string, unknown>, parentDataProperty: string }): boolean
  errors?: unknown[] | null
}

export interface FastRoute<S> {
  /** The exact path of a POST route that fastify serves too (the same route, its slow path). */
  path: string
  /** The route's body schema, compiled by the app's validator compiler at the first request. */
  bodySchema: unknown
  /**
   * From the request's headers alone, with no side effect: the state the lane answers with, or
   * undefined to leave the request to fastify.
   */
  claim: (req: IncomingMessage) => S | undefined
  /** What the route's onRequest hook does (authentication, rate limit): throws to refuse. */
  admit: (state: S) => void
  /** The handler: the 200 answer to an admitted request with a valid body, as JSON text or its UTF-8 bytes; throws to refuse. May be async. */
  answer: (state: S, body: Record<string, unknown>) => Answer | Promise<Answer>
  /** After the response is written, what the route's onResponse hooks do (metrics, stats). */
  served: (state: S, statusCode: number, ms: number) => void
}

/** How the app refuses: status, JSON text and extra headers for a thrown error (its error handler's rendering). */
export type ErrorRenderer = (err: unknown) => { statusCode: number, body: string, headers?: Record<string, string> }

export interface FastLaneOptions {
  bodyLimit: number
  /** The app's JSON body parser on a text (throws what the content-type parser would pass on). */
  parse: (text: string) => unknown
  renderError: ErrorRenderer
}

const JSON_UTF8 = 'application/json; charset=utf-8'

/** An answer's JSON: as text, or as its UTF-8 bytes. */
export type Answer = string | Uint8Array

interface Lane {
  route: FastRoute<unknown>
  /** The instance (plugin context) the route is registered in: its validator compiler is the route's. */
  context: FastifyInstance
  validate: BodyValidator | undefined
}

export class FastLane {
  private readonly lanes = new Map<string, Lane>()
  private opts: FastLaneOptions | undefined
  private closing = false
  /** Requests answered by the lane (tests can tell the lane is in use). */
  served = 0
  private readonly bytes = new ByteSlab()

  constructor (private readonly enabled: boolean) {}

  /** Whether the lane takes requests: on, and the app not closing. */
  get open (): boolean {
    return this.enabled && !this.closing
  }

  /**
   * fastify's `serverFactory`: the HTTP server fastify would make (the same timeouts), whose requests
   * go to the lane first.
   */
  readonly serverFactory = (handler: RequestListener, options: FastifyServerOptions): Server => {
    const server = createServer((options as { http?: ServerOptions }).http ?? {}, (req, res) => {
      if (!this.take(req, res)) handler(req, res)
    })
    server.keepAliveTimeout = options.keepAliveTimeout ?? 72_000
    server.requestTimeout = options.requestTimeout ?? 0
    server.setTimeout(options.connectionTimeout ?? 0)
    if (options.maxRequestsPerSocket !== undefined && options.maxRequestsPerSocket !== null && options.maxRequestsPerSocket > 0) {
      server.maxRequestsPerSocket = options.maxRequestsPerSocket
    }
    return server
  }

  /** Binds the lane to its app: the body parser and error renderer; stops taking requests once the app closes. */
  attach (app: FastifyInstance, options: FastLaneOptions): void {
    this.opts = options
    app.addHook('preClose', (done) => {
      this.closing = true
      done()
    })
  }

  /** Adds a lane for a route that `context` (the plugin instance it is registered in) serves too. */
  add<S>(context: FastifyInstance, route: FastRoute<S>): void {
    this.lanes.set(route.path, { route: route as FastRoute<unknown>, context, validate: undefined })
  }

  /** Takes a request (true) or leaves it to fastify (false); reads nothing of a request it leaves. */
  private take (req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.open || req.method !== 'POST') return false
    const lane = this.lanes.get(req.url as string)
    const opts = this.opts
    if (lane === undefined || opts === undefined) return false
    const headers = req.headers
    if (!isJson(headers['content-type']) || headers['transfer-encoding'] !== undefined) return false
    const length = Number(headers['content-length'])
    if (!(length > 0 && length <= opts.bodyLimit)) return false
    let state: unknown
    try {
      state = lane.route.claim(req)
    } catch {
      return false // a claim that fails is no claim: fastify answers, as it would without the lane
    }
    if (state === undefined) return false
    const start = performance.now()
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8')
      this.respond(lane, state, text, res, start)
    })
    req.on('error', () => res.destroy())
    return true
  }

  private respond (lane: Lane, state: unknown, text: string, res: ServerResponse, start: number): void {
    const { route } = lane
    let out: Answer | Promise<Answer>
    try {
      route.admit(state)
      const holder: Record<string, unknown> = { body: (this.opts as FastLaneOptions).parse(text) }
      const validate = lane.validate ?? (lane.validate = compile(lane))
      if (!validate(holder.body ?? null, { parentData: holder, parentDataProperty: 'body' })) {
        throw Object.assign(new Error('invalid body'), { statusCode: 400, code: 'FST_ERR_VALIDATION', validation: validate.errors ?? [], validationContext: 'body' })
      }
      out = route.answer(state, holder.body as Record<string, unknown>)
    } catch (err) {
      this.refuse(lane, state, err, res, start)
      return
    }
    if (!(out instanceof Promise)) this.send(lane, state, 200, out, undefined, res, start)
    else out.then((json) => this.send(lane, state, 200, json, undefined, res, start), (err: unknown) => this.refuse(lane, state, err, res, start))
  }

  private refuse (lane: Lane, state: unknown, err: unknown, res: ServerResponse, start: number): void {
    const r = (this.opts as FastLaneOptions).renderError(err)
    this.send(lane, state, r.statusCode, r.body, r.headers, res, start)
  }

  private send (lane: Lane, state: unknown, statusCode: number, json: Answer, extra: Record<string, string> | undefined, res: ServerResponse, start: number): void {
    if (res.destroyed) return
    // Bytes, so that node writes the header and the body together without joining them into another
    // string, and the body's length is known without a pass over the text.
    const bytes = typeof json === 'string' ? this.bytes.join([json]) : json
    const headers: Record<string, string | number> = { 'content-type': JSON_UTF8, 'content-length': bytes.length, ...extra }
    res.writeHead(statusCode, headers)
    res.end(bytes)
    this.served++
    lane.route.served(state, statusCode, performance.now() - start)
  }

}

/** The route's body validator, made by its context's compiler (the same ajv settings and shared schemas). */
function compile ({ context, route }: Lane): BodyValidator {
  const compiler = context.validatorCompiler
  if (compiler === undefined) throw new Error(`fast lane: no validator compiler for ${route.path}`)
  return compiler({ schema: route.bodySchema as object, method: 'POST', url: route.path, httpPart: 'body' }) as BodyValidator
}

/**
 * `application/json`, bare or with `charset=utf-8`: what agents send. Any other spelling is left to
 * fastify's content-type matching, whatever it decides.
 */
function isJson (contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  if (contentType === 'application/json' || contentType === JSON_UTF8) return true
  const ct = contentType.toLowerCase()
  return ct === 'application/json' || ct === JSON_UTF8 || ct === 'application/json;charset=utf-8'
}
