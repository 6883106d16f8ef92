/**
 * `agentgov policy validate|compile|eval` (shared/cli/policy.ts) through `main`, with in-memory output
 * streams and policy files (JSON and YAML) in a test directory.
 */
import t from 'tap'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { main, POLICY_HELP } from '../../../shared/cli/main.js'
import { readPolicyFile, validatePolicyList } from '../../../shared/cli/policy.js'
import { policyLogic } from '../../../shared/policy/registry.js'

/** Runs main with streams that collect what is written. */
async function run (args: string[]): Promise<{ code: number, out: string, err: string }> {
  let out = ''
  let err = ''
  const sink = (add: (s: string) => void): Writable => new Writable({
    write (chunk: Buffer | string, _enc, cb) { add(chunk.toString()); cb() }
  })
  const code = await main(args, sink((s) => { out += s }), sink((s) => { err += s }))
  return { code, out, err }
}

const POLICIES = [
  { name: 'tools', type: 'tool_permission', config: { allowed_tools: ['search'] } },
  { name: 'models', type: 'model_restriction', config: { max_tokens: 100 }, priority: 5 }
]

const YAML = `policies:
  - name: tools
    type: tool_permission
    enforcement: enforce
    config:
      denied_tools: [shell]
  - name: pii
    type: content_filter
    enforcement: audit
    config:
      pii: [email]
`

t.test('policy validate: a valid JSON list exits 0 and says how many policies it holds', async (t) => {
  const dir = t.testdir({ 'p.json': JSON.stringify(POLICIES), 'one.json': JSON.stringify([POLICIES[0]]) })
  t.same(await run(['policy', 'validate', join(dir, 'p.json')]), { code: 0, out: `${join(dir, 'p.json')}: 2 valid policies\n`, err: '' })
  t.same(await run(['policy', 'validate', join(dir, 'one.json')]), { code: 0, out: `${join(dir, 'one.json')}: 1 valid policy\n`, err: '' })
})

t.test('policy validate: an object with a "policies" list, and YAML files (.yaml, .yml, any case), are read too', async (t) => {
  const dir = t.testdir({ 'wrapped.json': JSON.stringify({ policies: POLICIES }), 'p.yaml': YAML, 'p.yml': YAML, 'P.YML': YAML })
  t.equal((await run(['policy', 'validate', join(dir, 'wrapped.json')])).out, `${join(dir, 'wrapped.json')}: 2 valid policies\n`)
  for (const f of ['p.yaml', 'p.yml', 'P.YML']) {
    const res = await run(['policy', 'validate', join(dir, f)])
    t.same(res, { code: 0, out: `${join(dir, f)}: 2 valid policies\n`, err: '' }, f)
  }
})

t.test('policy validate: an empty list is valid', async (t) => {
  const dir = t.testdir({ 'empty.json': '[]' })
  t.same(await run(['policy', 'validate', join(dir, 'empty.json')]), { code: 0, out: `${join(dir, 'empty.json')}: 0 valid policies\n`, err: '' })
})

t.test('policy validate: every error is printed on stderr as "FILE: [i].path: message", then the count, exit 1', async (t) => {
  const dir = t.testdir({
    'bad.json': JSON.stringify([
      { name: 'ok', type: 'custom', config: { deny_if: false } },
      { name: 'x', type: 'tool_permission', config: { allowed_tools: ['a', 'b', 3] } },
      { name: '', type: 'nope' },
      { name: 'r', type: 'rate_limit', config: { requests_per_minute: 0, burst: 1 }, priority: 1.5 }
    ])
  })
  const file = join(dir, 'bad.json')
  const res = await run(['policy', 'validate', file])
  t.equal(res.code, 1)
  t.equal(res.out, '')
  t.equal(res.err, [
    `${file}: [1].config.allowed_tools[2]: must be a string`,
    `${file}: [2].name: must not be empty`,
    `${file}: [2].type: must be one of: rate_limit, tool_permission, model_restriction, budget_limit, content_filter, network_policy, human_oversight, custom`,
    `${file}: [3].priority: must be an integer`,
    `${file}: [3].config.burst: unknown field (expected one of: requests_per_minute, requests_per_hour, tokens_per_day, per, actions)`,
    `${file}: [3].config.requests_per_minute: must be between 1 and 9007199254740991`,
    '6 errors',
    ''
  ].join('\n'))
})

t.test('policy validate: one error is counted in the singular; a policy that is not an object is "[i]" without a dot', async (t) => {
  const dir = t.testdir({ 'five.json': '[5]' })
  const file = join(dir, 'five.json')
  t.same(await run(['policy', 'validate', file]), { code: 1, out: '', err: `${file}: [0]: a policy must be an object\n1 error\n` })
})

t.test('policy validate: YAML errors carry the same paths', async (t) => {
  const dir = t.testdir({ 'bad.yaml': 'policies:\n  - name: n\n    type: network_policy\n    config:\n      denied_domains: ["ok.com", "bad domain"]\n' })
  const file = join(dir, 'bad.yaml')
  const res = await run(['policy', 'validate', file])
  t.equal(res.code, 1)
  t.equal(res.err, `${file}: [0].config.denied_domains[1]: must be a domain name, optionally prefixed by "*."\n1 error\n`)
})

t.test('policy validate: files that cannot be read or parsed exit 1 with the file named on stderr', async (t) => {
  const dir = t.testdir({ 'broken.json': '{ nope', 'broken.yml': 'a: [', 'sub': {} })
  const broken = await run(['policy', 'validate', join(dir, 'broken.json')])
  t.equal(broken.code, 1)
  t.equal(broken.out, '')
  t.match(broken.err, new RegExp(`^agentgov policy: ${escape(join(dir, 'broken.json'))}: cannot parse: `))
  const yaml = await run(['policy', 'validate', join(dir, 'broken.yml')])
  t.equal(yaml.code, 1)
  t.match(yaml.err, new RegExp(`^agentgov policy: ${escape(join(dir, 'broken.yml'))}: cannot parse: `))
  const missing = await run(['policy', 'validate', join(dir, 'absent.json')])
  t.equal(missing.code, 1)
  t.equal(missing.err, `agentgov policy: ENOENT: no such file or directory, open '${join(dir, 'absent.json')}'\n`)
  const folder = await run(['policy', 'validate', join(dir, 'sub')])
  t.equal(folder.code, 1)
  t.match(folder.err, /^agentgov policy: EISDIR/)
})

t.test('policy validate: a document that is neither a list nor {policies: [...]} exits 1', async (t) => {
  const dir = t.testdir({ 'rules.json': JSON.stringify({ rules: [] }), 'null.json': 'null', 'str.json': '"policies"', 'notlist.json': JSON.stringify({ policies: {} }), 'empty.yaml': '' })
  for (const f of ['rules.json', 'null.json', 'str.json', 'notlist.json', 'empty.yaml']) {
    const res = await run(['policy', 'validate', join(dir, f)])
    t.same(res, { code: 1, out: '', err: `agentgov policy: ${join(dir, f)}: expected a list of policies or an object with a "policies" list\n` }, f)
  }
})

t.test('policy compile: prints each policy with its id (given, or pol_<index>), name, type and JSON-logic', async (t) => {
  const list: Array<Record<string, unknown>> = [{ ...POLICIES[0], id: 'my-id' }, { ...POLICIES[1] }]
  const dir = t.testdir({ 'p.json': JSON.stringify(list) })
  const res = await run(['policy', 'compile', join(dir, 'p.json')])
  t.equal(res.code, 0)
  t.equal(res.err, '')
  t.ok(res.out.endsWith('\n'))
  t.same(JSON.parse(res.out), [
    { id: 'my-id', name: 'tools', type: 'tool_permission', logic: policyLogic({ id: 'my-id', type: 'tool_permission', config: list[0]?.config }) },
    { id: 'pol_1', name: 'models', type: 'model_restriction', logic: policyLogic({ id: 'pol_1', type: 'model_restriction', config: list[1]?.config }) }
  ], 'in file order, not evaluation order')
})

t.test('policy compile: an invalid file is refused with its errors, nothing compiled', async (t) => {
  const dir = t.testdir({ 'bad.json': JSON.stringify([{ name: 'c', type: 'custom', config: { deny_if: { frob: 1 } } }]) })
  const file = join(dir, 'bad.json')
  t.same(await run(['policy', 'compile', file]), { code: 1, out: '', err: `${file}: [0].config.deny_if.frob: unknown operation "frob"\n1 error\n` })
})

t.test('policy eval: a v1 body that the policies allow prints the decision and exits 0', async (t) => {
  const dir = t.testdir({ 'p.json': JSON.stringify(POLICIES), 'in.json': JSON.stringify({ agent_id: 'a', action: 'tool_call', context: { tool: 'search' } }) })
  const res = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'in.json')])
  t.equal(res.code, 0)
  t.equal(res.err, '')
  t.same(JSON.parse(res.out), {
    allowed: true,
    reason: null,
    policies_evaluated: [
      { id: 'pol_1', name: 'models', type: 'model_restriction', result: 'pass', message: null },
      { id: 'pol_0', name: 'tools', type: 'tool_permission', result: 'pass', message: null }
    ],
    warnings: [],
    restrictions: { max_tokens: 100 }
  })
})

t.test('policy eval: a v1 body that a policy blocks prints the reason and exits 3', async (t) => {
  const dir = t.testdir({ 'p.json': JSON.stringify(POLICIES), 'in.json': JSON.stringify({ action: 'tool_call', context: { tool: 'shell' } }) })
  const res = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'in.json')])
  t.equal(res.code, 3)
  const d = JSON.parse(res.out)
  t.equal(d.allowed, false)
  t.equal(d.reason, 'tools: tool "shell" is not in allowed_tools')
})

t.test('policy eval: a body with request_type is read as legacy (model and tokens_requested at the top level)', async (t) => {
  const dir = t.testdir({
    'p.json': JSON.stringify(POLICIES),
    'big.json': JSON.stringify({ request_type: 'llm.invoke', model: 'x', tokens_requested: 500 }),
    'small.json': JSON.stringify({ request_type: 'llm.invoke', model: 'x', tokens_requested: 50 })
  })
  const big = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'big.json')])
  t.equal(big.code, 3)
  t.equal(JSON.parse(big.out).reason, 'models: 500 tokens requested, more than max_tokens 100')
  const small = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'small.json')])
  t.equal(small.code, 0)
  t.same(JSON.parse(small.out).restrictions, { max_tokens: 100 })
})

t.test('policy eval: a body with messages (and no request_type) is read as legacy: its messages are the text', async (t) => {
  const dir = t.testdir({
    'p.yaml': YAML,
    'legacy.json': JSON.stringify({ messages: [{ role: 'user', content: 'mail bob@example.com' }] })
  })
  const res = await run(['policy', 'eval', join(dir, 'p.yaml'), join(dir, 'legacy.json')])
  t.equal(res.code, 0, 'the audited content filter only warns')
  t.same(JSON.parse(res.out).warnings, ['[audit] pii: text contains PII (email)'])
})

t.test('policy eval: the body\'s agent_id is the agent, cli-agent by default', async (t) => {
  const rule = (id: string) => ({ name: `not-${id}`, type: 'custom', config: { deny_if: { '==': [{ var: 'agent.id' }, id] }, message: `agent ${id}` } })
  const dir = t.testdir({
    'p.json': JSON.stringify([rule('bot-7'), rule('cli-agent')]),
    'named.json': JSON.stringify({ agent_id: 'bot-7', action: 'chat' }),
    'anon.json': JSON.stringify({ action: 'chat', agent_id: 42 })
  })
  t.equal(JSON.parse((await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'named.json')])).out).reason, 'not-bot-7: agent bot-7')
  t.equal(JSON.parse((await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'anon.json')])).out).reason, 'not-cli-agent: agent cli-agent', 'an agent_id that is not a string is ignored')
})

t.test('policy eval: disabled and inactive policies of the file are skipped', async (t) => {
  const dir = t.testdir({
    'p.json': JSON.stringify([
      { name: 'off', type: 'custom', enforcement: 'disabled', config: { deny_if: true } },
      { name: 'old', type: 'custom', is_active: false, config: { deny_if: true } }
    ]),
    'in.json': JSON.stringify({ action: 'chat' })
  })
  const res = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'in.json')])
  t.equal(res.code, 0)
  t.same(JSON.parse(res.out).policies_evaluated, [])
})

t.test('policy eval: only the policies whose scope takes in the agent apply (policy-types.md step 1)', async (t) => {
  const dir = t.testdir({
    'p.json': JSON.stringify([{ name: 'other-bot-only', type: 'custom', scope_type: 'ENDPOINT', scope_id: 'other-bot', config: { deny_if: true } }]),
    'in.json': JSON.stringify({ agent_id: 'bot-1', action: 'chat' })
  })
  const res = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'in.json')])
  t.equal(res.code, 0, 'a policy scoped to another agent does not block bot-1')
  t.same(JSON.parse(res.out).policies_evaluated, [], 'and is not listed')
})

t.test('policy eval: an invalid policy file is refused before the input is read', async (t) => {
  const dir = t.testdir({ 'bad.json': JSON.stringify([{ name: 'x', type: 'nope' }]) })
  const res = await run(['policy', 'eval', join(dir, 'bad.json'), join(dir, 'absent-input.json')])
  t.equal(res.code, 1)
  t.equal(res.out, '')
  t.match(res.err, /\[0\]\.type: must be one of/)
  t.notMatch(res.err, /absent-input/)
})

t.test('policy eval: an input file that is missing or not JSON exits 1 with nothing on stdout', async (t) => {
  const dir = t.testdir({ 'p.json': JSON.stringify(POLICIES), 'bad.json': '{ "action": ', 'null.json': 'null' })
  const missing = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'absent.json')])
  t.same(missing, { code: 1, out: '', err: `agentgov policy: ENOENT: no such file or directory, open '${join(dir, 'absent.json')}'\n` })
  for (const f of ['bad.json', 'null.json']) {
    const res = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, f)])
    t.equal(res.code, 1, f)
    t.equal(res.out, '', f)
    t.match(res.err, /^agentgov policy: /, f)
    t.ok(res.err.includes(join(dir, f)), `${f}: the message names the input file`)
  }
})

t.test('policy: usage — no subcommand prints the policy help on stdout and exits 1', async (t) => {
  t.same(await run(['policy']), { code: 1, out: POLICY_HELP, err: '' })
})

t.test('policy: usage — --help or -h anywhere prints the policy help and exits 0', async (t) => {
  for (const args of [['--help'], ['-h'], ['validate', 'x.json', '--help'], ['eval', '--help']]) {
    t.same(await run(['policy', ...args]), { code: 0, out: POLICY_HELP, err: '' }, args.join(' '))
  }
})

t.test('policy: usage — an unknown subcommand or a missing FILE or INPUT prints the help on stderr and exits 2', async (t) => {
  for (const args of [['lint', 'p.json'], ['validate'], ['compile'], ['eval'], ['eval', 'p.json']]) {
    t.same(await run(['policy', ...args]), { code: 2, out: '', err: POLICY_HELP }, args.join(' '))
  }
})

t.test('readPolicyFile and validatePolicyList, used directly', async (t) => {
  const dir = t.testdir({ 'p.json': JSON.stringify({ policies: POLICIES }) })
  t.same(readPolicyFile(join(dir, 'p.json')), POLICIES)
  t.same(validatePolicyList([null, { name: 'a', type: 'custom', config: {} }]), [
    { path: '[0]', message: 'a policy must be an object' },
    { path: '[1].config', message: 'needs exactly one of deny_if, allow_if' }
  ])
  t.same(validatePolicyList([]), [])
})

/** Escapes a string for a RegExp. */
function escape (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
