/**
 * What both HTTP servers (the control plane and the sidecar) do alike: JSON bodies only, refused
 * before parsing when nested too deep, and every error rendered as the catalogue's body
 * (decisions.md, "Errors").
 */
import type { FastifyError, FastifyInstance } from 'fastify'
import { ServiceError, codeForStatus, type ErrorBody } from './errors.js'

/** JSON bodies nested deeper than this are refused (400) before anything walks them. */
export const MAX_BODY_DEPTH = 64

/**
 * Deepest bracket nesting of a JSON text (brackets inside strings do not count); stops past `limit`.
 * Run on the raw body before parsing, so a hostile body costs one linear scan and nothing else.
 */
export function jsonTextDepth (text: string, limit: number): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) {
      inString = true
    } else if (c === 123 || c === 91) {
      if (++depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return max
}

/**
 * Whether the text holds more than `limit` opening brackets (`{` or `[`, strings included): a text with
 * no more than that cannot nest deeper, so the character-by-character walk of jsonTextDepth is
 * skipped. Counted by native searches, a step per bracket rather than per character.
 */
export function moreBracketsThan (text: string, limit: number): boolean {
  let n = 0
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++n > limit) return true
  for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++n > limit) return true
  return false
}

/** The token of an `Authorization: Bearer <token>` header (any case, one token), else undefined. */
export function bearerToken (authorization: unknown): string | undefined {
  if (typeof authorization !== 'string') return undefined
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)
  return m === null ? undefined : m[1]
}

export function errorBody (err: FastifyError): ErrorBody {
  if (err instanceof ServiceError) return err.toBody()
  if (err.validation !== undefined) {
    const details = err.validation.map((v) => {
      const missing = (v.params as { missingProperty?: string } | undefined)?.missingProperty
      const path = missing === undefined ? v.instancePath : `${v.instancePath}/${missing}`
      const allowed = (v.params as { allowedValues?: unknown[] } | undefined)?.allowedValues
      const message = (v.message ?? 'is invalid') + (v.keyword === 'enum' && Array.isArray(allowed) ? `: ${allowed.join(', ')}` : '')
      return { path: path === '' ? '/' : path, message }
    })
    const where = err.validationContext ?? 'request'
    return { statusCode: 400, error: 'bad_request', message: `invalid ${where}: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, details }
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, error: 'payload_too_large', message: 'request body is larger than 1 MiB' }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, error: 'unsupported_media_type', message: 'send application/json' }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, error: 'bad_request', message: 'the JSON body is empty' }
  }
  const status = err.statusCode ?? 500
  if (status >= 400 && status < 500) {
    if (err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError) {
      return { statusCode: 400, error: 'bad_request', message: `malformed JSON: ${err.message}`, details: [{ path: '/', message: err.message }] }
    }
    return { statusCode: status, error: codeForStatus(status), message: err.message }
  }
  return { statusCode: 500, error: 'internal', message: 'internal error' }
}

/**
 * The JSON body parser of both servers, on a body's text: an empty (or blank) text is no body;
 * nesting over MAX_BODY_DEPTH is 400; otherwise fastify's default parser, which refuses poisoned
 * keys and words the errors. Throws what the content-type parser passes on.
 */
export function jsonBodyParser (app: FastifyInstance): (text: string) => unknown {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const strict = (text: string): unknown => {
    // fastify's default parser answers synchronously.
    let value: unknown
    let error: Error | null = null
    parseJson(undefined as never, text, (err, parsed) => {
      error = err
      value = parsed
    })
    if (error !== null) throw error
    return value
  }
  return (text) => {
    if (text.trim() === '') return undefined
    if (moreBracketsThan(text, MAX_BODY_DEPTH) && jsonTextDepth(text, MAX_BODY_DEPTH) > MAX_BODY_DEPTH) {
      throw new ServiceError('bad_request', `JSON nested deeper than ${MAX_BODY_DEPTH} levels`)
    }
    // A text that cannot hold a `__proto__` or `constructor` key, even escaped, needs no poisoning
    // check: JSON.parse alone (the default parser's two regular-expression scans cost more than the
    // parse of a typical /evaluate body). Anything else, and every malformed text, goes through the
    // default parser.
    if (text.charCodeAt(0) !== 0xFEFF && !text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u')) {
      try {
        return JSON.parse(text)
      } catch {}
    }
    return strict(text)
  }
}

/** JSON request bodies only (415 otherwise), parsed by jsonBodyParser. */
export function useJsonBodies (app: FastifyInstance, bodyLimit: number): (text: string) => unknown {
  const parse = jsonBodyParser(app)
  app.removeContentTypeParser('text/plain')
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    let value: unknown
    try {
      value = parse(typeof body === 'string' ? body : body.toString('utf8'))
    } catch (err) {
      done(err as Error, undefined)
      return
    }
    done(null, value)
  })
  return parse
}

/** An error as both servers answer it: the catalogue's body, and `Retry-After` when it says when to retry. */
export function errorReply (err: FastifyError): { body: ErrorBody, retryAfter: string | undefined } {
  const retryAfter = err instanceof ServiceError && err.retryAfter !== undefined ? String(err.retryAfter) : undefined
  return { body: errorBody(err), retryAfter }
}

/**
 * errorReply as text, for answers written without fastify (the fast lane); a 5xx is logged to `log`
 * when given, as the servers' error handlers log theirs.
 */
export function renderError (err: unknown, log?: { error: (obj: object, msg: string) => void }): { statusCode: number, body: string, headers?: Record<string, string> } {
  const { body, retryAfter } = errorReply(err as FastifyError)
  if (body.statusCode >= 500) log?.error({ err }, 'request failed')
  return { statusCode: body.statusCode, body: JSON.stringify(body), ...(retryAfter !== undefined ? { headers: { 'retry-after': retryAfter } } : {}) }
}
