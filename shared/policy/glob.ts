/**
 * Glob patterns of the policy types: `*` matches any run of characters (including none); every other
 * character matches itself; matching is case-sensitive. Matching is linear-time in practice (the
 * classic star-backtracking algorithm, no regular expressions), so hostile names cannot stall it.
 */

/** Does `text` match `pattern`? */
export function globMatch (pattern: string, text: string): boolean {
  let p = 0
  let t = 0
  let starP = -1
  let starT = 0
  while (t < text.length) {
    if (p < pattern.length && pattern.charCodeAt(p) === 42 /* * */) {
      starP = p++
      starT = t
    } else if (p < pattern.length && pattern.charCodeAt(p) === text.charCodeAt(t)) {
      p++
      t++
    } else if (starP !== -1) {
      p = starP + 1
      t = ++starT
    } else {
      return false
    }
  }
  while (p < pattern.length && pattern.charCodeAt(p) === 42) p++
  return p === pattern.length
}

/** A compiled list of globs: exact names in a set, the rest tried in order. */
export interface GlobSet {
  readonly patterns: readonly string[]
  /** The first pattern that matches, or undefined. */
  match (text: string): string | undefined
}

export function compileGlobs (patterns: readonly string[]): GlobSet {
  const exact = new Set<string>()
  const wild: string[] = []
  let matchAll: string | undefined
  for (const p of patterns) {
    if (!p.includes('*')) exact.add(p)
    else if (/^\*+$/.test(p)) matchAll ??= p
    else wild.push(p)
  }
  const frozen = Object.freeze([...patterns])
  return {
    patterns: frozen,
    match (text: string): string | undefined {
      if (matchAll !== undefined) return matchAll
      if (exact.has(text)) return text
      for (let i = 0; i < wild.length; i++) {
        const p = wild[i] as string
        if (globMatch(p, text)) return p
      }
      return undefined
    }
  }
}
