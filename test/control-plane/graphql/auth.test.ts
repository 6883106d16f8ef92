/**
 * The management API's user authentication (control-plane/graphql/auth.ts; decisions.md "User JWT"):
 * HS256 against the configured secret, RS256/ES256 against a JWKS, `alg: none` and algorithm
 * confusion refused, the required claims (`exp`, `sub`, `tenant_id` as a UUID, `role`), open mode,
 * and the tokens `mintUserToken` issues.
 */
import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT, UnsecuredJWT, decodeJwt, decodeProtectedHeader, exportJWK, exportSPKI, generateKeyPair, jwtVerify, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import { UserAuth, mintUserToken, type UserAuthOptions } from '../../../control-plane/graphql/auth.js'
import { ServiceError } from '../../../shared/errors.js'

const SECRET = 'test-user-jwt-secret-0123456789-abcdefghij'
const OTHER_SECRET = 'another-user-jwt-secret-9876543210-zyxwvuts'
const DEFAULT_TENANT_ID = '00000000-0000-0000-0000-000000000001'
const TENANT_ID = '6f1c2f4e-8a3b-4c5d-9e7f-0a1b2c3d4e5f'

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)
const now = (): number => Math.floor(Date.now() / 1000)
const b64url = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')

function auth (opts: Partial<UserAuthOptions> = {}): UserAuth {
  return new UserAuth({ jwtSecret: null, jwksUrl: null, authMode: 'jwt', defaultTenantId: DEFAULT_TENANT_ID, ...opts })
}

/** An HS256 token with exactly these claims (nothing added), signed with `secret`. */
async function hs256 (claims: JWTPayload, secret: string | Uint8Array = SECRET): Promise<string> {
  return await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(typeof secret === 'string' ? enc(secret) : secret)
}

/** Valid claims for a user token; override or drop (`undefined`) members per test. */
function claims (over: Record<string, unknown> = {}): JWTPayload {
  const c: Record<string, unknown> = { sub: 'user-1', tenant_id: TENANT_ID, role: 'admin', iat: now(), exp: now() + 300, ...over }
  for (const k of Object.keys(c)) if (c[k] === undefined) delete c[k]
  return c as JWTPayload
}

/** A 401 ServiceError whose message matches `message`. */
function is401 (message: RegExp): { name: string, code: string, statusCode: number, message: RegExp } {
  return { name: 'ServiceError', code: 'unauthorized', statusCode: 401, message }
}

/** Serves `{keys}` as a JWKS on 127.0.0.1 (closed at the end of `t`); returns its URL and a hit counter. */
async function jwksServer (t: Test, keys: JWK[]): Promise<{ url: string, hits: () => number }> {
  let hits = 0
  const server = createServer((_req, res) => {
    hits++
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/.well-known/jwks.json`, hits: () => hits }
}

/** An ES256 key pair, and its public JWK with `kid` and `alg`. */
async function es256Key (kid: string): Promise<{ privateKey: CryptoKey, publicKey: CryptoKey, jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }
  return { privateKey, publicKey, jwk }
}

async function es256 (privateKey: CryptoKey, kid: string, c: JWTPayload = claims()): Promise<string> {
  return await new SignJWT(c).setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' }).sign(privateKey)
}

// --- HS256 with the configured secret ---------------------------------------------------------

t.test('HS256: a minted admin token, secret configured -> the admin user with sub and tenantId', async (t) => {
  const token = await mintUserToken(SECRET, { sub: 'alice', tenantId: TENANT_ID, role: 'admin' }, 300)
  t.strictSame(await auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), { sub: 'alice', tenantId: TENANT_ID, role: 'admin' })
})

t.test('HS256: a minted viewer token, secret configured -> the viewer user with sub and tenantId', async (t) => {
  const token = await mintUserToken(SECRET, { sub: 'bob@example.com', tenantId: DEFAULT_TENANT_ID, role: 'viewer' }, 60)
  t.strictSame(await auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), { sub: 'bob@example.com', tenantId: DEFAULT_TENANT_ID, role: 'viewer' })
})

t.test('HS256: a hand-signed token with the configured secret -> the user from its claims', async (t) => {
  const token = await hs256(claims({ sub: 'carol', role: 'viewer' }))
  t.strictSame(await auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), { sub: 'carol', tenantId: TENANT_ID, role: 'viewer' })
})

t.test('HS256: the scheme word in another case (bearer) -> accepted', async (t) => {
  const token = await hs256(claims())
  t.match(await auth({ jwtSecret: SECRET }).user(`bearer ${token}`), { sub: 'user-1', role: 'admin' })
})

// --- the header --------------------------------------------------------------------------------

t.test('header: no Authorization header in jwt mode -> 401 missing bearer token', async (t) => {
  await t.rejects(auth({ jwtSecret: SECRET }).user(undefined), is401(/^missing bearer token$/))
})

t.test('header: not `Bearer <token>` -> 401 malformed Authorization header', async (t) => {
  const token = await hs256(claims())
  const a = auth({ jwtSecret: SECRET })
  for (const header of [token, `Basic ${token}`, 'Bearer', 'Bearer ', '', `Bearer ${token} extra`, `Token ${token}`]) {
    await t.rejects(a.user(header), is401(/malformed Authorization header/), JSON.stringify(header.slice(0, 20)))
  }
})

t.test('header: a non-JWT string as the bearer token -> 401 malformed token', async (t) => {
  const a = auth({ jwtSecret: SECRET })
  for (const token of ['not-a-jwt', 'abc.def.ghi', 'sk_live_0123456789']) {
    await t.rejects(a.user(`Bearer ${token}`), is401(/^malformed token$/), token)
  }
})

t.test('header: the thrown error is a ServiceError whose body is 401 unauthorized', async (t) => {
  const err = await auth({ jwtSecret: SECRET }).user(undefined).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof ServiceError, 'a ServiceError')
  t.match((err as ServiceError).toBody(), { statusCode: 401, error: 'unauthorized', message: 'missing bearer token' })
})

// --- verification failures ---------------------------------------------------------------------

t.test('exp: a token whose exp is in the past -> 401 token expired', async (t) => {
  const token = await new SignJWT({ tenant_id: TENANT_ID, role: 'admin' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('user-1')
    .setIssuedAt(now() - 3600)
    .setExpirationTime(now() - 60)
    .sign(enc(SECRET))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^token expired$/))
})

t.test('signature: an HS256 token signed with another secret -> 401 invalid token', async (t) => {
  const token = await hs256(claims(), OTHER_SECRET)
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token: .*signature/))
})

t.test('signature: a valid token with its signature tampered -> 401 invalid token', async (t) => {
  const token = await hs256(claims())
  const [h, p, s] = token.split('.') as [string, string, string]
  const forgedPayload = b64url({ ...decodeJwt(token), role: 'admin', tenant_id: DEFAULT_TENANT_ID })
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${h}.${forgedPayload}.${s}`), is401(/^invalid token/), 'payload swapped')
  const flipped = (s[0] === 'A' ? 'B' : 'A') + s.slice(1)
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${h}.${p}.${flipped}`), is401(/^invalid token/), 'signature changed')
})

t.test('alg none: a hand-built unsecured JWT, secret configured -> 401 algorithm not accepted', async (t) => {
  const token = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims())}.`
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/algorithm none is not accepted/))
})

t.test('alg none: jose UnsecuredJWT, secret and JWKS configured -> 401', async (t) => {
  const { jwk } = await es256Key('k1')
  const { url } = await jwksServer(t, [jwk])
  const token = new UnsecuredJWT(claims()).encode()
  await t.rejects(auth({ jwtSecret: SECRET, jwksUrl: url }).user(`Bearer ${token}`), is401(/algorithm none is not accepted/))
})

t.test('alg none: an unsecured JWT in open mode -> 401 (not admin)', async (t) => {
  const token = new UnsecuredJWT(claims({ role: 'admin' })).encode()
  await t.rejects(auth({ jwtSecret: SECRET, authMode: 'open' }).user(`Bearer ${token}`), is401(/not accepted/))
})

t.test('alg none: an HS256-headed token with an empty signature -> 401 invalid token', async (t) => {
  const token = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url(claims())}.`
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token/))
})

// --- claims ------------------------------------------------------------------------------------

t.test('claims: a token without exp -> 401 naming exp', async (t) => {
  const token = await hs256(claims({ exp: undefined }))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token: .*"exp"/))
})

t.test('claims: a token without sub -> 401 naming sub', async (t) => {
  const token = await hs256(claims({ sub: undefined }))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token: .*\bsub\b/))
})

t.test('claims: a token whose sub is the empty string -> 401 sub is missing', async (t) => {
  const token = await hs256(claims({ sub: '' }))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token: sub is missing$/))
})

t.test('claims: tenant_id not a UUID (or missing, or not a string) -> 401 naming tenant_id', async (t) => {
  const a = auth({ jwtSecret: SECRET })
  for (const tenantId of ['acme', 'default', `${TENANT_ID}x`, TENANT_ID.replace(/-/g, ''), '', 42, undefined]) {
    const token = await hs256(claims({ tenant_id: tenantId }))
    await t.rejects(a.user(`Bearer ${token}`), is401(/^invalid token: tenant_id must be a tenant id \(UUID\)$/), String(tenantId))
  }
})

t.test('claims: role not admin or viewer -> 401 naming role', async (t) => {
  const a = auth({ jwtSecret: SECRET })
  for (const role of ['owner', 'Admin', 'VIEWER', 'root', '', ['admin'], true]) {
    const token = await hs256(claims({ role }))
    await t.rejects(a.user(`Bearer ${token}`), is401(/^invalid token: role must be admin or viewer$/), JSON.stringify(role))
  }
})

t.test('claims: role missing -> 401 naming role', async (t) => {
  const token = await hs256(claims({ role: undefined }))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token: role must be admin or viewer$/))
})

t.test('claims: a token not yet valid (nbf in the future) -> 401 invalid token', async (t) => {
  const token = await hs256(claims({ nbf: now() + 3600 }))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token: .*nbf/))
})

// --- what is configured --------------------------------------------------------------------------

t.test('config: an HS256 token when only a JWKS is configured -> 401 algorithm HS256 not accepted', async (t) => {
  const { jwk } = await es256Key('k1')
  const { url, hits } = await jwksServer(t, [jwk])
  const token = await hs256(claims())
  await t.rejects(auth({ jwksUrl: url }).user(`Bearer ${token}`), is401(/^token algorithm HS256 is not accepted$/))
  t.equal(hits(), 0, 'the JWKS was not even fetched')
})

t.test('config: an ES256 token when only a secret is configured -> 401 algorithm ES256 not accepted', async (t) => {
  const { privateKey } = await es256Key('k1')
  const token = await es256(privateKey, 'k1')
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^token algorithm ES256 is not accepted$/))
})

t.test('config: an HS512 token signed with the configured secret -> 401 algorithm not accepted', async (t) => {
  const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS512' }).sign(enc(SECRET))
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^token algorithm HS512 is not accepted$/))
})

t.test('config: a token when nothing is configured -> 401 saying no way of verifying is configured', async (t) => {
  const token = await mintUserToken(SECRET, { sub: 'alice', tenantId: TENANT_ID, role: 'admin' }, 300)
  const a = auth()
  t.equal(a.configured, false)
  await t.rejects(a.user(`Bearer ${token}`), is401(/^no way of verifying tokens is configured/))
})

t.test('config: configured is true with a secret, with a JWKS URL, and with both', async (t) => {
  t.equal(auth({ jwtSecret: SECRET }).configured, true)
  t.equal(auth({ jwksUrl: 'http://127.0.0.1:1/jwks.json' }).configured, true)
  t.equal(auth({ jwtSecret: SECRET, jwksUrl: 'http://127.0.0.1:1/jwks.json' }).configured, true)
})

// --- RS256/ES256 via JWKS ----------------------------------------------------------------------

t.test('JWKS: an ES256 token signed with the published key (alg ES256 + kid) -> accepted', async (t) => {
  const { privateKey, jwk } = await es256Key('key-2024')
  const { url, hits } = await jwksServer(t, [jwk])
  const token = await es256(privateKey, 'key-2024', claims({ sub: 'svc-dashboard', role: 'viewer' }))
  t.strictSame(await auth({ jwksUrl: url }).user(`Bearer ${token}`), { sub: 'svc-dashboard', tenantId: TENANT_ID, role: 'viewer' })
  t.ok(hits() >= 1, 'the JWKS was fetched')
})

t.test('JWKS: an RS256 token signed with a published RSA key -> accepted', async (t) => {
  const es = await es256Key('ec-1')
  const { privateKey, publicKey } = await generateKeyPair('RS256')
  const rsa = { ...(await exportJWK(publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' }
  const { url } = await jwksServer(t, [es.jwk, rsa])
  const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' }).sign(privateKey)
  t.strictSame(await auth({ jwksUrl: url }).user(`Bearer ${token}`), { sub: 'user-1', tenantId: TENANT_ID, role: 'admin' })
})

t.test('JWKS: a token signed by another ES256 key with an unknown kid -> 401 invalid token', async (t) => {
  const { jwk } = await es256Key('known')
  const other = await es256Key('unknown')
  const { url } = await jwksServer(t, [jwk])
  const token = await es256(other.privateKey, 'unknown')
  await t.rejects(auth({ jwksUrl: url }).user(`Bearer ${token}`), is401(/^invalid token/))
})

t.test('JWKS: a token signed by another ES256 key under the published kid -> 401 invalid token', async (t) => {
  const { jwk } = await es256Key('known')
  const other = await es256Key('known')
  const { url } = await jwksServer(t, [jwk])
  const token = await es256(other.privateKey, 'known')
  await t.rejects(auth({ jwksUrl: url }).user(`Bearer ${token}`), is401(/^invalid token: .*signature/))
})

t.test('JWKS: an expired ES256 token -> 401 token expired', async (t) => {
  const { privateKey, jwk } = await es256Key('k1')
  const { url } = await jwksServer(t, [jwk])
  const token = await es256(privateKey, 'k1', claims({ iat: now() - 3600, exp: now() - 10 }))
  await t.rejects(auth({ jwksUrl: url }).user(`Bearer ${token}`), is401(/^token expired$/))
})

t.test('JWKS: an ES256 token with a bad role -> 401 naming role', async (t) => {
  const { privateKey, jwk } = await es256Key('k1')
  const { url } = await jwksServer(t, [jwk])
  const token = await es256(privateKey, 'k1', claims({ role: 'superuser' }))
  await t.rejects(auth({ jwksUrl: url }).user(`Bearer ${token}`), is401(/role must be admin or viewer/))
})

t.test('JWKS: an HS256 token whose secret is the public JWK text (JWKS only) -> 401 algorithm confusion refused', async (t) => {
  const { publicKey, jwk } = await es256Key('k1')
  const { url } = await jwksServer(t, [jwk])
  const a = auth({ jwksUrl: url })
  for (const [name, keyText] of [['JWK JSON', JSON.stringify(jwk)], ['SPKI PEM', await exportSPKI(publicKey)]] as const) {
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(enc(keyText))
    await t.rejects(a.user(`Bearer ${token}`), is401(/^token algorithm HS256 is not accepted$/), name)
  }
})

t.test('JWKS: an HS256 token whose secret is the public JWK text (secret and JWKS) -> 401 invalid signature', async (t) => {
  const { publicKey, jwk } = await es256Key('k1')
  const { url } = await jwksServer(t, [jwk])
  const a = auth({ jwtSecret: SECRET, jwksUrl: url })
  for (const [name, keyText] of [['JWK JSON', JSON.stringify(jwk)], ['SPKI PEM', await exportSPKI(publicKey)]] as const) {
    const token = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: 'k1' }).sign(enc(keyText))
    await t.rejects(a.user(`Bearer ${token}`), is401(/^invalid token: .*signature/), name)
  }
})

t.test('JWKS: secret and JWKS both configured -> an HS256 and an ES256 token are both accepted', async (t) => {
  const { privateKey, jwk } = await es256Key('k1')
  const { url } = await jwksServer(t, [jwk])
  const a = auth({ jwtSecret: SECRET, jwksUrl: url })
  t.match(await a.user(`Bearer ${await hs256(claims({ sub: 'hs' }))}`), { sub: 'hs' })
  t.match(await a.user(`Bearer ${await es256(privateKey, 'k1', claims({ sub: 'es' }))}`), { sub: 'es' })
})

// --- open mode ---------------------------------------------------------------------------------

t.test('open mode: no header -> admin of the default tenant (sub open-mode)', async (t) => {
  t.strictSame(await auth({ authMode: 'open' }).user(undefined), { sub: 'open-mode', tenantId: DEFAULT_TENANT_ID, role: 'admin' })
  t.strictSame(await auth({ authMode: 'open', jwtSecret: SECRET }).user(undefined), { sub: 'open-mode', tenantId: DEFAULT_TENANT_ID, role: 'admin' }, 'also with a secret configured')
})

t.test('open mode: a valid viewer token -> that viewer (the token is still honoured)', async (t) => {
  const token = await mintUserToken(SECRET, { sub: 'vera', tenantId: TENANT_ID, role: 'viewer' }, 300)
  t.strictSame(await auth({ authMode: 'open', jwtSecret: SECRET }).user(`Bearer ${token}`), { sub: 'vera', tenantId: TENANT_ID, role: 'viewer' })
})

t.test('open mode: a token signed with another secret -> 401 (not silently admin)', async (t) => {
  const token = await hs256(claims(), OTHER_SECRET)
  await t.rejects(auth({ authMode: 'open', jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^invalid token/))
})

t.test('open mode: an expired token -> 401 token expired (not silently admin)', async (t) => {
  const token = await hs256(claims({ exp: now() - 60 }))
  await t.rejects(auth({ authMode: 'open', jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^token expired$/))
})

t.test('open mode: a token with nothing configured -> 401 no way of verifying (not silently admin)', async (t) => {
  const token = await hs256(claims())
  await t.rejects(auth({ authMode: 'open' }).user(`Bearer ${token}`), is401(/^no way of verifying tokens is configured/))
})

t.test('open mode: a malformed header -> 401', async (t) => {
  const a = auth({ authMode: 'open', jwtSecret: SECRET })
  await t.rejects(a.user('Basic dXNlcjpwYXNz'), is401(/malformed Authorization header/), 'not Bearer')
  await t.rejects(a.user(''), is401(/malformed Authorization header/), 'empty header')
  await t.rejects(a.user('Bearer not-a-jwt'), is401(/^malformed token$/), 'not a JWT')
})

// --- mintUserToken -------------------------------------------------------------------------------

t.test('mintUserToken: a minted token -> header alg HS256, claims tenant_id, role, sub, iat, exp = now + ttl', async (t) => {
  const before = now()
  const token = await mintUserToken(SECRET, { sub: 'alice', tenantId: TENANT_ID, role: 'viewer' }, 900)
  const after = now()
  t.match(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' })
  const payload = decodeJwt(token)
  t.equal(payload.sub, 'alice')
  t.equal(payload.tenant_id, TENANT_ID)
  t.equal(payload.role, 'viewer')
  t.type(payload.iat, 'number')
  t.type(payload.exp, 'number')
  t.ok((payload.iat as number) >= before - 2 && (payload.iat as number) <= after + 2, `iat ${payload.iat} is now`)
  t.ok((payload.exp as number) >= before + 900 - 2 && (payload.exp as number) <= after + 900 + 2, `exp ${payload.exp} is now + 900`)
  t.strictSame(Object.keys(payload).sort(), ['exp', 'iat', 'role', 'sub', 'tenant_id'], 'no other claims')
})

t.test('mintUserToken: the token is signed with the given secret -> verifies with it, not with another', async (t) => {
  const token = await mintUserToken(SECRET, { sub: 'alice', tenantId: TENANT_ID, role: 'admin' }, 60)
  const { payload, protectedHeader } = await jwtVerify(token, enc(SECRET), { algorithms: ['HS256'] })
  t.equal(protectedHeader.alg, 'HS256')
  t.equal(payload.sub, 'alice')
  await t.rejects(jwtVerify(token, enc(OTHER_SECRET), { algorithms: ['HS256'] }), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' })
})

t.test('mintUserToken: a negative ttl -> a token UserAuth reports as expired', async (t) => {
  const token = await mintUserToken(SECRET, { sub: 'alice', tenantId: TENANT_ID, role: 'admin' }, -30)
  const exp = decodeJwt(token).exp as number
  t.ok(Math.abs(exp - (now() - 30)) <= 2, `exp ${exp} is now - 30`)
  await t.rejects(auth({ jwtSecret: SECRET }).user(`Bearer ${token}`), is401(/^token expired$/))
})

t.test('JWKS: the key set cannot be fetched (nothing listens, or the answer is not a key set) -> 503, not a 401 blaming the token', async (t) => {
  const { privateKey } = await es256Key('k')
  const token = await es256(privateKey, 'k')
  const down = auth({ jwksUrl: 'http://127.0.0.1:9/.well-known/jwks.json' })
  await t.rejects(down.user(`Bearer ${token}`), { statusCode: 503, message: /cannot get the signing keys/ })
  const junk = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"not":"keys"}') })
  await new Promise<void>((resolve) => junk.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { junk.closeAllConnections(); junk.close(() => resolve()) }))
  const { port } = junk.address() as AddressInfo
  await t.rejects(auth({ jwksUrl: `http://127.0.0.1:${port}/jwks` }).user(`Bearer ${token}`), { statusCode: 503, message: /cannot get the signing keys/ })
})
