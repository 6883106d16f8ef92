import t, { type Test } from 'tap'
import { MAX_PATTERN_LENGTH, UnsafePatternError, checkPatternSafety, compileSafePattern } from '../../../shared/policy/regex-safety.js'

const NESTED = 'nested quantifier (a repeated group that itself repeats)'
const ALTERNATION = 'repeated alternation whose branches can start with the same character'
const BACKREF = 'back-references are not allowed'
const LOOKBEHIND = 'lookbehind is not allowed'
const COUNT = 'repetition count above 10 (larger counts defeat the backtracking guard; use + or * instead)'
const LOOKAHEAD = 'lookahead is not allowed'

function accepts (t: Test, patterns: string[]): void {
  for (const p of patterns) t.equal(checkPatternSafety(p), null, `accepts ${JSON.stringify(p)}`)
}

function refuses (t: Test, patterns: string[], reason: string): void {
  for (const p of patterns) t.equal(checkPatternSafety(p), reason, `refuses ${JSON.stringify(p)}: ${reason}`)
}

t.test('MAX_PATTERN_LENGTH is 1000 characters', async (t) => {
  t.equal(MAX_PATTERN_LENGTH, 1000)
})

t.test('checkPatternSafety: plain words, anchors, dots and escapes are accepted', async (t) => {
  accepts(t, ['password', 'api key', '^secret$', 'a.b', '.', '', '^', '$', 'foo|bar', 'a|a', 'x\\.y', '\\d\\w\\s\\b', '\\/path\\/', '\\0', '\\x41\\u0042'])
})

t.test('checkPatternSafety: character classes are accepted, with negation and escaped brackets inside', async (t) => {
  accepts(t, ['[a-z]', '[^a-z]+', '[\\]a]+', '[(]+', '[)|*+?{]', '[\\\\]*', '[^\\]]*x', '[]a'])
})

t.test('checkPatternSafety: quantifiers on single atoms are accepted, greedy or lazy', async (t) => {
  accepts(t, ['a*', 'a+', 'a?', 'a*?', 'a+?', 'a??', '\\d+', '[0-9]*', '.*', 'colou?r', 'a*a*a*b', '\\s*x\\s*$'])
})

t.test('checkPatternSafety: bounded counts up to 10 are accepted in every form', async (t) => {
  accepts(t, ['a{3}', 'a{2,5}', 'a{5,}', 'a{0,10}', 'a{10}', 'a{10,}', 'a{2,3}?', '\\d{3}-\\d{2}-\\d{4}', '[A-Z]{2,}'])
})

t.test('checkPatternSafety: braces that are not a count are literal and accepted', async (t) => {
  accepts(t, ['a{', 'a{x}', 'a{,5}', '{', 'x{1,2', 'a{ 1}'])
})

t.test('checkPatternSafety: groups of every kind are accepted when nothing inside repeats', async (t) => {
  accepts(t, ['(abc)+', '(?:abc)*', '(?<word>abc){2}', '(a+)?', '(a+)', '(?:a*)?', '(?:a{1})+', '(?:a{0,1})+', '(?:a?)+', '((ab)c)+'])
})

t.test('checkPatternSafety: named groups and plain groups with inner quantifiers are accepted when not repeated', async (t) => {
  accepts(t, ['(?<year>\\d{4})-(?<month>\\d{2})', '(\\w+)@(\\w+)', '(?:\\d+\\.)?\\d+'])
})

t.test('checkPatternSafety: a repeated alternation whose branches start with distinct literals is accepted', async (t) => {
  accepts(t, ['(?:foo|bar)+', '(?:foo|bar|qux)*', '(?:ab|cd){1,5}', '(?:\\.|-)+', '(?:\\(|\\))+', '(?:x|y)+?', '(a|b)*c', '(?:^a|b)+'])
})

t.test('checkPatternSafety: an alternation not repeated may have overlapping branches', async (t) => {
  accepts(t, ['(a|a)', '(?:a|ab)?', '(?:.|a)', '(?:a*|a)'])
})

t.test('checkPatternSafety: (?i) prefix is accepted and distinct letters stay distinct', async (t) => {
  accepts(t, ['(?i)hello', '(?i)(?:foo|bar)+', '(?i)^[a-z]+$'])
})

t.test('checkPatternSafety: a group that repeats and holds a quantifier is refused as nested', async (t) => {
  refuses(t, [
    '(a+)+',
    '(a+)+$',
    '([a-z]+)*',
    '(\\w+\\s?)+$',
    '(?:a*)*',
    '(?:a+){2}',
    '(?:a{2})+',
    '(?:a{1,3})*',
    '(?<w>\\w+)+',
    '(?:x|a+)+',
    '(?:(?:a+)b)+', // the quantifier sits in a nested group: the outer group still repeats it
    '(?:((a)+))+'
  ], NESTED)
})

t.test('checkPatternSafety: a repeated alternation with branches that may start alike is refused', async (t) => {
  refuses(t, [
    '(a|a)*',
    '(a|a)+$',
    '(a?b|b)+', // a? may be skipped: the branch may start with b
    '(?:a{0,1}b|b)+',
    '(?:a?b|c)+', // conservative: the optional a hides which character the branch starts with
    '(?:a|b?)+',
    '(?:a?|b)*',
    '(?:ab|ac)+',
    '(?:a|[ab])+', // a class has no single first character
    '(?:.|a)+',
    '(?:\\d|1)+', // \\d is not a literal
    '(?:(a)|b)+', // a branch opening with a group
    '(?:a|b|a){2,}',
    '(?:\\.|\\.)+'
  ], ALTERNATION)
})

t.test('checkPatternSafety: (?i) folds case before comparing first characters', async (t) => {
  refuses(t, ['(?i)(A|a)+', '(?i)(?:Foo|foo)*'], ALTERNATION)
  accepts(t, ['(A|a)+'])
})

t.test('checkPatternSafety: back-references, numbered or named, are refused', async (t) => {
  refuses(t, ['(a)\\1', '(a)(b)\\2', '\\9', '(?<n>a)\\k<n>', '\\k<n>'], BACKREF)
})

t.test('checkPatternSafety: lookbehind, positive or negative, is refused', async (t) => {
  refuses(t, ['(?<=a)b', '(?<!a)b', 'x(?:(?<=a)b)'], LOOKBEHIND)
})

t.test('checkPatternSafety: an escaped ( or one inside a class does not open a lookbehind', async (t) => {
  accepts(t, ['\\(?<=a', '[(?<=]a'])
})

t.test('checkPatternSafety: counts above 10 are refused, as minimum or as maximum', async (t) => {
  refuses(t, ['a{11}', 'a{11,}', 'a{1,11}', 'a{0,99999}', '(?:ab){5000}', 'a{50}a*a*a*b'], COUNT)
})

t.test('checkPatternSafety: lookaheads are refused (they keep the linear-time fallback from working)', async (t) => {
  refuses(t, ['(?=foo)bar', '(?!foo)bar', '(?=a)a*a*a*a*b'], LOOKAHEAD)
})

t.test('checkPatternSafety: patterns longer than MAX_PATTERN_LENGTH are refused, the limit itself is accepted', async (t) => {
  t.equal(checkPatternSafety('a'.repeat(MAX_PATTERN_LENGTH)), null)
  t.equal(checkPatternSafety('a'.repeat(MAX_PATTERN_LENGTH + 1)), 'pattern longer than 1000 characters')
  t.equal(checkPatternSafety('(?i)' + 'a'.repeat(MAX_PATTERN_LENGTH - 3)), 'pattern longer than 1000 characters', 'the (?i) prefix counts')
})

t.test('checkPatternSafety: invalid syntax is refused with the engine message, without its prefix', async (t) => {
  t.equal(checkPatternSafety('('), 'invalid regular expression: /(/: Unterminated group')
  for (const bad of ['[a-', 'a**', '*a', '(?i)(', 'a(?i)b', '+', 'a{2}{3}', '(?<n>a', '\\']) {
    const reason = checkPatternSafety(bad)
    t.match(reason, /^invalid regular expression: \//, `refuses ${JSON.stringify(bad)} as invalid`)
    t.notMatch(reason, /Invalid regular expression/, 'the engine prefix is removed')
  }
})

t.test('compileSafePattern: returns a RegExp without flags for a plain pattern', async (t) => {
  const re = compileSafePattern('secret[_-]?key')
  t.type(re, RegExp)
  t.equal(re.source, 'secret[_-]?key')
  t.equal(re.flags, '')
  t.equal(re.test('my secret_key'), true)
  t.equal(re.test('my SECRET_KEY'), false, 'case-sensitive by default')
})

t.test('compileSafePattern: (?i) matches ASCII letters in either case, through classes instead of the i flag', async (t) => {
  const re = compileSafePattern('(?i)secret[_-]?key')
  t.equal(re.source, '[sS][eE][cC][rR][eE][tT][_-]?[kK][eE][yY]')
  t.equal(re.flags, '', 'no i flag: V8 can fall back to its linear-time engine')
  t.equal(re.test('my SECRET-Key'), true)
  t.equal(re.test('my secrets'), false)
  const cls = compileSafePattern('(?i)^[a-f0-9]+$|\\x41(?<tag>v)\\b')
  t.equal(cls.test('DEADbeef'), true, 'letter ranges in classes get their other case')
  t.equal(cls.test('AV'), true, 'escapes are kept; a group name is not folded')
  t.equal(compileSafePattern('(?i)[^a-z]').test('A'), false, 'a negated class excludes both cases')
  const esc = compileSafePattern('(?i)[\\x41\\]q-]+(?:ok)')
  t.equal(esc.source, '[Q\\x41\\]q-]+(?:[oO][kK])', 'escapes inside a class are kept; (?: is not folded')
  t.equal(esc.test(']Q-OK'), true)
})

t.test('compileSafePattern: a case-insensitive polynomial pattern on a long text still returns (engine fallback)', async (t) => {
  const re = compileSafePattern('(?i)a*a*a*a*b')
  t.equal(re.test('A'.repeat(20_000)), false)
  t.equal(re.test('a'.repeat(20_000) + 'B'), true)
})

t.test('compileSafePattern: escaped parentheses and brackets match literally', async (t) => {
  const re = compileSafePattern('\\(draft\\) \\[v\\d+\\]')
  t.equal(re.test('report (draft) [v12]'), true)
  t.equal(re.test('report draft v12'), false)
})

t.test('compileSafePattern: a refused pattern throws UnsafePatternError with pattern and reason', async (t) => {
  const err = t.throws(() => compileSafePattern('(a+)+$')) as UnsafePatternError
  t.type(err, UnsafePatternError)
  t.type(err, Error)
  t.equal(err.name, 'UnsafePatternError')
  t.equal(err.pattern, '(a+)+$')
  t.equal(err.reason, NESTED)
  t.equal(err.message, `unsafe regular expression "(a+)+$": ${NESTED}`)
})

t.test('compileSafePattern: an invalid pattern throws UnsafePatternError naming the syntax problem', async (t) => {
  const err = t.throws(() => compileSafePattern('(?i)(')) as UnsafePatternError
  t.type(err, UnsafePatternError)
  t.equal(err.pattern, '(?i)(')
  t.match(err.reason, /^invalid regular expression: /)
})

t.test('UnsafePatternError: the message quotes at most the first 100 characters, the field keeps the whole pattern', async (t) => {
  const long = 'b'.repeat(MAX_PATTERN_LENGTH + 1)
  const err = t.throws(() => compileSafePattern(long)) as UnsafePatternError
  t.equal(err.pattern, long)
  t.equal(err.message, `unsafe regular expression "${'b'.repeat(100)}": pattern longer than 1000 characters`)
})

t.test('compileSafePattern: an accepted polynomial pattern on a long text still returns (engine fallback)', async (t) => {
  // Without the linear-time fallback this takes O(n^4) steps; the test timeout is the guard.
  const re = compileSafePattern('a*a*a*a*b')
  t.equal(re.test('a'.repeat(20_000)), false)
  t.equal(re.test('a'.repeat(20_000) + 'b'), true)
})

// Checker bypasses found while writing these tests, now refused. checkPatternSafety does not run the
// pattern, so these assertions are fast.

t.test('checkPatternSafety: a count with many leading zeros is still read as a count ', async (t) => {
  t.equal(checkPatternSafety('(a+){00000000000000000000001,}$'), NESTED, 'nested quantifier hidden behind a 25-character count')
  t.equal(checkPatternSafety('a{00000000000000000000099999}'), COUNT, 'count above 10 hidden behind leading zeros')
})

t.test('checkPatternSafety: a repeated alternation wrapped in one more group is refused ', async (t) => {
  t.equal(checkPatternSafety('(?:(?:a|a))+$'), ALTERNATION, 'alternation directly inside the wrapper')
  t.equal(checkPatternSafety('(?:x(?:a|a))+$'), ALTERNATION, 'alternation after a literal in the wrapper')
})

t.test('checkPatternSafety: (?i) treats letters that upper-case alike as the same first character ', async (t) => {
  t.equal(checkPatternSafety('(?i)(?:σ|ς)+$'), ALTERNATION, 'sigma and final sigma')
  t.equal(checkPatternSafety('(?i)(?:µ|μ)+$'), ALTERNATION, 'micro sign and mu')
})

t.test('compileSafePattern: (?i) keeps \\x, \\u and \\c escapes whole and folds only letter ranges of one case', async (t) => {
  const re = compileSafePattern('(?i)\\u0041b\\cJ[\\x41\\u0042\\cJ][0-9][A-z]')
  t.equal(re.source, '\\u0041[bB]\\cJ[\\x41\\u0042\\cJ][0-9][A-z]')
  t.equal(re.test('AB\n\n5q'), true)
})
