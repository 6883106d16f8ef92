import t from 'tap'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { main, HELP, POLICY_HELP } from '../../../shared/cli/main.js'

async function run (args: string[]): Promise<{ code: number, out: string, err: string }> {
  const out = new PassThrough()
  const err = new PassThrough()
  let o = ''
  let e = ''
  out.on('data', (c: Buffer) => { o += c.toString() })
  err.on('data', (c: Buffer) => { e += c.toString() })
  const code = await main(args, out, err)
  return { code, out: o, err: e }
}

const POLICIES = [
  { name: 'tools', type: 'tool_permission', config: { allowed_tools: ['search'] } },
  { name: 'models', type: 'model_restriction', config: { max_tokens: 100 } }
]

t.test('agentgov: help, version and unknown commands', async (t) => {
  t.same(await run([]), { code: 1, out: HELP, err: '' }, 'no command: the help, exit 1')
  t.equal((await run(['--help'])).code, 0)
  t.equal((await run(['help'])).out, HELP)
  const v = await run(['--version'])
  t.equal(v.code, 0)
  t.match(v.out, /^\d+\.\d+\.\d+\n$/)
  const bad = await run(['frobnicate'])
  t.equal(bad.code, 2)
  t.match(bad.err, /unknown command "frobnicate"/)
})

t.test('agentgov policy validate: valid files exit 0; every error is printed with its path and exit 1', async (t) => {
  const dir = t.testdir({
    'good.json': JSON.stringify(POLICIES),
    'good.yaml': 'policies:\n  - name: tools\n    type: tool_permission\n    config:\n      denied_tools: [shell]\n',
    'bad.json': JSON.stringify([{ name: 'x', type: 'tool_permission', config: { allowed_tools: [1] } }, { name: '', type: 'nope' }]),
    'broken.json': '{ nope',
    'shape.json': JSON.stringify({ rules: [] })
  })
  const ok = await run(['policy', 'validate', join(dir, 'good.json')])
  t.equal(ok.code, 0)
  t.match(ok.out, /2 valid policies/)
  t.match((await run(['policy', 'validate', join(dir, 'good.yaml')])).out, /1 valid policy\n/)
  const bad = await run(['policy', 'validate', join(dir, 'bad.json')])
  t.equal(bad.code, 1)
  t.match(bad.err, /\[0\]\.config\.allowed_tools\[0\]: must be a string/)
  t.match(bad.err, /\[1\]\.name: must not be empty/)
  t.match(bad.err, /\[1\]\.type: must be one of/)
  t.match(bad.err, /3 errors\n$/)
  const broken = await run(['policy', 'validate', join(dir, 'broken.json')])
  t.equal(broken.code, 1)
  t.match(broken.err, /cannot parse/)
  const shape = await run(['policy', 'validate', join(dir, 'shape.json')])
  t.equal(shape.code, 1)
  t.match(shape.err, /expected a list of policies or an object with a "policies" list/)
  const missing = await run(['policy', 'validate', join(dir, 'absent.json')])
  t.equal(missing.code, 1)
  t.match(missing.err, /ENOENT/)
})

t.test('agentgov policy compile prints each policy as JSON-logic', async (t) => {
  const dir = t.testdir({ 'p.json': JSON.stringify(POLICIES) })
  const res = await run(['policy', 'compile', join(dir, 'p.json')])
  t.equal(res.code, 0)
  const shown = JSON.parse(res.out) as Array<{ name: string, logic: unknown }>
  t.same(shown.map((p) => p.name), ['tools', 'models'])
  t.match(JSON.stringify(shown[0]?.logic), /"glob"/)
})

t.test('agentgov policy eval decides v1 and legacy inputs; exit 3 when blocked', async (t) => {
  const dir = t.testdir({
    'p.json': JSON.stringify(POLICIES),
    'v1-ok.json': JSON.stringify({ agent_id: 'a', action: 'tool_call', context: { tool: 'search' } }),
    'v1-blocked.json': JSON.stringify({ action: 'tool_call', context: { tool: 'shell' } }),
    'legacy.json': JSON.stringify({ request_type: 'llm.invoke', model: 'x', tokens_requested: 500 })
  })
  const ok = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'v1-ok.json')])
  t.equal(ok.code, 0)
  t.equal(JSON.parse(ok.out).allowed, true)
  const blocked = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'v1-blocked.json')])
  t.equal(blocked.code, 3)
  t.match(JSON.parse(blocked.out).reason, /tools: tool "shell" is not in allowed_tools/)
  const legacy = await run(['policy', 'eval', join(dir, 'p.json'), join(dir, 'legacy.json')])
  t.equal(legacy.code, 3, 'a legacy body (request_type) is read as legacy')
  t.match(JSON.parse(legacy.out).reason, /500 tokens requested/)
})

t.test('agentgov policy: usage errors', async (t) => {
  t.same(await run(['policy']), { code: 1, out: POLICY_HELP, err: '' })
  t.equal((await run(['policy', '--help'])).code, 0)
  t.equal((await run(['policy', 'validate', 'x.json', '--help'])).out, POLICY_HELP)
  const noFile = await run(['policy', 'validate'])
  t.equal(noFile.code, 2)
  t.equal(noFile.err, POLICY_HELP)
  t.equal((await run(['policy', 'eval', 'p.json'])).code, 2, 'eval needs an input file')
  t.equal((await run(['policy', 'lint', 'p.json'])).code, 2, 'unknown subcommand')
})
