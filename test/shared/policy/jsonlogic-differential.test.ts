/**
 * Differential test of the JSON-logic compiler against json-logic-js 2.x (the oracle): thousands of
 * seeded random rules over random data; every result must be the same value (or both must throw).
 * The generator stays inside json-logic-js's own operations and avoids only the documented
 * deviations of shared/policy/jsonlogic.ts (unknown operations, inherited properties such as
 * "toString", the forbidden path segments, data that looks like logic inside `missing`).
 */
import t from 'tap'
import jsonLogic from 'json-logic-js'
import { compileRule } from '../../../shared/policy/jsonlogic.js'

const SEED = 0x5eed2026

function mulberry32 (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let r = Math.imul(a ^ (a >>> 15), 1 | a)
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
}

const rnd = mulberry32(SEED)
const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)] as T
const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1))

const SCALARS: readonly unknown[] = [0, 1, 2, 3, -1, 7, 10, 2.5, -0.5, '', '0', '1', '2', '2.5', 'abc', 'a', 'b', 'Abc', true, false, null]
const KEYS = ['a', 'b', 'c', 'n', 's', 'list', 'words', 'obj', 'obj.x', 'obj.y', 'obj.deep.z', 'list.0', 'list.1', 'missing', 'obj.missing', '']

function randomScalar (): unknown {
  return pick(SCALARS)
}

function randomData (): Record<string, unknown> {
  return {
    a: randomScalar(),
    b: randomScalar(),
    c: randomScalar(),
    n: int(-5, 20),
    s: pick(['hello world', 'abc', '', '42', 'Paris']),
    list: Array.from({ length: int(0, 4) }, () => pick([0, 1, 2, 3, 5, 8, 'x', '2', null, true])),
    words: Array.from({ length: int(0, 3) }, () => pick(['a', 'b', 'abc', 'hello'])),
    obj: { x: randomScalar(), y: int(0, 9), deep: { z: pick(['z', 0, 1, null]) } }
  }
}

type Rule = unknown

/** A random rule of at most `depth` levels; `scoped` rules run inside map/filter/all/... */
function randomRule (depth: number, scoped = false): Rule {
  if (depth <= 0 || rnd() < 0.2) {
    const r = rnd()
    if (r < 0.45) return randomScalar()
    if (scoped) return pick([{ var: '' }, { var: '' }, { var: 'x' }, { var: 'current' }, { var: 'accumulator' }, randomScalar()])
    if (r < 0.9) return { var: pick(KEYS) }
    return { var: [pick(KEYS), randomScalar()] }
  }
  const d = depth - 1
  const sub = (): Rule => randomRule(d, scoped)
  const op = pick([
    '==', '===', '!=', '!==', '!', '!!', 'and', 'or', 'if', '?:', '<', '<=', '>', '>=', 'max', 'min', '+', '-', '*', '/',
    '%', 'cat', 'substr', 'in', 'merge', 'map', 'filter', 'reduce', 'all', 'none', 'some', 'missing', 'missing_some', 'var'
  ])
  switch (op) {
    case '!': case '!!':
      return rnd() < 0.5 ? { [op]: sub() } : { [op]: [sub()] }
    case 'and': case 'or': case 'cat': case 'max': case 'min': case '+': case '*': case 'merge':
      return { [op]: Array.from({ length: int(op === 'max' || op === 'min' ? 0 : 1, 4) }, sub) }
    case 'if': case '?:':
      return { [op]: Array.from({ length: op === '?:' ? 3 : int(1, 6) }, sub) }
    case '<': case '<=':
      return { [op]: Array.from({ length: int(2, 3) }, sub) }
    case '-':
      return { [op]: Array.from({ length: int(1, 2) }, sub) }
    case 'substr':
      return { substr: [sub(), pick([0, 1, 2, -1, -2, -5, 10]), ...(rnd() < 0.5 ? [pick([0, 1, 3, -1, -2, 20])] : [])] }
    case 'in':
      return { in: [sub(), pick([{ var: 's' }, { var: 'list' }, { var: 'words' }, 'hello world', ['a', 1, 'b'], sub()])] }
    case 'map': case 'filter': case 'all': case 'none': case 'some':
      return { [op]: [pick([{ var: 'list' }, { var: 'words' }, [1, 2, 3], [], { var: 'missing' }, sub()]), randomRule(d, true)] }
    case 'reduce':
      return { reduce: [pick([{ var: 'list' }, [1, 2, 3], [], { var: 'words' }]), randomRule(d, true), pick([0, 1, '', null, sub()])] }
    case 'missing':
      return rnd() < 0.5
        ? { missing: Array.from({ length: int(0, 3) }, () => pick(KEYS)) }
        : { missing: [Array.from({ length: int(0, 3) }, () => pick(KEYS))] }
    case 'missing_some':
      return { missing_some: [int(0, 3), Array.from({ length: int(0, 4) }, () => pick(KEYS))] }
    case 'var':
      return { var: pick([pick(KEYS), { cat: ['obj', '.', pick(['x', 'y', 'deep'])] }, 0, 1]) }
    default:
      return { [op]: [sub(), sub()] }
  }
}

/** Same value: deep, with NaN equal to NaN and 0 equal to -0. */
function same (a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b || (Number.isNaN(a) && Number.isNaN(b))
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]))
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return ka.length === kb.length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  }
  return a === b
}

type Outcome = { ok: true, value: unknown } | { ok: false }

function run (fn: () => unknown): Outcome {
  try {
    return { ok: true, value: fn() }
  } catch {
    return { ok: false }
  }
}

const RULES = 6000
const DATA = Array.from({ length: 8 }, randomData)

t.test(`compiled rules give json-logic-js's results on ${RULES} random rules x ${DATA.length} data (seed ${SEED.toString(16)})`, async (t) => {
  const mismatches: string[] = []
  let compared = 0
  let threw = 0
  for (let i = 0; i < RULES; i++) {
    const rule = randomRule(int(1, 5))
    const compiled = run(() => compileRule(rule))
    if (!compiled.ok) {
      mismatches.push(`compile failed: ${JSON.stringify(rule)}`)
      continue
    }
    const fn = compiled.value as (d: unknown) => unknown
    for (const data of DATA) {
      const want = run(() => jsonLogic.apply(rule as jsonLogic.RulesLogic, structuredClone(data)))
      const got = run(() => fn(structuredClone(data)))
      compared++
      if (!want.ok) threw++
      const equal = want.ok && got.ok ? same(want.value, got.value) : want.ok === got.ok
      if (!equal && mismatches.length < 10) {
        mismatches.push(`rule ${JSON.stringify(rule)} data ${JSON.stringify(data)}: json-logic-js ${want.ok ? JSON.stringify(want.value) : 'threw'}, compiled ${got.ok ? JSON.stringify(got.value) : 'threw'}`)
      }
    }
  }
  t.same(mismatches, [], 'no rule evaluates differently')
  t.ok(compared >= RULES * DATA.length, `${compared} evaluations compared (${threw} where both threw)`)
})

t.test('the generator covers every json-logic-js operation', async (t) => {
  const seen = new Set<string>()
  const visit = (r: unknown): void => {
    if (Array.isArray(r)) r.forEach(visit)
    else if (r !== null && typeof r === 'object') {
      for (const [k, v] of Object.entries(r)) {
        seen.add(k)
        visit(v)
      }
    }
  }
  const gen = mulberry32(1)
  void gen
  for (let i = 0; i < 3000; i++) visit(randomRule(4))
  for (const op of ['==', '===', '!=', '!==', '!', '!!', 'and', 'or', 'if', '?:', '<', '<=', '>', '>=', 'max', 'min', '+', '-', '*', '/', '%', 'cat', 'substr', 'in', 'merge', 'map', 'filter', 'reduce', 'all', 'none', 'some', 'missing', 'missing_some', 'var']) {
    t.ok(seen.has(op), `generates ${op}`)
  }
})
