import t from 'tap'
import { compileGlobs, globMatch } from '../../../shared/policy/glob.js'

t.test('globMatch: literal patterns match only themselves, case-sensitively', async (t) => {
  t.ok(globMatch('read_file', 'read_file'))
  t.notOk(globMatch('read_file', 'Read_file'))
  t.notOk(globMatch('read_file', 'read_file2'))
  t.notOk(globMatch('read', 'read_file'))
  t.ok(globMatch('', ''))
  t.notOk(globMatch('', 'x'))
})

t.test('globMatch: * matches any run of characters, including none', async (t) => {
  t.ok(globMatch('search_*', 'search_'))
  t.ok(globMatch('search_*', 'search_web'))
  t.ok(globMatch('*_delete', 'user_delete'))
  t.ok(globMatch('a*b*c', 'abc'))
  t.ok(globMatch('a*b*c', 'aXXbYYc'))
  t.notOk(globMatch('a*b*c', 'aXXbYY'))
  t.ok(globMatch('*', ''))
  t.ok(globMatch('**', 'anything'))
  t.ok(globMatch('a*a*a', 'aaa'))
  t.notOk(globMatch('a*a*a', 'aa'))
  t.ok(globMatch('gpt-4o*', 'gpt-4o-mini'))
  t.notOk(globMatch('gpt-4o*', 'gpt-4'))
})

t.test('globMatch: other characters, regex metacharacters included, are literal', async (t) => {
  t.ok(globMatch('payments.refund', 'payments.refund'))
  t.notOk(globMatch('payments.refund', 'paymentsXrefund'))
  t.ok(globMatch('a?b', 'a?b'))
  t.notOk(globMatch('a?b', 'axb'))
  t.ok(globMatch('[x]', '[x]'))
})

t.test('globMatch: hostile inputs with many stars finish (no exponential backtracking)', async (t) => {
  const pattern = '*a'.repeat(30) + '*b'
  const text = 'a'.repeat(20_000)
  t.notOk(globMatch(pattern, text))
})

t.test('compileGlobs: returns the first matching pattern, exact names before wildcards', async (t) => {
  const set = compileGlobs(['shell*', 'exec', '*_delete'])
  t.equal(set.match('exec'), 'exec')
  t.equal(set.match('shell_run'), 'shell*')
  t.equal(set.match('user_delete'), '*_delete')
  t.equal(set.match('read_file'), undefined)
  t.same(set.patterns, ['shell*', 'exec', '*_delete'])
  t.ok(Object.isFrozen(set.patterns))
})

t.test('compileGlobs: a pattern of stars alone matches everything', async (t) => {
  const set = compileGlobs(['x', '**'])
  t.equal(set.match(''), '**')
  t.equal(set.match('anything'), '**')
})

t.test('compileGlobs: an empty list matches nothing', async (t) => {
  t.equal(compileGlobs([]).match('x'), undefined)
})

t.test('compileGlobs: each pattern shape (prefix, suffix, infix, general) agrees with globMatch', async (t) => {
  const patterns = ['gpt-4o*', '*-preview', '*mini*', 'claude-*-sonnet', '**x', 'a*b*', '*a*b', '*x**']
  const texts = ['gpt-4o', 'gpt-4o-mini', 'o1-preview', 'minimal', 'claude-3-sonnet', 'claude-sonnet', 'x', 'yx',
    'ab', 'a-b-', 'cab', 'xyz', '', '*', 'gpt-4', 'preview', '-preview', 'xx', 'b']
  for (const p of patterns) {
    const set = compileGlobs([p])
    for (const text of texts) {
      t.equal(set.match(text), globMatch(p, text) ? p : undefined, `${JSON.stringify(p)} on ${JSON.stringify(text)}`)
    }
  }
})

t.test('compileGlobs: the first matching pattern in list order is named, whatever its shape', async (t) => {
  const set = compileGlobs(['*-mini', 'gpt-*', '*4o*'])
  t.equal(set.match('gpt-4o-mini'), '*-mini', 'a suffix pattern listed first')
  t.equal(set.match('gpt-4o'), 'gpt-*', 'then the prefix pattern')
  t.equal(set.match('my-4o'), '*4o*', 'then the infix pattern')
})
