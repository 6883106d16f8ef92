/**
 * The error catalogue (decisions.md, "Errors"): every non-2xx body is
 * `{statusCode, error, message, details?}` with one of these codes.
 */

export const ERROR_CODES = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  service_unavailable: 503
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export interface ErrorDetail {
  path: string
  message: string
}

export interface ErrorBody {
  statusCode: number
  error: ErrorCode
  message: string
  details?: ErrorDetail[]
}

export class ServiceError extends Error {
  readonly statusCode: number
  constructor (
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Seconds, for 429 and 503 (sent as Retry-After). */
    readonly retryAfter?: number
  ) {
    super(message)
    this.name = 'ServiceError'
    this.statusCode = ERROR_CODES[code]
  }

  toBody (): ErrorBody {
    const body: ErrorBody = { statusCode: this.statusCode, error: this.code, message: this.message }
    if (this.details !== undefined && this.details.length > 0) body.details = this.details
    return body
  }
}

export const badRequest = (message: string, details?: ErrorDetail[]): ServiceError => new ServiceError('bad_request', message, details)
export const unauthorized = (message = 'missing or invalid API key'): ServiceError => new ServiceError('unauthorized', message)
export const forbidden = (message: string): ServiceError => new ServiceError('forbidden', message)
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message)
export const conflict = (message: string): ServiceError => new ServiceError('conflict', message)
export const rateLimited = (retryAfter: number): ServiceError =>
  new ServiceError('rate_limited', 'platform rate limit exceeded; retry later', undefined, retryAfter)
export const unavailable = (message: string, retryAfter = 1): ServiceError =>
  new ServiceError('service_unavailable', message, undefined, retryAfter)

/** 403 unless `claimed` (an `agent_id` of the path or body), when given, names the authenticated agent. */
export function ensureOwnAgentId (authenticated: string, claimed: string | undefined): void {
  if (claimed !== undefined && claimed !== authenticated) throw forbidden('agent_id does not match the authenticated agent')
}

/** The code for an HTTP status fastify (or a plugin) chose. */
export function codeForStatus (status: number): ErrorCode {
  for (const [code, s] of Object.entries(ERROR_CODES)) if (s === status) return code as ErrorCode
  return status >= 500 ? 'internal' : 'bad_request'
}
