import t, { type Test } from 'tap'
import { JsonLogicCompileError, compileLogic, type Evaluator } from '../../../shared/policy/jsonlogic.js'
import { EvalState, POLICY_OPERATIONS, combinedTest, commitPending, type PolicyContext } from '../../../shared/policy/operations.js'
import { MemoryApprovals, MemoryBudgetLedger, MemoryRateCounters, WINDOWS } from '../../../shared/policy/counters.js'

const T0 = Date.UTC(2026, 10, 22, 12, 0, 0)

function compile (rule: unknown): Evaluator {
  return compileLogic(rule, { operations: POLICY_OPERATIONS })
}

function ctx (extra: Partial<PolicyContext> = {}): PolicyContext {
  return { now: T0, pending: [], ...extra }
}

/** Asserts that compiling `rule` fails with JsonLogicCompileError at `path` with exactly `reason`. */
function refusesAtCompile (t: Test, rule: unknown, reason: string | RegExp, path = `rule.${Object.keys(rule as object)[0]}`): void {
  const err = t.throws(() => compile(rule), `refuses ${JSON.stringify(rule)}`) as JsonLogicCompileError
  t.type(err, JsonLogicCompileError)
  t.equal(err.path, path)
  if (typeof reason === 'string') t.equal(err.reason, reason)
  else t.match(err.reason, reason)
}

t.test('POLICY_OPERATIONS: registers exactly the eight policy operations', async (t) => {
  t.same([...POLICY_OPERATIONS.keys()].sort(), [
    'approval_missing', 'budget_reached', 'domain_match', 'glob', 'network_violation', 'pii', 'rate_exceeded', 'regex_match'
  ])
})

t.test('without POLICY_OPERATIONS the policy operations are unknown at compile time', async (t) => {
  const err = t.throws(() => compileLogic({ glob: ['a', 'a'] })) as JsonLogicCompileError
  t.equal(err.reason, 'unknown operation "glob"')
})

// glob

t.test('glob: a constant pattern list matches the value against every glob, case-sensitively', async (t) => {
  const fn = compile({ glob: [{ var: 'tool' }, ['shell*', 'exec', '*_delete']] })
  t.equal(fn({ tool: 'shell_run' }, {}), true)
  t.equal(fn({ tool: 'exec' }, {}), true)
  t.equal(fn({ tool: 'user_delete' }, {}), true)
  t.equal(fn({ tool: 'read_file' }, {}), false)
  t.equal(fn({ tool: 'Exec' }, {}), false, 'case-sensitive')
})

t.test('glob: a single constant pattern string works like a one-item list', async (t) => {
  const fn = compile({ glob: [{ var: 'model' }, 'gpt-4o*'] })
  t.equal(fn({ model: 'gpt-4o-mini' }, {}), true)
  t.equal(fn({ model: 'gpt-4' }, {}), false)
})

t.test('glob: a non-string value never matches, even the pattern "*"', async (t) => {
  const fn = compile({ glob: [{ var: 'tool' }, ['*']] })
  for (const tool of [undefined, null, 42, true, ['x'], { name: 'x' }]) {
    t.equal(fn({ tool }, {}), false, `${JSON.stringify(tool) ?? 'undefined'} does not match`)
  }
  t.equal(fn({ tool: '' }, {}), true, 'the empty string is a string')
})

t.test('glob: patterns computed from the data are compiled at evaluation time', async (t) => {
  const fn = compile({ glob: [{ var: 'tool' }, { var: 'patterns' }] })
  t.equal(fn({ tool: 'search_web', patterns: ['search_*'] }, {}), true)
  t.equal(fn({ tool: 'search_web', patterns: 'search_*' }, {}), true, 'a single computed string')
  t.equal(fn({ tool: 'search_web', patterns: ['read_*'] }, {}), false)
  t.equal(fn({ tool: 'search_web', patterns: [] }, {}), false, 'an empty list matches nothing')
})

t.test('glob: computed patterns that are not strings make the operation false instead of throwing', async (t) => {
  const fn = compile({ glob: [{ var: 'tool' }, { var: 'patterns' }] })
  t.equal(fn({ tool: 'x', patterns: [1, 2] }, {}), false)
  t.equal(fn({ tool: 'x', patterns: 7 }, {}), false)
  t.equal(fn({ tool: 'x' }, {}), false, 'missing patterns')
  t.equal(fn({ tool: 42, patterns: ['*'] }, {}), false, 'non-string value with computed patterns')
})

t.test('glob: a missing patterns argument compiles and never matches', async (t) => {
  t.equal(compile({ glob: [{ var: 'tool' }] })({ tool: 'x' }, {}), false)
  t.equal(compile({ glob: [] })({}, {}), false)
})

t.test('glob: constant patterns that are not strings are refused at compile time', async (t) => {
  refusesAtCompile(t, { glob: [{ var: 'tool' }, [1]] }, 'glob: patterns must be a string or a list of strings')
  refusesAtCompile(t, { glob: [{ var: 'tool' }, 5] }, 'glob: patterns must be a string or a list of strings')
  refusesAtCompile(t, { glob: [{ var: 'tool' }, ['ok', null]] }, 'glob: patterns must be a string or a list of strings')
})

// regex_match

t.test('regex_match: returns the source of the first pattern the text matches', async (t) => {
  const fn = compile({ regex_match: [{ var: 'text' }, ['password\\s*[:=]', '(?i)secret', '\\d{3}-\\d{2}-\\d{4}']] })
  t.equal(fn({ text: 'my password: hunter2' }, {}), 'password\\s*[:=]')
  t.equal(fn({ text: 'TOP SECRET' }, {}), '(?i)secret', 'the (?i) pattern matches regardless of case')
  t.equal(fn({ text: 'password=x and a secret' }, {}), 'password\\s*[:=]', 'the first in list order wins')
  t.equal(fn({ text: 'id 123-45-6789' }, {}), '\\d{3}-\\d{2}-\\d{4}')
})

t.test('regex_match: returns null when no pattern matches', async (t) => {
  const fn = compile({ regex_match: [{ var: 'text' }, ['password', 'secret']] })
  t.equal(fn({ text: 'nothing to see' }, {}), null)
  t.equal(fn({ text: 'PASSWORD' }, {}), null, 'patterns are case-sensitive without (?i)')
})

t.test('regex_match: a non-string text gives null', async (t) => {
  const fn = compile({ regex_match: [{ var: 'text' }, ['.*']] })
  for (const text of [undefined, null, 123, ['password'], { a: 1 }]) {
    t.equal(fn({ text }, {}), null, `${JSON.stringify(text) ?? 'undefined'} gives null`)
  }
  t.equal(fn({ text: '' }, {}), '.*', 'the empty string is matched')
})

t.test('regex_match: a single pattern string works like a one-item list', async (t) => {
  const fn = compile({ regex_match: [{ var: 'text' }, 'drop\\s+table'] })
  t.equal(fn({ text: 'DROP TABLE x; drop   table y' }, {}), 'drop\\s+table')
  t.equal(fn({ text: 'select 1' }, {}), null)
})

t.test('regex_match: the same compiled rule gives the same answer on repeated evaluations', async (t) => {
  // Guards against a stateful (global or sticky) RegExp: lastIndex must not carry over.
  const fn = compile({ regex_match: [{ var: 'text' }, ['secret']] })
  for (let i = 0; i < 3; i++) t.equal(fn({ text: 'a secret' }, {}), 'secret', `evaluation ${i + 1}`)
})

t.test('regex_match: patterns with and without (?i) are checked together and each keeps its own case rule', async (t) => {
  const fn = compile({ regex_match: [{ var: 'text' }, ['token', '(?i)secret', 'KEY']] })
  t.equal(fn({ text: 'a TOKEN and a Secret' }, {}), '(?i)secret')
  t.equal(fn({ text: 'the KEY' }, {}), 'KEY')
  t.equal(fn({ text: 'the key, a TOKEN' }, {}), null, 'key and token are case-sensitive')
})

t.test('regex_match: patterns that cannot be joined (same group name twice) still work one by one', async (t) => {
  const fn = compile({ regex_match: [{ var: 'text' }, ['(?<n>\\d{4})-x', '(?<n>[a-z]+)!']] })
  t.equal(fn({ text: 'code 2024-x' }, {}), '(?<n>\\d{4})-x')
  t.equal(fn({ text: 'hello!' }, {}), '(?<n>[a-z]+)!')
  t.equal(fn({ text: 'nothing' }, {}), null)
})

t.test('combinedTest: one flag set gives one joined test that is true when any pattern matches', async (t) => {
  const test = combinedTest([/abc/, /x|y/, /^start/]) as (text: string) => boolean
  t.type(test, 'function')
  t.equal(test('--abc--'), true)
  t.equal(test('y'), true, 'an alternation inside one pattern stays inside its group')
  t.equal(test('start here'), true)
  t.equal(test('not at start'), false, 'anchors keep their meaning')
  t.equal(test('ab'), false)
})

t.test('combinedTest: different flag sets are joined apart and each keeps its flags', async (t) => {
  const test = combinedTest([/secret/i, /token/, /pass/i]) as (text: string) => boolean
  t.equal(test('SECRET'), true)
  t.equal(test('PASS'), true)
  t.equal(test('token'), true)
  t.equal(test('TOKEN'), false)
})

t.test('combinedTest: patterns reusing a group name cannot be joined and give undefined', async (t) => {
  t.equal(combinedTest([/(?<n>a)/, /(?<n>b)/]), undefined)
})

t.test('regex_match: an unsafe pattern is refused at compile time with the checker reason', async (t) => {
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, ['ok', '(a+)+$']] },
    'unsafe regular expression "(a+)+$": nested quantifier (a repeated group that itself repeats)')
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, '(a)\\1'] },
    'unsafe regular expression "(a)\\\\1": back-references are not allowed')
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, ['(']] }, /^unsafe regular expression "\(": invalid regular expression: /)
})

t.test('regex_match: patterns computed from the data or missing are refused at compile time', async (t) => {
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, { var: 'patterns' }] }, 'regex_match: patterns must be written in the rule, not computed')
  refusesAtCompile(t, { regex_match: [{ var: 'text' }] }, 'regex_match: patterns must be written in the rule, not computed')
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, ['a', { var: 'p' }]] }, 'regex_match: patterns must be written in the rule, not computed')
})

t.test('regex_match: constant patterns that are not strings are refused at compile time', async (t) => {
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, [1]] }, 'regex_match: patterns must be a string or a list of strings')
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, [['a']]] }, 'regex_match: patterns must be a string or a list of strings')
  refusesAtCompile(t, { regex_match: [{ var: 'text' }, null] }, 'regex_match: patterns must be a string or a list of strings')
})

t.test('regex_match: a compile error inside a larger rule names the nested path', async (t) => {
  refusesAtCompile(t, { and: [true, { regex_match: [{ var: 'text' }, ['(a|a)*']] }] },
    'unsafe regular expression "(a|a)*": repeated alternation whose branches can start with the same character',
    'rule.and[1].regex_match')
})

// domain_match

t.test('domain_match: returns the first matching entry, exact or wildcard, comparing hosts case-insensitively', async (t) => {
  const fn = compile({ domain_match: [{ var: 'host' }, ['example.com', '*.corp.example']] })
  t.equal(fn({ host: 'example.com' }, {}), 'example.com')
  t.equal(fn({ host: 'EXAMPLE.COM' }, {}), 'example.com', 'the host is lower-cased')
  t.equal(fn({ host: 'api.corp.example' }, {}), '*.corp.example')
  t.equal(fn({ host: 'API.Corp.Example' }, {}), '*.corp.example')
})

t.test('domain_match: returns null for other hosts, for the wildcard base and for non-strings', async (t) => {
  const fn = compile({ domain_match: [{ var: 'host' }, ['example.com', '*.corp.example']] })
  t.equal(fn({ host: 'www.example.com' }, {}), null, 'example.com does not cover its subdomains')
  t.equal(fn({ host: 'corp.example' }, {}), null, '*.corp.example does not cover corp.example')
  t.equal(fn({ host: 'evil-example.com' }, {}), null)
  t.equal(fn({ host: 42 }, {}), null)
  t.equal(fn({}, {}), null)
})

t.test('domain_match: a single domain string works like a one-item list', async (t) => {
  const fn = compile({ domain_match: [{ var: 'host' }, '*.example.com'] })
  t.equal(fn({ host: 'a.example.com' }, {}), '*.example.com')
})

t.test('domain_match: computed, missing or non-string domains are refused at compile time', async (t) => {
  refusesAtCompile(t, { domain_match: [{ var: 'host' }, { var: 'domains' }] }, 'domain_match: domains must be written in the rule, not computed')
  refusesAtCompile(t, { domain_match: [{ var: 'host' }] }, 'domain_match: domains must be written in the rule, not computed')
  refusesAtCompile(t, { domain_match: [{ var: 'host' }, [true]] }, 'domain_match: domains must be a string or a list of strings')
})

// network_violation

t.test('network_violation: a denied host gives a message naming the host and the entry', async (t) => {
  const fn = compile({ network_violation: [{ var: 'urls' }, null, ['evil.com', '*.tracker.net']] })
  t.equal(fn({ urls: ['https://evil.com/x'] }, {}), 'host evil.com is denied (evil.com)')
  t.equal(fn({ urls: ['http://ads.tracker.net:8080/p'] }, {}), 'host ads.tracker.net is denied (*.tracker.net)')
  t.equal(fn({ urls: ['HTTPS://EVIL.COM'] }, {}), 'host evil.com is denied (evil.com)', 'hosts compare case-insensitively')
})

t.test('network_violation: with no allow-list, hosts not denied pass', async (t) => {
  const fn = compile({ network_violation: [{ var: 'urls' }, null, ['evil.com']] })
  t.equal(fn({ urls: ['https://example.com', 'notevil.com/path', 'https://sub.evil.com'] }, {}), null)
})

t.test('network_violation: with an allow-list, a host outside it is refused and hosts inside pass', async (t) => {
  const fn = compile({ network_violation: [{ var: 'urls' }, ['example.com', '*.example.com'], null] })
  t.equal(fn({ urls: ['https://example.com/a', 'https://api.example.com/b'] }, {}), null)
  t.equal(fn({ urls: ['https://api.example.com', 'https://other.org/x'] }, {}), 'host other.org is not in the allowed domains')
  t.equal(fn({ urls: ['example.com.evil.org'] }, {}), 'host example.com.evil.org is not in the allowed domains')
})

t.test('network_violation: a host both allowed and denied is denied (the deny list is checked first)', async (t) => {
  const fn = compile({ network_violation: [{ var: 'urls' }, ['*.example.com'], ['evil.example.com']] })
  t.equal(fn({ urls: ['https://evil.example.com'] }, {}), 'host evil.example.com is denied (evil.example.com)')
  t.equal(fn({ urls: ['https://good.example.com'] }, {}), null)
})

t.test('network_violation: an unparsable URL gives a message quoting at most 200 of its characters', async (t) => {
  const fn = compile({ network_violation: [{ var: 'urls' }, null, null] })
  t.equal(fn({ urls: ['http://exa mple.com'] }, {}), 'URL "http://exa mple.com" cannot be parsed')
  t.equal(fn({ urls: [''] }, {}), 'URL "" cannot be parsed')
  const long = 'http://' + 'a b'.repeat(100)
  t.equal(fn({ urls: [long] }, {}), `URL "${long.slice(0, 200)}" cannot be parsed`)
})

t.test('network_violation: nested URL lists are searched, non-string entries skipped, the first violation reported', async (t) => {
  const fn = compile({ network_violation: [[{ var: 'context.url' }, { var: 'tool_input.url' }, { var: 'tool_input.urls' }], ['example.com'], null] })
  t.equal(fn({ context: {}, tool_input: { urls: ['https://example.com', 5, null, 'https://a.org', 'https://b.org'] } }, {}),
    'host a.org is not in the allowed domains', 'the first refused URL in a nested list')
  t.equal(fn({ context: { url: 'https://b.org' }, tool_input: { urls: ['https://a.org'] } }, {}),
    'host b.org is not in the allowed domains', 'an earlier top-level URL comes first')
  t.equal(fn({ context: { url: 'https://example.com' }, tool_input: { url: 7, urls: [['https://a.org']] } }, {}), null,
    'only one level of nesting is searched; numbers and deeper lists are skipped')
  t.equal(fn({}, {}), null, 'no URLs at all')
})

t.test('network_violation: a value that is not a list gives null', async (t) => {
  const fn = compile({ network_violation: [{ var: 'urls' }, ['example.com'], null] })
  t.equal(fn({ urls: 'https://other.org' }, {}), null)
  t.equal(fn({ urls: { url: 'https://other.org' } }, {}), null)
  t.equal(fn({}, {}), null)
})

t.test('network_violation: computed or missing domain lists are refused at compile time', async (t) => {
  refusesAtCompile(t, { network_violation: [{ var: 'urls' }, { var: 'allowed' }, null] }, 'network_violation: allowed domains must be written in the rule, not computed')
  refusesAtCompile(t, { network_violation: [{ var: 'urls' }, null, { var: 'denied' }] }, 'network_violation: denied domains must be written in the rule, not computed')
  refusesAtCompile(t, { network_violation: [{ var: 'urls' }, null] }, 'network_violation: denied domains must be written in the rule, not computed')
  refusesAtCompile(t, { network_violation: [{ var: 'urls' }] }, 'network_violation: allowed domains must be written in the rule, not computed')
})

t.test('network_violation: domain lists that are not strings are refused at compile time', async (t) => {
  refusesAtCompile(t, { network_violation: [{ var: 'urls' }, 5, null] }, 'network_violation: allowed domains must be a string or a list of strings')
  refusesAtCompile(t, { network_violation: [{ var: 'urls' }, null, [1]] }, 'network_violation: denied domains must be a string or a list of strings')
})

// pii

t.test('pii: returns the first kind, in list order, found in the text', async (t) => {
  const fn = compile({ pii: [{ var: 'text' }, ['email', 'credit_card', 'us_ssn', 'phone', 'secret']] })
  t.equal(fn({ text: 'mail ops@example.com' }, ctx()), 'email')
  t.equal(fn({ text: 'card 4111 1111 1111 1111' }, ctx()), 'credit_card')
  t.equal(fn({ text: 'SSN: 123-45-6789' }, ctx()), 'us_ssn')
  t.equal(fn({ text: 'call +1 (555) 123-4567' }, ctx()), 'phone')
  t.equal(fn({ text: '-----BEGIN PRIVATE KEY-----' }, ctx()), 'secret')
  t.equal(fn({ text: 'card 4111 1111 1111 1111, mail ops@example.com' }, ctx()), 'email', 'list order, not text order')
})

t.test('pii: returns null when the text holds none of the kinds asked for', async (t) => {
  const fn = compile({ pii: [{ var: 'text' }, ['credit_card']] })
  t.equal(fn({ text: 'mail ops@example.com' }, ctx()), null)
})

t.test('pii: a single kind string works like a one-item list', async (t) => {
  const fn = compile({ pii: [{ var: 'text' }, 'email'] })
  t.equal(fn({ text: 'ops@example.com' }, ctx()), 'email')
})

t.test('pii: an empty or non-string text gives null', async (t) => {
  const fn = compile({ pii: [{ var: 'text' }, ['email']] })
  for (const text of ['', undefined, null, 42, ['ops@example.com']]) {
    t.equal(fn({ text }, ctx()), null, `${JSON.stringify(text) ?? 'undefined'} gives null`)
  }
})

t.test('pii: the first kind found, in the order given; texts that alternate give their own answers', async (t) => {
  const fn = compile({ pii: [{ var: 'text' }, ['credit_card', 'email', 'phone']] })
  const both = 'mail ops@example.com or call 555-123-4567'
  t.equal(fn({ text: both }, ctx()), 'email')
  t.equal(compile({ pii: [{ var: 'text' }, ['phone', 'email']] })({ text: both }, ctx()), 'phone')
  for (let i = 0; i < 3; i++) {
    t.equal(fn({ text: 'card 4111 1111 1111 1111' }, ctx()), 'credit_card', `round ${i}: card`)
    t.equal(fn({ text: 'nothing personal' }, ctx()), null, `round ${i}: nothing`)
    t.equal(fn({ text: 'call 555-123-4567' }, ctx()), 'phone', `round ${i}: phone`)
  }
})

t.test('pii: an unknown kind is refused at compile time', async (t) => {
  refusesAtCompile(t, { pii: [{ var: 'text' }, ['email', 'ssn']] }, 'pii: unknown kind "ssn"')
  refusesAtCompile(t, { pii: [{ var: 'text' }, 'EMAIL'] }, 'pii: unknown kind "EMAIL"')
  refusesAtCompile(t, { and: [true, { pii: [{ var: 'text' }, ['passport']] }] }, 'pii: unknown kind "passport"', 'rule.and[1].pii')
})

t.test('pii: computed, missing or non-string kinds are refused at compile time', async (t) => {
  refusesAtCompile(t, { pii: [{ var: 'text' }, { var: 'kinds' }] }, 'pii: kinds must be written in the rule, not computed')
  refusesAtCompile(t, { pii: [{ var: 'text' }] }, 'pii: kinds must be written in the rule, not computed')
  refusesAtCompile(t, { pii: [{ var: 'text' }, [1]] }, 'pii: kinds must be a string or a list of strings')
})

// rate_exceeded

t.test('rate_exceeded: counts one per evaluation and fails once the limit would be passed', async (t) => {
  const rates = new MemoryRateCounters()
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'minute', 2] })
  const results: unknown[] = []
  for (let i = 0; i < 3; i++) {
    const c = ctx({ rates })
    results.push(fn({ agent: 'a1' }, c))
    commitPending(c)
  }
  t.same(results, [false, false, true], 'the third request in the minute exceeds 2')
  t.equal(rates.total('a1', WINDOWS.minute, T0), 3, 'every committed request was counted')
})

t.test('rate_exceeded: the count is only queued; nothing is added until pending writes run', async (t) => {
  const rates = new MemoryRateCounters()
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'hour', 1] })
  const c = ctx({ rates })
  t.equal(fn({ agent: 'a1' }, c), false)
  t.equal(c.pending.length, 3, 'one write queued (a triple: write, key, amount)')
  t.equal(rates.total('a1', WINDOWS.hour, T0), 0, 'not counted before commit')
  t.equal(fn({ agent: 'a1' }, ctx({ rates })), false, 'an uncommitted (denied) request does not use up the limit')
  commitPending(c)
  t.equal(rates.total('a1', WINDOWS.hour, T0), 1)
  t.equal(fn({ agent: 'a1' }, ctx({ rates })), true)
})

t.test('rate_exceeded: keys are counted apart and converted to strings', async (t) => {
  const rates = new MemoryRateCounters()
  rates.add('42', WINDOWS.minute, 5, T0)
  const fn = compile({ rate_exceeded: ['', { var: 'key' }, 'minute', 5] })
  t.equal(fn({ key: 42 }, ctx({ rates })), true, 'the number 42 shares the count of "42"')
  t.equal(fn({ key: 'other' }, ctx({ rates })), false)
})

t.test('rate_exceeded: the namespace prefixes the key; a missing subject counts as the empty string', async (t) => {
  const rates = new MemoryRateCounters()
  const fn = compile({ rate_exceeded: ['p1|agent:', { var: 'agent' }, 'minute', 5] })
  for (const agent of ['a1', 'a1', 'a2', null, undefined]) {
    const c = ctx({ rates })
    fn({ agent }, c)
    commitPending(c)
  }
  t.equal(rates.total('p1|agent:a1', WINDOWS.minute, T0), 2, 'counted under namespace + subject')
  t.equal(rates.total('p1|agent:a2', WINDOWS.minute, T0), 1, 'a new subject gets its own key')
  t.equal(rates.total('p1|agent:', WINDOWS.minute, T0), 2, 'null and undefined share the empty subject')
  t.equal(rates.total('a1', WINDOWS.minute, T0), 0, 'nothing under the bare subject')
})

t.test('rate_exceeded: a subject that changes between calls is keyed afresh each time (no stale key)', async (t) => {
  const rates = new MemoryRateCounters()
  const fn = compile({ rate_exceeded: ['n:', { var: 'who' }, 'minute', 100] })
  const who = ['x', 'y', 'x', 1, '1', ['a', 'b'], ['a', 'c']]
  for (const w of who) {
    const c = ctx({ rates })
    fn({ who: w }, c)
    commitPending(c)
  }
  t.equal(rates.total('n:x', WINDOWS.minute, T0), 2)
  t.equal(rates.total('n:y', WINDOWS.minute, T0), 1)
  t.equal(rates.total('n:1', WINDOWS.minute, T0), 2, 'the number 1 and the string "1" share a key')
  t.equal(rates.total('n:a,b', WINDOWS.minute, T0), 1, 'a list is keyed by its string form')
  t.equal(rates.total('n:a,c', WINDOWS.minute, T0), 1, 'and a different list by its own')
})

t.test('rate_exceeded: the namespace must be a string written in the rule', async (t) => {
  refusesAtCompile(t, { rate_exceeded: [{ var: 'ns' }, { var: 'agent' }, 'minute', 1] }, 'rate_exceeded: namespace must be written in the rule, not computed')
  refusesAtCompile(t, { rate_exceeded: [7, { var: 'agent' }, 'minute', 1] }, 'rate_exceeded: namespace must be a string')
  refusesAtCompile(t, { rate_exceeded: [] }, 'rate_exceeded: namespace must be written in the rule, not computed')
})

t.test('rate_exceeded: an amount argument counts that amount instead of one', async (t) => {
  const rates = new MemoryRateCounters()
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'day', 1000, { var: 'tokens' }] })
  const c1 = ctx({ rates })
  t.equal(fn({ agent: 'a1', tokens: 600 }, c1), false)
  commitPending(c1)
  t.equal(rates.total('a1', WINDOWS.day, T0), 600)
  t.equal(fn({ agent: 'a1', tokens: 400 }, ctx({ rates })), false, '600 + 400 = 1000 does not exceed 1000')
  t.equal(fn({ agent: 'a1', tokens: 401 }, ctx({ rates })), true, '600 + 401 exceeds 1000')
})

t.test('rate_exceeded: a present amount that is zero, negative or not a number counts nothing', async (t) => {
  const rates = new MemoryRateCounters()
  rates.add('a1', WINDOWS.day, 1000, T0)
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'day', 1000, { var: 'tokens' }] })
  for (const tokens of [0, -5, '50', undefined]) {
    const c = ctx({ rates })
    t.equal(fn({ agent: 'a1', tokens }, c), false, `amount ${JSON.stringify(tokens) ?? 'undefined'}: at the limit, not over it`)
    t.equal(c.pending.length, 0, 'nothing queued')
  }
  const over = new MemoryRateCounters()
  over.add('a1', WINDOWS.day, 1001, T0)
  t.equal(fn({ agent: 'a1' }, ctx({ rates: over })), true, 'already over the limit without adding')
})

t.test('rate_exceeded: a limit of 0 fails every counted request', async (t) => {
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'minute', 0] })
  t.equal(fn({ agent: 'a1' }, ctx({ rates: new MemoryRateCounters() })), true)
})

t.test('rate_exceeded: without a counter store it passes and queues nothing', async (t) => {
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'minute', 0] })
  const c = ctx()
  t.equal(fn({ agent: 'a1' }, c), false)
  t.equal(c.pending.length, 0)
})

t.test('rate_exceeded: the window slides with ctx.now', async (t) => {
  const rates = new MemoryRateCounters()
  const fn = compile({ rate_exceeded: ['', { var: 'agent' }, 'minute', 1] })
  const c = ctx({ rates })
  fn({ agent: 'a1' }, c)
  commitPending(c)
  t.equal(fn({ agent: 'a1' }, ctx({ rates, now: T0 + 30_000 })), true, 'inside the minute')
  t.equal(fn({ agent: 'a1' }, ctx({ rates, now: T0 + 60_000 })), false, 'the earlier request has slid out')
})

t.test('rate_exceeded: a window other than minute, hour or day is refused at compile time', async (t) => {
  const reason = 'rate_exceeded: window must be "minute", "hour" or "day"'
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'week', 1] }, reason)
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'Minute', 1] }, reason)
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'toString', 1] }, reason, 'rule.rate_exceeded')
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 60, 1] }, reason)
})

t.test('rate_exceeded: a limit that is not a number >= 0 is refused at compile time', async (t) => {
  const reason = 'rate_exceeded: limit must be a number >= 0'
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'minute', -1] }, reason)
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'minute', '5'] }, reason)
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'minute', null] }, reason)
})

t.test('rate_exceeded: a computed or missing window or limit is refused at compile time', async (t) => {
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, { var: 'w' }, 1] }, 'rate_exceeded: window must be written in the rule, not computed')
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }] }, 'rate_exceeded: window must be written in the rule, not computed')
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'minute', { var: 'limit' }] }, 'rate_exceeded: limit must be written in the rule, not computed')
  refusesAtCompile(t, { rate_exceeded: ['', { var: 'agent' }, 'minute'] }, 'rate_exceeded: limit must be written in the rule, not computed')
})

// budget_reached

t.test('budget_reached: true once the agent has spent the maximum in the day, false below it', async (t) => {
  const budget = new MemoryBudgetLedger()
  const fn = compile({ budget_reached: ['agent', { var: 'agent' }, 'day', 10] })
  budget.record({ agentId: 'a1', usd: 9.99, at: T0 })
  t.equal(fn({ agent: 'a1' }, ctx({ budget })), false, '9.99 of 10 spent')
  budget.record({ agentId: 'a1', usd: 0.01, at: T0 })
  t.equal(fn({ agent: 'a1' }, ctx({ budget })), true, '10 of 10 spent: reached')
  t.equal(fn({ agent: 'a2' }, ctx({ budget })), false, 'another agent has spent nothing')
})

t.test('budget_reached: spend of an earlier day counts for the month but not for the day', async (t) => {
  const budget = new MemoryBudgetLedger()
  budget.record({ agentId: 'a1', usd: 20, at: T0 - 86_400_000 })
  t.equal(compile({ budget_reached: ['agent', { var: 'agent' }, 'day', 10] })({ agent: 'a1' }, ctx({ budget })), false)
  t.equal(compile({ budget_reached: ['agent', { var: 'agent' }, 'month', 10] })({ agent: 'a1' }, ctx({ budget })), true)
})

t.test('budget_reached: per user reads the user subject', async (t) => {
  const budget = new MemoryBudgetLedger()
  budget.record({ agentId: 'a1', userId: 'u1', usd: 5, at: T0 })
  const fn = compile({ budget_reached: ['user', { var: 'user_id' }, 'day', 5] })
  t.equal(fn({ user_id: 'u1' }, ctx({ budget })), true)
  t.equal(fn({ user_id: 'u2' }, ctx({ budget })), false)
})

t.test('budget_reached: per tenant ignores the subject argument and reads the tenant total', async (t) => {
  const budget = new MemoryBudgetLedger()
  budget.record({ agentId: 'a1', usd: 3, at: T0 })
  budget.record({ agentId: 'a2', usd: 3, at: T0 })
  const fn = compile({ budget_reached: ['tenant', { var: 'agent' }, 'month', 6] })
  t.equal(fn({ agent: 'a3' }, ctx({ budget })), true, 'a3 spent nothing, the tenant spent 6')
  t.equal(fn({}, ctx({ budget })), true, 'even with no subject')
})

t.test('budget_reached: a missing, empty or non-string subject passes', async (t) => {
  const budget = new MemoryBudgetLedger()
  const fn = compile({ budget_reached: ['agent', { var: 'agent' }, 'day', 0] })
  for (const agent of [undefined, '', 42, null]) {
    t.equal(fn({ agent }, ctx({ budget })), false, `subject ${JSON.stringify(agent) ?? 'undefined'}`)
  }
  t.equal(fn({ agent: 'a1' }, ctx({ budget })), true, 'a max of 0 is reached by any real subject')
})

t.test('budget_reached: without a ledger it passes', async (t) => {
  const fn = compile({ budget_reached: ['tenant', null, 'day', 0] })
  t.equal(fn({}, ctx()), false)
})

t.test('budget_reached: per, period and max with wrong values are refused at compile time', async (t) => {
  refusesAtCompile(t, { budget_reached: ['team', { var: 'a' }, 'day', 1] }, 'budget_reached: per must be "agent", "user" or "tenant"')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }, 'week', 1] }, 'budget_reached: period must be "day" or "month"')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }, 'day', -0.5] }, 'budget_reached: max must be a number >= 0')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }, 'day', '10'] }, 'budget_reached: max must be a number >= 0')
})

t.test('budget_reached: computed or missing per, period and max are refused at compile time', async (t) => {
  refusesAtCompile(t, { budget_reached: [{ var: 'per' }, { var: 'a' }, 'day', 1] }, 'budget_reached: per must be written in the rule, not computed')
  refusesAtCompile(t, { budget_reached: [] }, 'budget_reached: per must be written in the rule, not computed')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }, { var: 'period' }, 1] }, 'budget_reached: period must be written in the rule, not computed')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }] }, 'budget_reached: period must be written in the rule, not computed')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }, 'day', { var: 'max' }] }, 'budget_reached: max must be written in the rule, not computed')
  refusesAtCompile(t, { budget_reached: ['agent', { var: 'a' }, 'day'] }, 'budget_reached: max must be written in the rule, not computed')
})

// approval_missing

const approvalRule = { approval_missing: [{ var: 'context.approval_id' }, { var: 'agent.id' }] }
const request = (approvalId: unknown, agentId: unknown = 'a1'): unknown => ({ context: { approval_id: approvalId }, agent: { id: agentId } })

t.test('approval_missing: an approved approval of this agent passes and is consumed only on commit', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap1', 'a1', 'approved')
  const fn = compile(approvalRule)
  const c = ctx({ approvals })
  t.equal(fn(request('ap1'), c), false)
  t.equal(c.pending.length, 3, 'consumption queued (one triple)')
  t.equal(approvals.state('ap1', 'a1'), 'approved', 'not consumed before commit')
  t.equal(fn(request('ap1'), ctx({ approvals })), false, 'still usable while the first decision is uncommitted')
  commitPending(c)
  t.equal(approvals.state('ap1', 'a1'), 'used')
  t.equal(fn(request('ap1'), ctx({ approvals })), true, 'a used approval no longer passes')
})

t.test('approval_missing: pending, rejected, used, unknown and other agents\' approvals are missing', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('pending', 'a1', 'pending')
  approvals.set('rejected', 'a1', 'rejected')
  approvals.set('used', 'a1', 'used')
  approvals.set('theirs', 'a2', 'approved')
  const fn = compile(approvalRule)
  for (const id of ['pending', 'rejected', 'used', 'nope', 'theirs']) {
    const c = ctx({ approvals })
    t.equal(fn(request(id), c), true, `approval ${id} is missing`)
    t.equal(c.pending.length, 0, 'nothing queued')
  }
})

t.test('approval_missing: a non-string approval id or agent id, or no approval source, is missing', async (t) => {
  const approvals = new MemoryApprovals()
  approvals.set('ap1', 'a1', 'approved')
  const fn = compile(approvalRule)
  t.equal(fn(request(undefined), ctx({ approvals })), true, 'no approval id')
  t.equal(fn(request(1), ctx({ approvals })), true, 'numeric approval id')
  t.equal(fn(request('ap1', 7), ctx({ approvals })), true, 'numeric agent id')
  t.equal(fn(request('ap1'), ctx()), true, 'no approval source')
  t.equal(compile({ approval_missing: [] })({}, ctx({ approvals })), true, 'no arguments at all')
})

t.test('EvalState: the clock is read once, by the first operation that needs the time, and never otherwise', async (t) => {
  let reads = 0
  const clock = (): number => { reads++; return T0 }
  const rates = new MemoryRateCounters()
  const state = new EvalState(clock, rates, undefined, undefined)
  t.equal(reads, 0, 'creating the state reads nothing')
  const fn = compile({ or: [{ rate_exceeded: ['a:', 'x', 'minute', 5] }, { rate_exceeded: ['b:', 'x', 'hour', 5] }] })
  t.equal(fn({}, state), false)
  t.equal(reads, 1, 'two counters, one read')
  t.equal(state.now, T0, 'later reads give the same time')
  t.equal(reads, 1)
  commitPending(state)
  t.equal(rates.total('a:x', WINDOWS.minute, T0), 1, 'the queued writes use that time')
  const plain = new EvalState(clock, rates, undefined, undefined)
  compile({ glob: [{ var: 'tool' }, ['x*']] })({ tool: 'xy' }, plain)
  t.equal(reads, 1, 'an evaluation with no time-based operation never reads the clock')
  const zero = new EvalState(() => { reads++; return 0 }, rates, undefined, undefined)
  t.equal(zero.now, 0)
  t.equal(zero.now, 0)
  t.equal(reads, 2, 'a clock at 0 is read once too')
})
