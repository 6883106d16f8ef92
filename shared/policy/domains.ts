/**
 * Host extraction and domain matching for network_policy: `example.com` matches itself only;
 * `*.example.com` matches its subdomains (not itself). Hosts compare case-insensitively, without a
 * trailing dot, in their ASCII (punycode) form.
 */
import { domainToASCII } from 'node:url'

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//

/** Normalises a configured domain or pattern; returns '' for one that is not a valid host name. */
export function normalizeDomain (domain: string): string {
  const wildcard = domain.startsWith('*.')
  const body = (wildcard ? domain.slice(2) : domain).replace(/\.$/, '')
  if (body === '' || body.includes('*') || /[/:?#@\s]/.test(body)) return ''
  const ascii = domainToASCII(body)
  if (ascii === '') return ''
  return wildcard ? `*.${ascii}` : ascii
}

const HOST_CACHE_SIZE = 1000
let hostCache = new Map<string, string | undefined>()

/**
 * The host of a URL (with or without a scheme), lower case; undefined when it cannot be parsed.
 * Parsing a URL costs far more than a decision, and agents call the same few: the last 1,000
 * answers are kept.
 */
export function hostOf (url: string): string | undefined {
  if (hostCache.has(url)) return hostCache.get(url)
  const host = parseHost(url)
  if (hostCache.size >= HOST_CACHE_SIZE) hostCache = new Map()
  if (url.length <= 2048) hostCache.set(url, host)
  return host
}

function parseHost (url: string): string | undefined {
  try {
    const parsed = new URL(SCHEME.test(url) ? url : `http://${url}`)
    const host = parsed.hostname.replace(/\.$/, '').toLowerCase()
    if (host === '') return undefined
    // URL keeps the brackets of IPv6 literals; domain lists are written without them.
    return host.startsWith('[') ? host.slice(1, -1) : host
  } catch {
    return undefined
  }
}

/** A compiled list of normalised domains and `*.` patterns. */
export interface DomainSet {
  /** The first entry that matches `host`, or undefined. */
  match (host: string): string | undefined
}

export function compileDomains (domains: readonly string[]): DomainSet {
  const exact = new Map<string, string>()
  const suffixes: Array<[string, string]> = []
  for (const d of domains) {
    const n = normalizeDomain(d)
    if (n.startsWith('*.')) suffixes.push([n.slice(1), d])
    else if (n !== '') exact.set(n, d)
  }
  return {
    match (host: string): string | undefined {
      const hit = exact.get(host)
      if (hit !== undefined) return hit
      for (const [suffix, original] of suffixes) {
        if (host.length > suffix.length && host.endsWith(suffix)) return original
      }
      return undefined
    }
  }
}
