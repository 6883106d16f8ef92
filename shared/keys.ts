/**
 * Key and token formats (decisions.md): runtime keys `sk_agent_` (v1) and `zk_live_` (legacy), tenant
 * API keys `tk_live_`, each followed by 32 random bytes in base64url. Only the SHA-256 hash and a
 * 12-character prefix are stored. Bootstrap tokens are `bt_<tenant_id>_<hex HMAC-SHA256(secret,
 * tenant_id)>`. Every comparison of secret material is constant-time.
 */
import { createHmac, hash, randomBytes } from 'node:crypto'

export const KEY_PREFIXES = { agentV1: 'sk_agent_', agentLegacy: 'zk_live_', tenant: 'tk_live_' } as const
export type KeyKind = keyof typeof KEY_PREFIXES

/** The stored prefix of a key: its first 12 characters. */
export const KEY_PREFIX_LENGTH = 12
const KEY_BODY = /^[A-Za-z0-9_-]{43}$/

export interface MintedKey {
  key: string
  hash: string
  prefix: string
}

export function hashKey (key: string): string {
  return hash('sha256', key, 'hex')
}

export function mintKey (kind: KeyKind): MintedKey {
  const key = KEY_PREFIXES[kind] + randomBytes(32).toString('base64url')
  return { key, hash: hashKey(key), prefix: key.slice(0, KEY_PREFIX_LENGTH) }
}

/** Each kind's whole format, prefix and body: one anchored test per kind, no slicing (every request runs this). */
const KEY_FORMATS = (Object.keys(KEY_PREFIXES) as KeyKind[]).map((kind) => ({ kind, format: new RegExp(`^${KEY_PREFIXES[kind]}${KEY_BODY.source.slice(1)}`) }))

/** The kind of a well-formed key, or undefined for anything else. */
export function keyKind (key: string): KeyKind | undefined {
  for (let i = 0; i < KEY_FORMATS.length; i++) {
    const f = KEY_FORMATS[i] as { kind: KeyKind, format: RegExp }
    if (f.format.test(key)) return f.kind
  }
  return undefined
}

/**
 * Constant-time equality of two strings of the same length (hex digests, signatures): the time
 * depends on the length only, never on where the strings differ.
 */
export function safeEqual (a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export function bootstrapSignature (secret: string, tenantId: string): string {
  return createHmac('sha256', secret).update(tenantId).digest('hex')
}

export function bootstrapToken (secret: string, tenantId: string): string {
  return `bt_${tenantId}_${bootstrapSignature(secret, tenantId)}`
}

/** The tenant id of a valid bootstrap token (signature checked in constant time), else undefined. */
export function verifyBootstrapToken (secret: string, token: string): string | undefined {
  const m = /^bt_([0-9a-f-]{36})_([0-9a-f]{64})$/.exec(token)
  if (m === null || !UUID.test(m[1] as string)) return undefined
  const tenantId = m[1] as string
  return safeEqual(bootstrapSignature(secret, tenantId), m[2] as string) ? tenantId : undefined
}

export function isUuid (value: string): boolean {
  return UUID.test(value)
}
