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

const PREFIX = 0 // `abc*`
const SUFFIX = 1 // `*abc`
const INFIX = 2 // `*abc*`
const GENERAL = 3 // anything else with a `*`

/**
 * The common glob shapes are answered by one native string call (startsWith, endsWith, includes),
 * the rest by globMatch. One class, so every call site sees the same shape.
 */
class CompiledGlobs implements GlobSet {
  readonly patterns: readonly string[]
  private readonly exact = new Set<string>()
  /** Every wildcard pattern, in order: its kind, the literal it tests, the pattern itself. */
  private readonly kinds: number[] = []
  private readonly literals: string[] = []
  private readonly originals: string[] = []
  private readonly matchAll: string | undefined

  constructor (patterns: readonly string[]) {
    this.patterns = Object.freeze([...patterns])
    let matchAll: string | undefined
    for (const p of patterns) {
      const star = p.indexOf('*')
      if (star === -1) {
        this.exact.add(p)
        continue
      }
      if (/^\*+$/.test(p)) {
        matchAll ??= p
        continue
      }
      const inner = p.slice(1, -1)
      let kind = GENERAL
      let literal = p
      if (star === p.length - 1) [kind, literal] = [PREFIX, p.slice(0, -1)]
      else if (star === 0 && p.lastIndexOf('*') === 0) [kind, literal] = [SUFFIX, p.slice(1)]
      else if (star === 0 && p.endsWith('*') && !inner.includes('*')) [kind, literal] = [INFIX, inner]
      this.kinds.push(kind)
      this.literals.push(literal)
      this.originals.push(p)
    }
    this.matchAll = matchAll
  }

  match (text: string): string | undefined {
    if (this.matchAll !== undefined) return this.matchAll
    if (this.exact.has(text)) return text
    const kinds = this.kinds
    for (let i = 0; i < kinds.length; i++) {
      const literal = this.literals[i] as string
      const kind = kinds[i]
      if (kind === PREFIX ? text.startsWith(literal)
        : kind === SUFFIX ? text.endsWith(literal)
          : kind === INFIX ? text.includes(literal)
            : globMatch(literal, text)) return this.originals[i]
    }
    return undefined
  }
}

export function compileGlobs (patterns: readonly string[]): GlobSet {
  return new CompiledGlobs(patterns)
}
