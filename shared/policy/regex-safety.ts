/**
 * Safety checks for user-supplied regular expressions (content_filter deny_patterns, the regex_match
 * operation). A pattern is checked when a policy is saved and again when it is compiled; a pattern that
 * could backtrack exponentially is refused with a message that says why.
 *
 * Refused: back-references, lookbehind and lookahead, a quantifier inside a repeated group (`(a+)+`),
 * a repeated group holding an alternation whose branches do not start with distinct literal characters
 * (`(a|a)*`, `(?:x(?:a|ab))+`), counts above 10 and patterns longer than MAX_PATTERN_LENGTH. A pattern
 * may start with `(?i)` to match ASCII letters without regard to case (compiled as character classes,
 * see foldCase). As a second line of defence, V8 is told to fall back to its linear-time engine when a
 * match backtracks excessively (which it can do for every pattern accepted here), so even a polynomial
 * pattern such as `a*a*a*b` cannot hang a request.
 */
import v8 from 'node:v8'

v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks')

export const MAX_PATTERN_LENGTH = 1000
/** Larger counts keep V8's linear-time fallback from taking over (measured: `a{50}a*a*a*b` hangs). */
const MAX_COUNT = 10

export class UnsafePatternError extends Error {
  constructor (readonly pattern: string, readonly reason: string) {
    super(`unsafe regular expression ${JSON.stringify(pattern.slice(0, 100))}: ${reason}`)
    this.name = 'UnsafePatternError'
  }
}

interface Frame {
  /** The group holds a quantifier that repeats (max > 1), directly or in a nested group. */
  repeats: boolean
  /** The group holds, directly or nested, an alternation whose branches can start alike. */
  ambiguous: boolean
  alternation: boolean
  /** First literal character of each branch, or null when a branch does not start with one. */
  firsts: Array<string | null>
}

interface Quantifier {
  min: number
  max: number
  length: number
}

const COUNT = /\{(\d+)(,(\d*))?\}/y

function readQuantifier (src: string, i: number): Quantifier | null | string {
  const c = src[i]
  let q: Quantifier | null = null
  if (c === '*') q = { min: 0, max: Infinity, length: 1 }
  else if (c === '+') q = { min: 1, max: Infinity, length: 1 }
  else if (c === '?') q = { min: 0, max: 1, length: 1 }
  else if (c === '{') {
    COUNT.lastIndex = i
    const m = COUNT.exec(src)
    if (m === null) return null
    const min = Number(m[1])
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
    if (min > MAX_COUNT || (max !== Infinity && max > MAX_COUNT)) {
      return `repetition count above ${MAX_COUNT} (larger counts defeat the backtracking guard; use + or * instead)`
    }
    q = { min, max, length: m[0].length }
  }
  if (q !== null && src[i + q.length] === '?') q.length++
  return q
}

function splitFlags (source: string): { body: string, flags: string } {
  return source.startsWith('(?i)') ? { body: source.slice(4), flags: 'i' } : { body: source, flags: '' }
}

/** Scans the pattern; returns why it is unsafe, or null. Assumes the pattern is syntactically valid. */
function scan (src: string, ignoreCase: boolean): string | null {
  const stack: Frame[] = [{ repeats: false, ambiguous: false, alternation: false, firsts: [] }]
  let branchStart = true
  // For each open group: whether it opened a branch of its parent.
  const groupStarts: boolean[] = []
  // What the previous atom was, for the quantifier that may follow it.
  let last: { kind: 'none' } | { kind: 'atom', first: boolean } | { kind: 'group', frame: Frame, first: boolean } = { kind: 'none' }
  const top = (): Frame => stack[stack.length - 1] as Frame
  const setFirst = (ch: string | null): void => {
    if (!branchStart) return
    top().firsts.push(ch)
    branchStart = false
  }
  let i = 0
  while (i < src.length) {
    const c = src[i] as string
    const q = readQuantifier(src, i)
    if (typeof q === 'string') return q
    if (q !== null) {
      if (last.kind === 'none') return 'quantifier without a target'
      if (q.min === 0 && last.first) {
        // The branch may start with what follows, so its first character is not known.
        const f = top().firsts
        f[f.length - 1] = null
      }
      if (q.max > 1) {
        if (last.kind === 'group') {
          if (last.frame.repeats) return 'nested quantifier (a repeated group that itself repeats)'
          if (last.frame.ambiguous) {
            return 'repeated alternation whose branches can start with the same character'
          }
        }
        top().repeats = true
      }
      last = { kind: 'none' }
      i += q.length
      continue
    }
    if (c === '\\') {
      const n = src[i + 1] ?? ''
      if (n >= '1' && n <= '9') return 'back-references are not allowed'
      if (n === 'k' && src[i + 2] === '<') return 'back-references are not allowed'
      const literal = /[\\^$.|?*+()[\]{}/-]/.test(n) ? n : null
      const wasStart = branchStart
      setFirst(literal)
      last = { kind: 'atom', first: wasStart }
      i += 2
      continue
    }
    if (c === '[') {
      let j = i + 1
      if (src[j] === '^') j++
      while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1
      const wasStart = branchStart
      setFirst(null)
      last = { kind: 'atom', first: wasStart }
      i = j + 1
      continue
    }
    if (c === '(') {
      if (src.startsWith('(?<=', i) || src.startsWith('(?<!', i)) return 'lookbehind is not allowed'
      // Lookaheads keep V8 from falling back to its linear-time engine.
      if (src.startsWith('(?=', i) || src.startsWith('(?!', i)) return 'lookahead is not allowed'
      const wasStart = branchStart
      setFirst(null)
      stack.push({ repeats: false, ambiguous: false, alternation: false, firsts: [] })
      branchStart = true
      // Record where the group started, to know whether it opened a branch of its parent.
      groupStarts.push(wasStart)
      if (src.startsWith('(?:', i) || src.startsWith('(?=', i) || src.startsWith('(?!', i)) i += 3
      else if (src.startsWith('(?<', i)) i = src.indexOf('>', i) + 1
      else i += 1
      last = { kind: 'none' }
      continue
    }
    if (c === ')') {
      const frame = stack.pop() as Frame
      const wasStart = groupStarts.pop() as boolean
      if (frame.alternation && !distinctFirsts(frame.firsts, ignoreCase)) frame.ambiguous = true
      if (frame.repeats) top().repeats = true
      if (frame.ambiguous) top().ambiguous = true
      branchStart = false
      last = { kind: 'group', frame, first: wasStart }
      i++
      continue
    }
    if (c === '|') {
      top().alternation = true
      branchStart = true
      last = { kind: 'none' }
      i++
      continue
    }
    if (c === '^' || c === '$') {
      last = { kind: 'none' }
      i++
      continue
    }
    const wasStart = branchStart
    setFirst(c === '.' ? null : c)
    last = { kind: 'atom', first: wasStart }
    i++
  }
  return null
}

/** Whether every branch starts with its own literal character (without case: in every case form). */
function distinctFirsts (firsts: Array<string | null>, ignoreCase: boolean): boolean {
  const seen = new Set<string>()
  for (const f of firsts) {
    if (f === null) return false
    const forms = ignoreCase ? [f, f.toLowerCase(), f.toUpperCase()] : [f]
    if (forms.some((x) => seen.has(x))) return false
    for (const x of forms) seen.add(x)
  }
  return true
}

/** Why `source` is not an acceptable pattern, or null when it is. */
export function checkPatternSafety (source: string): string | null {
  if (source.length > MAX_PATTERN_LENGTH) return `pattern longer than ${MAX_PATTERN_LENGTH} characters`
  const { body, flags } = splitFlags(source)
  try {
    new RegExp(body, flags)
  } catch (err) {
    return `invalid regular expression: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}`
  }
  return scan(body, flags === 'i')
}

/** Length of the escape sequence starting at `i` (a backslash). */
function escapeLength (src: string, i: number): number {
  const n = src[i + 1]
  if (n === 'x') return 4
  if (n === 'u') return 6
  if (n === 'c') return 3
  return 2
}

const isLower = (c: string): boolean => c >= 'a' && c <= 'z'
const isUpper = (c: string): boolean => c >= 'A' && c <= 'Z'
const swapCase = (c: string): string => isLower(c) ? c.toUpperCase() : c.toLowerCase()

/**
 * The pattern with ASCII letters matched in both cases by character classes instead of the `i` flag
 * (`Abc` -> `[aA][bB][cC]`, `[a-f]` -> `[a-fA-F]`). V8's linear-time fallback engine refuses the `i`
 * flag; without it, even a case-insensitive pattern cannot backtrack for long.
 */
export function foldCase (src: string): string {
  let out = ''
  let i = 0
  while (i < src.length) {
    const c = src[i] as string
    if (c === '\\') {
      const n = escapeLength(src, i)
      out += src.slice(i, i + n)
      i += n
    } else if (c === '[') {
      let j = i + 1
      let body = ''
      let negate = ''
      if (src[j] === '^') { negate = '^'; j++ }
      const extra: string[] = []
      while (j < src.length && src[j] !== ']') {
        if (src[j] === '\\') {
          const n = escapeLength(src, j)
          body += src.slice(j, j + n)
          j += n
          continue
        }
        const a = src[j] as string
        if (src[j + 1] === '-' && src[j + 2] !== undefined && src[j + 2] !== ']' && src[j + 2] !== '\\') {
          const b = src[j + 2] as string
          body += `${a}-${b}`
          if ((isLower(a) && isLower(b)) || (isUpper(a) && isUpper(b))) extra.push(`${swapCase(a)}-${swapCase(b)}`)
          j += 3
          continue
        }
        body += a
        if (isLower(a) || isUpper(a)) extra.push(swapCase(a))
        j++
      }
      // The other cases go first: after the body, a trailing '-' would turn them into a range.
      out += `[${negate}${extra.join('')}${body}]`
      i = j + 1
    } else if (c === '(' && src.startsWith('(?<', i) && !src.startsWith('(?<=', i) && !src.startsWith('(?<!', i)) {
      const end = src.indexOf('>', i) + 1
      out += src.slice(i, end) // a group name is not text to match
      i = end
    } else if (c === '(' && src[i + 1] === '?') {
      out += src.slice(i, i + 3)
      i += 3
    } else {
      out += isLower(c) || isUpper(c) ? `[${c}${swapCase(c)}]` : c
      i++
    }
  }
  return out
}

/** Compiles a checked pattern; throws UnsafePatternError when the pattern is refused. */
export function compileSafePattern (source: string): RegExp {
  const problem = checkPatternSafety(source)
  if (problem !== null) throw new UnsafePatternError(source, problem)
  const { body, flags } = splitFlags(source)
  return flags === 'i' ? new RegExp(foldCase(body)) : new RegExp(body)
}
