/**
 * Who calls the management API (decisions.md, "User JWT"): `Authorization: Bearer <jwt>`, verified
 * with jose. HS256 against SERVICE_JWT_SECRET, or RS256/ES256 against the keys at SERVICE_JWKS_URL
 * (jose caches them and fetches again for an unknown `kid`). The algorithm is pinned by the key kind,
 * so `alg: none` and an HS256 token signed with a public key are refused. Claims: `sub`, `tenant_id`
 * (a UUID), `role` (`admin` or `viewer`), `exp` (required). In open mode a request without a token
 * acts as admin of the default tenant; a token, if sent, is still verified.
 */
import { SignJWT, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose'
import { unauthorized, unavailable } from '../../shared/errors.js'
import { isUuid } from '../../shared/keys.js'
import { bearerToken } from '../../shared/http.js'

export type Role = 'admin' | 'viewer'

export interface User {
  sub: string
  tenantId: string
  role: Role
}

export interface UserAuthOptions {
  jwtSecret: string | null
  jwksUrl: string | null
  authMode: 'jwt' | 'open'
  defaultTenantId: string
}

const HMAC_ALGS = ['HS256']
const PUBLIC_ALGS = ['RS256', 'ES256']

export class UserAuth {
  private readonly secret: Uint8Array | null
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | null

  constructor (private readonly opts: UserAuthOptions) {
    this.secret = opts.jwtSecret === null ? null : new TextEncoder().encode(opts.jwtSecret)
    this.jwks = opts.jwksUrl === null ? null : createRemoteJWKSet(new URL(opts.jwksUrl))
  }

  /** Whether any way of verifying a token is configured (else only open mode lets anyone in). */
  get configured (): boolean {
    return this.secret !== null || this.jwks !== null
  }

  /** The caller of a request, from its Authorization header; throws 401 with the reason. */
  async user (authorization: string | undefined): Promise<User> {
    if (authorization === undefined && this.opts.authMode === 'open') return { sub: 'open-mode', tenantId: this.opts.defaultTenantId, role: 'admin' }
    const token = bearerToken(authorization)
    if (token === undefined) throw unauthorized(authorization === undefined ? 'missing bearer token' : 'malformed Authorization header (expected Bearer <jwt>)')
    let alg: string | undefined
    try {
      alg = decodeProtectedHeader(token).alg
    } catch {
      throw unauthorized('malformed token')
    }
    let payload: JWTPayload
    try {
      if (alg !== undefined && HMAC_ALGS.includes(alg) && this.secret !== null) {
        payload = (await jwtVerify(token, this.secret, { algorithms: HMAC_ALGS, requiredClaims: ['exp', 'sub'] })).payload
      } else if (alg !== undefined && PUBLIC_ALGS.includes(alg) && this.jwks !== null) {
        payload = (await jwtVerify(token, this.jwks, { algorithms: PUBLIC_ALGS, requiredClaims: ['exp', 'sub'] })).payload
      } else {
        throw unauthorized(this.configured ? `token algorithm ${String(alg)} is not accepted` : 'no way of verifying tokens is configured (SERVICE_JWT_SECRET or SERVICE_JWKS_URL)')
      }
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 401) throw err
      const code = (err as { code?: unknown }).code
      // The key set could not be had (down, slow, not a key set): the server's problem, not the token's.
      if (typeof code !== 'string' || !code.startsWith('ERR_') || code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JWKS_INVALID') {
        throw unavailable(`cannot get the signing keys from SERVICE_JWKS_URL: ${(err as Error).message}`, 5)
      }
      throw unauthorized(code === 'ERR_JWT_EXPIRED' ? 'token expired' : `invalid token: ${(err as Error).message}`)
    }
    const tenantId = payload.tenant_id
    const role = payload.role
    if (typeof payload.sub !== 'string' || payload.sub === '') throw unauthorized('invalid token: sub is missing')
    if (typeof tenantId !== 'string' || !isUuid(tenantId)) throw unauthorized('invalid token: tenant_id must be a tenant id (UUID)')
    if (role !== 'admin' && role !== 'viewer') throw unauthorized('invalid token: role must be admin or viewer')
    return { sub: payload.sub, tenantId, role }
  }
}

/** The session cookie the portal keeps the user's JWT in (decisions.md; issue 6). */
export const SESSION_COOKIE = 'agentgov_session'

/**
 * The credentials of a request as an Authorization header value: the header itself, or else the
 * session cookie's JWT as a bearer token.
 */
export function credentialsOf (headers: { authorization?: string, cookie?: string }): string | undefined {
  if (typeof headers.authorization === 'string') return headers.authorization
  if (typeof headers.cookie !== 'string') return undefined
  for (const part of headers.cookie.split(';')) {
    const eq = part.indexOf('=')
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim()
      return value === '' ? undefined : `Bearer ${decodeURIComponent(value)}`
    }
  }
  return undefined
}

/** An onRequest/preHandler hook that puts the verified user on req.user (401 otherwise). */
export function userHook (auth: UserAuth) {
  return async (req: { headers: { authorization?: string, cookie?: string }, user: User | null }): Promise<void> => {
    req.user = await auth.user(credentialsOf(req.headers))
  }
}

/** An HS256 user token (`agentgov admin jwt`, tests). */
export async function mintUserToken (secret: string, claims: { sub: string, tenantId: string, role: Role }, ttlSeconds: number): Promise<string> {
  return await new SignJWT({ tenant_id: claims.tenantId, role: claims.role })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret))
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The user of a management request (GraphQL, settings, assistant), once authenticated. */
    user: User | null
  }
}

