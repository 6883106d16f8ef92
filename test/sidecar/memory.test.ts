/**
 * The sidecar's V8 memory settings (sidecar/memory.ts), observed in a fresh node process: with them,
 * the young generation keeps its size under a steady allocation load; without them it grows.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { SIDECAR_V8_FLAGS, sidecarV8Flags } from '../../sidecar/memory.js'

/**
 * In a plain node process (no TypeScript loader, which would grow the heap first), sets `flags` as
 * limitSidecarMemory does, allocates short-lived objects (about 600 MB in all) and prints the young
 * generation's size in MB.
 */
function youngGenerationAfterLoad (flags: readonly string[]): number {
  const script = `
    import v8 from 'node:v8'
    for (const flag of ${JSON.stringify(flags)}) v8.setFlagsFromString(flag)
    let keep = []
    for (let i = 0; i < 3e6; i++) { keep.push({ a: i, b: 'x' + i }); if (keep.length > 20000) keep = [] }
    const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')
    process.stdout.write(String(young.space_size / 1048576))
  `
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(r.stderr)
  return Number(r.stdout)
}

t.test('SIDECAR_V8_FLAGS: the young generation stays small under load (it grows to 16 MB semi-spaces without)', async (t) => {
  const limited = youngGenerationAfterLoad(SIDECAR_V8_FLAGS)
  const unlimited = youngGenerationAfterLoad([])
  t.ok(limited <= 8, `with the settings: ${limited.toFixed(1)} MB`)
  t.ok(unlimited >= 16, `without: ${unlimited.toFixed(1)} MB`)
})

t.test('SIDECAR_V8_FLAGS: every flag is one this node accepts (an unknown flag would be ignored silently)', async (t) => {
  for (const flag of SIDECAR_V8_FLAGS) {
    const r = spawnSync(process.execPath, [flag, '-e', '0'], { encoding: 'utf8' })
    t.equal(r.status, 0, `${flag}: ${r.stderr.trim()}`)
    t.notMatch(r.stderr, /bad option|unknown/i, `${flag} is known`)
  }
})

t.test('sidecarV8Flags: a flag the operator set (node\'s command line or NODE_OPTIONS) is left as they set it', async (t) => {
  t.same(sidecarV8Flags([], undefined), [...SIDECAR_V8_FLAGS], 'none given: both')
  t.same(sidecarV8Flags([], '--semi-space-growth-factor=2 --max-old-space-size=200'), ['--liftoff-only'], 'NODE_OPTIONS sets the growth factor')
  t.same(sidecarV8Flags(['--semi_space_growth_factor=4'], ''), ['--liftoff-only'], 'underscores name the same flag')
  t.same(sidecarV8Flags(['--no-liftoff-only', '--enable-source-maps'], undefined), ['--semi-space-growth-factor=1'], 'a --no- form counts as set')
  t.same(sidecarV8Flags(['--liftoff-only'], '--semi-space-growth-factor=1'), [], 'both given: none')
})
