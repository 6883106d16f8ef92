/**
 * The `agentgov` command line (shared/cli/main.ts): help, version, unknown commands, and dispatch to
 * the subcommands, with in-memory output streams.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { main, HELP, POLICY_HELP } from '../../../shared/cli/main.js'

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

const PKG_VERSION = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version

t.test('agentgov with no command prints the help on stdout and exits 1', async (t) => {
  t.same(await run([]), { code: 1, out: HELP, err: '' })
})

t.test('agentgov help, --help and -h print the help on stdout and exit 0', async (t) => {
  for (const flag of ['help', '--help', '-h']) t.same(await run([flag]), { code: 0, out: HELP, err: '' }, flag)
})

t.test('the help lists every command and option', async (t) => {
  for (const word of ['control-plane', 'admin', 'policy validate FILE', 'policy compile FILE', 'policy eval FILE INPUT', '--help', '--version']) {
    t.ok(HELP.includes(word), word)
  }
})

t.test('agentgov --version and -v print the package version and exit 0', async (t) => {
  t.same(await run(['--version']), { code: 0, out: `${PKG_VERSION}\n`, err: '' })
  t.same(await run(['-v']), { code: 0, out: `${PKG_VERSION}\n`, err: '' })
})

t.test('an unknown command exits 2 with its name and the help on stderr, nothing on stdout', async (t) => {
  const res = await run(['frobnicate', '--now'])
  t.equal(res.code, 2)
  t.equal(res.out, '')
  t.equal(res.err, `agentgov: unknown command "frobnicate"\n\n${HELP}`)
})

t.test('commands are case-sensitive: POLICY is unknown', async (t) => {
  t.equal((await run(['POLICY', 'validate', 'x.json'])).code, 2)
})

t.test('agentgov policy dispatches to the policy command', async (t) => {
  t.same(await run(['policy', '--help']), { code: 0, out: POLICY_HELP, err: '' })
  const dir = t.testdir({ 'p.json': JSON.stringify([{ name: 'a', type: 'custom', config: { deny_if: false } }]) })
  const res = await run(['policy', 'validate', join(dir, 'p.json')])
  t.equal(res.code, 0)
  t.equal(res.out, `${join(dir, 'p.json')}: 1 valid policy\n`)
})

t.test('an error thrown by a command exits 1 with "agentgov <command>: <message>" on stderr', async (t) => {
  const dir = t.testdir({})
  const missing = join(dir, 'absent.json')
  const res = await run(['policy', 'validate', missing])
  t.equal(res.code, 1)
  t.equal(res.out, '')
  t.equal(res.err, `agentgov policy: ENOENT: no such file or directory, open '${missing}'\n`)
})

t.test('agentgov admin --help and control-plane --help reach their commands and exit 0', async (t) => {
  const admin = await run(['admin', '--help'])
  t.equal(admin.code, 0)
  t.match(admin.out, /^Usage: agentgov admin /)
  const cp = await run(['control-plane', '--help'])
  t.equal(cp.code, 0)
  t.match(cp.out, /^Usage: agentgov control-plane /)
})

t.test('--version prints "unknown" when no agentgov package.json is found above the CLI', async (t) => {
  const collect = (): { stream: Writable, text: () => string } => {
    let s = ''
    return { stream: new Writable({ write (c: Buffer | string, _e, cb) { s += c.toString(); cb() } }), text: () => s }
  }
  const absent = await t.mockImport<typeof import('../../../shared/cli/main.js')>('../../../shared/cli/main.js', {
    'node:fs': { readFileSync: () => { throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' }) } }
  })
  const a = collect()
  t.equal(await absent.main(['--version'], a.stream, collect().stream), 0)
  t.equal(a.text(), 'unknown\n', 'no package.json at all')
  const foreign = await t.mockImport<typeof import('../../../shared/cli/main.js')>('../../../shared/cli/main.js', {
    'node:fs': { readFileSync: () => JSON.stringify({ name: 'some-other-package', version: '9.9.9' }) }
  })
  const f = collect()
  t.equal(await foreign.main(['-v'], f.stream, collect().stream), 0)
  t.equal(f.text(), 'unknown\n', 'a package.json of another package is not ours')
})
