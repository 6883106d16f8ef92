/**
 * Seeded random parity test of the JSON-logic compiler against json-logic-js 2.x (the oracle).
 *
 * A small deterministic PRNG (mulberry32) builds, per operation family, hundreds of random rules over
 * a handful of random data documents (numbers including 0 and -0 but no NaN, strings including numeric
 * strings and "", booleans, null, arrays, nested objects). Every compiled rule must give the value
 * json-logic-js gives (deep, with -0 told apart from 0 and NaN equal to NaN), hand the same values to
 * `log` (json-logic-js's console.log is captured), or throw where json-logic-js throws.
 *
 * The generator leaves out only the documented deviations of shared/policy/jsonlogic.ts:
 * - unknown operations and `method` (compile errors there, even in branches that never run);
 * - inherited properties: no data key, path segment or data string names a property of
 *   Object/Array/String/Number/Boolean.prototype (`var` reads own properties only);
 * - the path segments `__proto__`, `constructor`, `prototype` (refused);
 * - data interpreted as logic: json-logic-js runs keys handed to `missing` / `missing_some` through
 *   `apply`, so a one-key object among them is evaluated as a rule; data objects here have 0 or at
 *   least 2 keys, and rules cannot build one-key objects;
 * - rule size and depth limits (generated rules are small and shallow).
 * `log` is not excluded: both sides' logged values are compared.
 */
import t, { type Test } from 'tap'
import { inspect } from 'node:util'
import jsonLogic from 'json-logic-js'
import { compileLogic, FORBIDDEN_SEGMENTS } from '../../../shared/policy/jsonlogic.js'

const SEED = 0x9e3779b9
const SEED_TEXT = `0x${SEED.toString(16)}`

function mulberry32 (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let r = Math.imul(a ^ (a >>> 15), 1 | a)
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
}

// ---------------------------------------------------------------------------------------------------
// Pools

const NUMBERS: readonly number[] = [0, -0, 1, -1, 2, 3, 7, 10, 2.5, -0.5, 0.1, 100, 1e21]
const STRINGS: readonly string[] = [
  '', '0', '1', '-1', '2', '2.5', '10', '1e3', ' ', '3px', 'a', 'b', 'ab', 'abc', 'a.b', 'x', 'hello world', 'null', 'obj', 'list'
]
/** Keys of data objects (and so the segments of generated paths). */
const KEYS: readonly string[] = ['a', 'b', 'c', 'x', 'y', 'n', 's', 'list', 'obj', 'deep', '0', '1', 'length']
const ITEM_KEYS: readonly string[] = ['a', 'b', 'x', '0', 'length']
const PATHS: readonly unknown[] = [
  'a', 'b', 'c', 'n', 's', 'x', 'list', 'obj', 'zz', 'list.0', 'list.1', 'list.9', 'list.length', 's.length', 's.0',
  'obj.x', 'obj.y', 'obj.deep', 'obj.deep.a', 'obj.zz.a', 'a.b', 'a.0', 'n.x', '0', '1', '', 'list.0.a', 0, 1, 1.5
]
const ITEM_PATHS: readonly unknown[] = ['', '', 'a', 'b', 'x', '0', 'length', 'a.b', 'zz', 0]
const REDUCE_PATHS: readonly unknown[] = ['current', 'accumulator', 'current.a', 'current.0', 'accumulator.length', '', 'zz']

/** Names a prototype answers for: the pools must avoid them (documented deviation: own properties only). */
function inherited (name: string): boolean {
  if (name === 'length') return false // own on strings and arrays, absent on the rest
  return [Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype].some((p) => name in p)
}

// ---------------------------------------------------------------------------------------------------
// Generators

class Gen {
  readonly rnd: () => number
  constructor (seed: number) { this.rnd = mulberry32(seed) }
  chance (p: number): boolean { return this.rnd() < p }
  int (lo: number, hi: number): number { return lo + Math.floor(this.rnd() * (hi - lo + 1)) }
  pick<T> (items: readonly T[]): T { return items[Math.floor(this.rnd() * items.length)] as T }
  times<T> (lo: number, hi: number, f: () => T): T[] { return Array.from({ length: this.int(lo, hi) }, f) }

  scalar (): unknown {
    const r = this.rnd()
    if (r < 0.4) return this.pick(NUMBERS)
    if (r < 0.8) return this.pick(STRINGS)
    if (r < 0.92) return this.chance(0.5)
    return null
  }

  /** A data value; objects have 0 or at least 2 keys (a one-key object would be logic to json-logic-js). */
  value (depth: number): unknown {
    const r = this.rnd()
    if (depth <= 0 || r < 0.6) return this.scalar()
    if (r < 0.8) return this.times(0, 4, () => this.value(depth - 1))
    return this.object(depth - 1, ITEM_KEYS)
  }

  object (depth: number, keys: readonly string[]): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    if (this.chance(0.15)) return out
    const n = this.int(2, 4)
    while (Object.keys(out).length < n) out[this.pick(keys)] = this.value(depth)
    return out
  }

  /** A data document: mostly an object with the usual keys; sometimes an array, a scalar or null. */
  data (): unknown {
    const r = this.rnd()
    if (r < 0.06) return this.scalar()
    if (r < 0.12) return this.times(0, 4, () => this.value(2))
    return {
      a: this.value(2),
      b: this.value(2),
      c: this.scalar(),
      n: this.pick(NUMBERS),
      s: this.pick(STRINGS),
      x: this.value(1),
      list: this.times(0, 5, () => this.value(2)),
      obj: { x: this.scalar(), y: this.pick(NUMBERS), deep: this.object(1, ITEM_KEYS) },
      0: this.scalar(),
      1: this.value(1)
    }
  }
}

type Scope = 'top' | 'item' | 'reduce'
type Rule = unknown

const ALL_OPS = [
  'var', 'missing', 'missing_some', 'if', '?:', '==', '===', '!=', '!==', '!', '!!', 'and', 'or', '<', '<=', '>', '>=',
  'max', 'min', '+', '-', '*', '/', '%', 'cat', 'substr', 'in', 'merge', 'map', 'filter', 'reduce', 'all', 'none', 'some', 'log'
] as const
type Op = typeof ALL_OPS[number]

class RuleGen extends Gen {
  path (scope: Scope): unknown {
    if (scope === 'item') return this.pick(ITEM_PATHS)
    if (scope === 'reduce') return this.pick(REDUCE_PATHS)
    return this.pick(PATHS)
  }

  literal (): Rule {
    if (this.chance(0.12)) return this.times(0, 3, () => this.scalar())
    return this.scalar()
  }

  leaf (scope: Scope): Rule {
    const r = this.rnd()
    if (r < 0.4) return this.literal()
    if (r < 0.85) return { var: this.path(scope) }
    return { var: [this.path(scope), this.scalar()] }
  }

  /** A random rule of at most `depth` operation levels, its top operation drawn from `ops`. */
  rule (depth: number, scope: Scope, ops: readonly Op[] = ALL_OPS): Rule {
    if (depth <= 0 || this.chance(0.25)) return this.leaf(scope)
    return this.op(this.pick(ops), depth - 1, scope)
  }

  args (n: number, depth: number, scope: Scope): Rule[] {
    return Array.from({ length: n }, () => this.rule(depth, scope))
  }

  /** Argument list in any of the accepted shapes: a single value (no array), or an array of lo..hi. */
  list (lo: number, hi: number, depth: number, scope: Scope): Rule {
    if (lo <= 1 && hi >= 1 && this.chance(0.12)) {
      const single = this.rule(depth, scope)
      if (!Array.isArray(single)) return single
    }
    return this.args(this.int(lo, hi), depth, scope)
  }

  keys (depth: number, scope: Scope): Rule {
    const key = (): unknown => {
      const r = this.rnd()
      if (r < 0.7) return this.path(scope)
      if (r < 0.85) return [this.path(scope), this.scalar()]
      return [this.path(scope)]
    }
    const r = this.rnd()
    if (r < 0.45) return this.times(0, 4, key)
    if (r < 0.7) return [this.times(0, 4, key), ...this.times(0, 1, key)]
    if (r < 0.8) return key()
    if (r < 0.9) return { merge: this.times(0, 3, () => this.chance(0.5) ? key() : [key()]) }
    return [this.rule(depth, scope), key()]
  }

  op (op: Op, d: number, scope: Scope): Rule {
    switch (op) {
      case 'var': {
        const r = this.rnd()
        if (r < 0.3) return { var: this.path(scope) }
        if (r < 0.5) return { var: [this.path(scope), this.rule(d, scope)] }
        if (r < 0.6) return { var: this.pick<unknown>(['', null, [], [null, this.scalar()], ['', this.scalar()]]) }
        if (r < 0.75) return { var: [{ cat: [this.pick(KEYS), this.pick(['.', '.', '']), this.pick([...KEYS, 0, 1])] }, ...this.times(0, 1, () => this.rule(d, scope))] }
        if (r < 0.85) return { var: [{ if: [this.rule(d, scope), this.path(scope), this.path(scope)] }] }
        if (r < 0.92) return { var: [this.path(scope), this.rule(d, scope), this.rule(d, scope)] }
        return { var: this.rule(d, scope) }
      }
      case 'missing':
        return { missing: this.keys(d, scope) }
      case 'missing_some': {
        const need = this.chance(0.8) ? this.int(0, 3) : this.rule(d, scope)
        const r = this.rnd()
        const options = r < 0.7 ? this.times(0, 4, () => this.path(scope))
          : r < 0.8 ? this.path(scope)
            : r < 0.9 ? [this.times(0, 3, () => this.path(scope))]
              : this.rule(d, scope)
        return { missing_some: [need, options] }
      }
      case 'if': case '?:':
        return { [op]: this.list(0, 7, d, scope) }
      case 'and': case 'or':
        return { [op]: this.list(0, 4, d, scope) }
      case '==': case '===': case '!=': case '!==':
        return { [op]: this.chance(0.85) ? this.args(2, d, scope) : this.list(0, 3, d, scope) }
      case '!': case '!!':
        return { [op]: this.chance(0.8) ? this.list(1, 1, d, scope) : this.list(0, 2, d, scope) }
      case '<': case '<=':
        return { [op]: this.chance(0.9) ? this.args(this.int(2, 3), d, scope) : this.list(0, 1, d, scope) }
      case '>': case '>=':
        return { [op]: this.chance(0.85) ? this.args(2, d, scope) : this.list(0, 3, d, scope) }
      case 'max': case 'min': case '+': case 'cat': case 'merge':
        return { [op]: this.list(0, 4, d, scope) }
      case '*':
        return { [op]: this.list(this.chance(0.97) ? 1 : 0, 4, d, scope) }
      case '-': case '/': case '%':
        return { [op]: this.chance(0.85) ? this.args(op === '-' ? this.int(1, 2) : 2, d, scope) : this.list(0, 3, d, scope) }
      case 'substr': {
        const src = this.chance(0.6) ? this.pick<unknown>(['jsonlogic', 'hello world', '', 'abc', { var: 's' }, { var: 'a' }, 12345]) : this.rule(d, scope)
        const num = (): unknown => this.chance(0.8) ? this.int(-6, 6) : this.rule(d, scope)
        return { substr: [src, ...this.times(0, 2, num)] }
      }
      case 'in': {
        const container = (): unknown => {
          const r = this.rnd()
          if (r < 0.25) return this.pick<unknown>(['hello world', 'abc', '', '123', 'a.b'])
          if (r < 0.5) return this.times(0, 4, () => this.scalar())
          if (r < 0.65) return { var: this.pick(['s', 'list', 'obj', 'a', 'b', 'n', 'zz']) }
          return this.rule(d, scope)
        }
        return { in: this.chance(0.9) ? [this.rule(d, scope), container()] : [this.rule(d, scope), container(), ...this.times(0, 1, () => this.scalar())] }
      }
      case 'map': case 'filter': case 'all': case 'none': case 'some': {
        const src = this.source(d, scope)
        const r = this.rnd()
        if (r < 0.04) return { [op]: [] }
        if (r < 0.08) return { [op]: [src] }
        const logic = this.rule(d, 'item')
        return { [op]: r < 0.95 ? [src, logic] : [src, logic, this.rule(d, scope)] }
      }
      case 'reduce': {
        const src = this.source(d, scope)
        const logic = this.chance(0.7)
          ? this.op(this.pick<Op>(['+', '*', 'cat', 'max', 'min', 'merge', 'if', 'and', 'or', '-']), Math.max(d - 1, 0), 'reduce')
          : this.rule(d, 'reduce')
        const r = this.rnd()
        if (r < 0.2) return { reduce: [src, logic] }
        if (r < 0.25) return { reduce: [src] }
        return { reduce: [src, logic, this.chance(0.6) ? this.scalar() : this.rule(d, scope)] }
      }
      case 'log':
        return { log: this.chance(0.7) ? this.rule(d, scope) : this.list(0, 3, d, scope) }
    }
  }

  source (d: number, scope: Scope): Rule {
    const r = this.rnd()
    if (r < 0.35) return { var: this.pick(['list', 'a', 'b', 'x', '1', 'obj.deep', 'zz', '']) }
    if (r < 0.6) return this.times(0, 5, () => this.value(1))
    if (r < 0.7) return this.pick<unknown>([null, 'abc', 5, {}])
    if (r < 0.8) return { merge: [{ var: 'list' }, this.times(0, 2, () => this.scalar())] }
    return this.rule(d, scope)
  }
}

// ---------------------------------------------------------------------------------------------------
// Comparison

/** Same value: deep, Object.is on primitives (so -0 differs from 0 and NaN equals NaN). */
function same (a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => same(v, b[i]))
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return ka.length === kb.length &&
      ka.every((k) => Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  }
  return false
}

type Outcome = { ok: true, value: unknown, logs: unknown[] } | { ok: false, error: string, logs: unknown[] }

const errorText = (e: unknown): string => e instanceof Error ? `${e.name}: ${e.message}` : String(e)
const show = (v: unknown): string => inspect(v, { depth: 10, breakLength: Infinity })

function oracle (rule: Rule, data: unknown): Outcome {
  const logs: unknown[] = []
  const original = console.log
  console.log = (v: unknown) => { logs.push(v) }
  try {
    return { ok: true, value: jsonLogic.apply(rule as jsonLogic.RulesLogic, structuredClone(data)), logs }
  } catch (e) {
    return { ok: false, error: errorText(e), logs }
  } finally {
    console.log = original
  }
}

function sameOutcome (a: Outcome, b: Outcome): boolean {
  if (a.ok !== b.ok) return false
  if (a.ok && b.ok && !same(a.value, b.value)) return false
  return same(a.logs, b.logs)
}

function describe (o: Outcome): string {
  return o.ok ? `${show(o.value)}${o.logs.length > 0 ? ` (logged ${show(o.logs)})` : ''}` : `threw ${o.error}`
}

interface FamilyResult {
  rules: number
  evaluations: number
  bothThrew: number
  mismatches: number
  firstMismatches: string[]
  distinctValues: number
  ops: Set<string>
}

function opsOf (rule: Rule, into: Set<string>): void {
  if (Array.isArray(rule)) rule.forEach((r) => opsOf(r, into))
  else if (rule !== null && typeof rule === 'object') {
    for (const [k, v] of Object.entries(rule)) {
      into.add(k)
      opsOf(v, into)
    }
  }
}

const DATA_PER_FAMILY = 6

/** Builds `count` rules from `make`, evaluates each on every data document, and compares with json-logic-js. */
function runFamily (seed: number, count: number, make: (g: RuleGen) => Rule): FamilyResult {
  const g = new RuleGen(seed)
  const docs = Array.from({ length: DATA_PER_FAMILY }, () => g.data())
  const result: FamilyResult = { rules: count, evaluations: 0, bothThrew: 0, mismatches: 0, firstMismatches: [], distinctValues: 0, ops: new Set() }
  const values = new Set<string>()
  for (let i = 0; i < count; i++) {
    const rule = make(g)
    opsOf(rule, result.ops)
    const logs: unknown[] = []
    let fn: ((d: unknown) => unknown) | undefined
    let compileError = ''
    try {
      const compiled = compileLogic(rule, { log: (v) => logs.push(v) })
      fn = (d) => compiled(d, {})
    } catch (e) {
      compileError = errorText(e)
    }
    for (const data of docs) {
      result.evaluations++
      const want = oracle(rule, data)
      let got: Outcome
      logs.length = 0
      if (fn === undefined) got = { ok: false, error: `compile error ${compileError}`, logs: [] }
      else {
        try {
          got = { ok: true, value: fn(structuredClone(data)), logs: [...logs] }
        } catch (e) {
          got = { ok: false, error: errorText(e), logs: [...logs] }
        }
      }
      if (!want.ok) result.bothThrew += got.ok ? 0 : 1
      else values.add(show(want.value))
      if (!sameOutcome(want, got) || (fn === undefined)) {
        result.mismatches++
        if (result.firstMismatches.length < 5) {
          result.firstMismatches.push(`rule ${show(rule)} on data ${show(data)}: json-logic-js ${describe(want)}, compiled ${fn === undefined ? `refused: ${compileError}` : describe(got)}`)
        }
      }
    }
  }
  result.distinctValues = values.size
  return result
}

/** The family's assertions: no mismatch, every listed operation generated, and results that are not all the same. */
function assertFamily (t: Test, name: string, r: FamilyResult, ops: readonly string[], minDistinct: number): void {
  t.strictSame(r.firstMismatches, [], `${name}: ${r.rules} rules x ${DATA_PER_FAMILY} documents, ${r.evaluations} evaluations: compiled = json-logic-js (${r.mismatches} mismatches)`)
  t.strictSame(ops.filter((op) => !r.ops.has(op)), [], `${name}: the generator produced every operation of the family`)
  t.ok(r.distinctValues >= minDistinct, `${name}: ${r.distinctValues} distinct results (at least ${minDistinct}), ${r.bothThrew} evaluations where both threw`)
  t.ok(r.bothThrew < r.evaluations / 4, `${name}: most evaluations return a value (${r.bothThrew} of ${r.evaluations} threw)`)
}

// ---------------------------------------------------------------------------------------------------
// The pools respect the exclusions

t.test('the generator pools avoid the documented deviations: no inherited names, no forbidden segments', async (t) => {
  const names = new Set<string>([...STRINGS, ...KEYS, ...ITEM_KEYS])
  for (const p of [...PATHS, ...ITEM_PATHS, ...REDUCE_PATHS]) for (const s of String(p).split('.')) names.add(s)
  t.strictSame([...names].filter(inherited), [], 'no name a prototype answers for')
  t.strictSame([...names].filter((n) => FORBIDDEN_SEGMENTS.has(n)), [], 'no forbidden segment')
  const g = new RuleGen(SEED)
  const oneKey: unknown[] = []
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit)
    else if (v !== null && typeof v === 'object') {
      if (Object.keys(v).length === 1) oneKey.push(v)
      Object.values(v).forEach(visit)
    }
  }
  for (let i = 0; i < 500; i++) visit(g.data())
  t.strictSame(oneKey, [], 'no data object has exactly one key')
})

t.test(`the PRNG is deterministic: seed ${SEED_TEXT} builds the same rules and data twice, another seed other ones`, async (t) => {
  const build = (seed: number): string => {
    const g = new RuleGen(seed)
    return show([g.data(), Array.from({ length: 20 }, () => g.rule(3, 'top'))])
  }
  t.equal(build(SEED), build(SEED), 'same seed, same output')
  t.not(build(SEED), build(SEED + 1), 'different seed, different output')
})

t.test('the comparison tells -0 from 0, takes NaN as NaN, and compares deeply', async (t) => {
  t.notOk(same(0, -0), '0 and -0 differ')
  t.ok(same(NaN, NaN), 'NaN equals NaN')
  t.ok(same([1, { a: [NaN] }], [1, { a: [NaN] }]), 'nested equal values')
  t.notOk(same([1, { a: [0] }], [1, { a: [-0] }]), 'a nested -0')
  t.notOk(same({ a: undefined }, { b: undefined }), 'different keys')
  t.notOk(same([], {}), 'an array is not an object')
  t.notOk(same(null, {}), 'null is not an object')
  t.notOk(same('1', 1), 'no coercion')
  t.notOk(sameOutcome({ ok: true, value: 1, logs: [1] }, { ok: true, value: 1, logs: [] }), 'logs are compared')
  t.notOk(sameOutcome({ ok: true, value: 1, logs: [] }, { ok: false, error: 'x', logs: [] }), 'a throw differs from a value')
  t.ok(sameOutcome({ ok: false, error: 'a', logs: [] }, { ok: false, error: 'b', logs: [] }), 'both throwing is the same outcome')
})

// ---------------------------------------------------------------------------------------------------
// Families

interface Family {
  name: string
  ops: readonly Op[]
  count: number
  depth: number
  minDistinct: number
}

const FAMILIES: readonly Family[] = [
  { name: 'var (dot paths, indices, defaults, empty and computed paths)', ops: ['var'], count: 700, depth: 3, minDistinct: 40 },
  { name: 'missing and missing_some', ops: ['missing', 'missing_some'], count: 600, depth: 2, minDistinct: 30 },
  { name: 'if, ?:, and, or, !, !! (truthiness, operands returned)', ops: ['if', '?:', 'and', 'or', '!', '!!'], count: 700, depth: 3, minDistinct: 40 },
  { name: '==, ===, !=, !== (coercions)', ops: ['==', '===', '!=', '!=='], count: 500, depth: 3, minDistinct: 2 },
  { name: '<, <=, >, >= (2 and 3 arguments)', ops: ['<', '<=', '>', '>='], count: 500, depth: 3, minDistinct: 2 },
  { name: '+, -, *, /, %, max, min (parseFloat and -0)', ops: ['+', '-', '*', '/', '%', 'max', 'min'], count: 700, depth: 3, minDistinct: 40 },
  { name: 'cat, substr, in, merge', ops: ['cat', 'substr', 'in', 'merge'], count: 600, depth: 3, minDistinct: 60 },
  { name: 'map, filter, reduce, all, none, some (scoped data)', ops: ['map', 'filter', 'reduce', 'all', 'none', 'some'], count: 700, depth: 3, minDistinct: 40 },
  { name: 'log (values and order)', ops: ['log'], count: 300, depth: 3, minDistinct: 30 },
  { name: 'every operation mixed, deeper rules', ops: ALL_OPS, count: 700, depth: 5, minDistinct: 80 }
]

t.test(`random rules: ${FAMILIES.reduce((n, f) => n + f.count, 0)} rules in all, seed ${SEED_TEXT}`, async (t) => {
  FAMILIES.forEach((family, index) => {
    const seed = (SEED + index) >>> 0
    t.test(`${family.name}: ${family.count} random rules (seed 0x${seed.toString(16)}) give json-logic-js's results`, async (t) => {
      const r = runFamily(seed, family.count, (g) => g.op(g.pick(family.ops), family.depth, 'top'))
      assertFamily(t, family.name, r, family.ops, family.minDistinct)
    })
  })
})
