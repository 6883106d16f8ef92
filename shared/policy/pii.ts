/**
 * PII detectors for the content_filter policy. Each detector is a linear-time scan (no backtracking
 * patterns) followed by a check that cuts false positives: Luhn for card numbers, the SSA's invalid
 * areas and groups for US social security numbers, a digit count for phone numbers.
 */

export const PII_KINDS = ['email', 'credit_card', 'us_ssn', 'phone', 'secret'] as const
export type PiiKind = typeof PII_KINDS[number]

export function isPiiKind (value: unknown): value is PiiKind {
  return typeof value === 'string' && (PII_KINDS as readonly string[]).includes(value)
}

// Local part and domain per the common (not the full RFC 5322) shape; the TLD has 2+ letters. The
// domain is matched at each '@' on a bounded slice, so a long text costs linear time.
const EMAIL_LOCAL = /[A-Za-z0-9._%+-]/
const EMAIL_DOMAIN = /^[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/

// 13-19 digits, optionally grouped by single spaces or dashes, not glued to other digits.
const CARD = /(?<![0-9])[0-9](?:[ -]?[0-9]){12,18}(?![0-9])/g

// AAA-GG-SSSS with dashes or spaces, or nine bare digits preceded by an "ssn" label.
const SSN = /(?<![0-9])([0-9]{3})([- ])([0-9]{2})\2([0-9]{4})(?![0-9])/g
const SSN_LABELLED = /\b(?:ssn|social security (?:number|no\.?))(?![A-Za-z])[ \t]{0,3}(?:#|no\.?|number)?[ \t]{0,3}[:=]?[ \t]{0,3}([0-9]{3})([0-9]{2})([0-9]{4})(?![0-9])/gi

// +15551234567; +33 1 23 45 67 89, +1 (555) 123-4567 (after a country code, groups of 1-5 digits);
// 555-123-4567, 555.123.4567, (020) 7946 0958 (groups of 2-4 digits). 10 to 15 digits in all, and
// not followed by ":dd" (a time: "2024-01-15 10:30" is a date, not a number).
const PHONE = /(?<![0-9A-Za-z+])(?:\+[1-9][0-9]{9,14}|\+[0-9]{1,3}(?:[ .-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){2,6}|(?:\([0-9]{2,4}\)|[0-9]{2,4})(?:[ .-][0-9]{2,4}){2,4})(?![0-9]|:[0-9])/g

const IPV4 = /^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$/

const SECRET_PATTERNS: readonly RegExp[] = [
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{36}/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{40}/, // GitHub fine-grained token
  /\bsk-ant-[A-Za-z0-9_-]{20,}/, // Anthropic
  /\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}/, // OpenAI
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}/, // Stripe
  /\bAIza[0-9A-Za-z_-]{35}/, // Google API key (JWTs are found by hasJwt)
  /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----/, // PEM private key
  /\b(?:sk_agent|tk_live|zk_live)_[A-Za-z0-9_-]{16,}/ // agentgov's own keys
]
/** The secret formats as one alternation: one scan of the text instead of one per format. */
const SECRETS = new RegExp(SECRET_PATTERNS.map((r) => `(?:${r.source})`).join('|'))

export function luhnValid (digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

function hasEmail (text: string): boolean {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    if (at === 0 || !EMAIL_LOCAL.test(text[at - 1] as string)) continue
    if (EMAIL_DOMAIN.test(text.slice(at + 1, at + 256))) return true
  }
  return false
}

function isB64Url (c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45 || c === 95
}

/** End (exclusive) of the run of base64url characters starting at `i`. */
function runEnd (text: string, i: number): number {
  while (i < text.length && isB64Url(text.charCodeAt(i))) i++
  return i
}

/**
 * A JSON Web Token: three base64url segments joined by dots, the first two JSON objects ("eyJ").
 * Scanned by hand: each run of base64url characters is read once, so the cost is linear.
 */
function hasJwt (text: string): boolean {
  // Found by its 'J' (rare in prose), not by 'eyJ': a native search costs about one step per
  // occurrence of the needle's first character, and 'e' is the commonest letter.
  for (let j = text.indexOf('J', 2); j !== -1; j = text.indexOf('J', j + 1)) {
    if (text.charCodeAt(j - 1) !== 121 /* y */ || text.charCodeAt(j - 2) !== 101 /* e */) continue
    const i = j - 2
    const end = runEnd(text, i)
    if (end - i >= 11 && text[end] === '.' && text.startsWith('eyJ', end + 1)) {
      const end2 = runEnd(text, end + 1)
      if (end2 - end - 1 >= 11 && text[end2] === '.' && runEnd(text, end2 + 1) - end2 - 1 >= 8) return true
    }
    // The run just read holds no token start that could succeed: skip past it.
    j = Math.max(j, end - 1)
  }
  return false
}

/** A plausible card number: 13-19 digits, an issuer's first digit (2-6), not one repeated digit, Luhn. */
function cardNumber (digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false
  const first = digits.charCodeAt(0)
  if (first < 50 || first > 54) return false
  if (/^(\d)\1+$/.test(digits)) return false
  return luhnValid(digits)
}

function hasCard (text: string): boolean {
  for (const m of text.matchAll(CARD)) {
    // A separator style must be consistent: "4111 1111 1111 1111" or "4111-1111-..." or none.
    if (m[0].includes(' ') && m[0].includes('-')) continue
    if (cardNumber(m[0].replace(/[ -]/g, ''))) return true
    // The run may hold a card and more digits ("4111 1111 1111 1111 12/29"): try its groups.
    const groups = m[0].split(/[ -]/)
    for (let start = 0; start < groups.length; start++) {
      let digits = ''
      for (let end = start; end < groups.length; end++) {
        digits += groups[end] as string
        if (!(start === 0 && end === groups.length - 1) && cardNumber(digits)) return true
      }
    }
  }
  return false
}

export function ssnValid (area: string, group: string, serial: string): boolean {
  const a = Number(area)
  if (a === 0 || a === 666 || a >= 900) return false
  return group !== '00' && serial !== '0000'
}

function hasSsn (text: string): boolean {
  for (const m of text.matchAll(SSN)) {
    if (ssnValid(m[1] as string, m[3] as string, m[4] as string)) return true
  }
  for (const m of text.matchAll(SSN_LABELLED)) {
    if (ssnValid(m[1] as string, m[2] as string, m[3] as string)) return true
  }
  return false
}

function hasPhone (text: string): boolean {
  for (const m of text.matchAll(PHONE)) {
    let n = 0
    for (let i = 0; i < m[0].length; i++) {
      const c = m[0].charCodeAt(i)
      if (c >= 48 && c <= 57) n++
    }
    if (n >= 10 && n <= 15 && !IPV4.test(m[0])) return true
  }
  return false
}

const DIGIT_CHARS = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']

/** Index of the first ASCII digit in `text`, or -1: ten native searches beat one regular expression scan. */
function firstDigit (text: string): number {
  let first = -1
  for (let d = 0; d < 10; d++) {
    const i = text.indexOf(DIGIT_CHARS[d] as string)
    if (i !== -1 && (first === -1 || i < first)) first = i
  }
  return first
}

/** Whether a secret format's fixed text may occur: '_' or '-' (most formats), or AKIA, ASIA, AIza. */
function mayHoldSecret (text: string): boolean {
  if (text.includes('_') || text.includes('-')) return true
  for (let i = text.indexOf('A'); i !== -1; i = text.indexOf('A', i + 1)) {
    if (text.startsWith('KIA', i + 1) || text.startsWith('SIA', i + 1) || text.startsWith('Iza', i + 1)) return true
  }
  return false
}

/** What one scan of a text tells: enough to rule most detectors out without running them. */
interface Profile {
  digits: number
  mayHoldSecret: boolean
}

let lastText: string | null = null
let lastProfile: Profile = { digits: 0, mayHoldSecret: false }

/** The profile of a text; the last one is kept, since every PII policy of a decision reads the same text. */
function profileOf (text: string): Profile {
  if (text === lastText) return lastProfile
  // Native scans first: most texts hold no digit at all.
  let digits = 0
  const first = firstDigit(text)
  if (first !== -1) {
    for (let i = first; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 48 && c <= 57) digits++
    }
  }
  lastText = text
  lastProfile = { digits, mayHoldSecret: mayHoldSecret(text) }
  return lastProfile
}

/** Whether `text` contains PII of the given kind. */
export function containsPii (kind: PiiKind, text: string): boolean {
  switch (kind) {
    case 'email': return hasEmail(text)
    // Cheap first: a card has 13+ digits, a phone number 10+, an SSN 9.
    case 'credit_card': return profileOf(text).digits >= 13 && hasCard(text)
    case 'us_ssn': return profileOf(text).digits >= 9 && hasSsn(text)
    case 'phone': return profileOf(text).digits >= 10 && hasPhone(text)
    case 'secret': return (profileOf(text).mayHoldSecret && SECRETS.test(text)) || hasJwt(text)
  }
}
