/** Canonical JSON (object keys sorted, no whitespace) and its `sha256:<hex>` digest, for config hashes. */
import { createHash } from 'node:crypto'

export function canonicalJson (value: unknown): string {
  // As JSON.stringify does: a value with toJSON (a Date) is written as what toJSON returns.
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return canonicalJson((value as { toJSON: () => unknown }).toJSON())
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((v) => v === undefined ? 'null' : canonicalJson(v)).join(',')}]`
  const obj = value as Record<string, unknown>
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`
}

export function contentHash (value: unknown): string {
  return 'sha256:' + createHash('sha256').update(canonicalJson(value)).digest('hex')
}
