import t, { type Test } from 'tap'
import jsonLogic from 'json-logic-js'
import {
  compileLogic, compileRule, JsonLogicCompileError, lookup, truthy, MAX_RULE_BYTES, MAX_RULE_DEPTH,
  type OperationSpec
} from '../../../shared/policy/jsonlogic.js'

/** Asserts the compiled rule gives json-logic-js's result on `data`. */
function parity (t: Test, rule: unknown, data: unknown, label?: string): void {
  const want = jsonLogic.apply(rule as jsonLogic.RulesLogic, structuredClone(data))
  t.same(compileRule(rule)(structuredClone(data)), want, label ?? `${JSON.stringify(rule)} on ${JSON.stringify(data)}`)
}

function compileError (t: Test, fn: () => unknown, path: string, reason: RegExp, label: string): void {
  try {
    fn()
    t.fail(`${label}: expected a compile error`)
  } catch (err) {
    t.type(err, JsonLogicCompileError, label)
    t.equal((err as JsonLogicCompileError).path, path, `${label}: path`)
    t.match((err as JsonLogicCompileError).reason, reason, `${label}: reason`)
  }
}

t.test('truthiness: an empty array is falsy, "0" and empty objects are truthy, like json-logic-js', async (t) => {
  for (const v of [[], [0], '', '0', 0, 1, null, {}, true, false]) {
    t.equal(truthy(v), jsonLogic.truthy(v), `truthy(${JSON.stringify(v)})`)
  }
})

t.test('var: dot paths, numeric indices, defaults, the empty path, and primitives answer for indices and length', async (t) => {
  const data = { a: { b: { c: 3 } }, list: [10, 20, { x: 'y' }], s: 'hey', n: null, zero: 0, 0: 'zero key' }
  for (const rule of [
    { var: 'a.b.c' }, { var: 'a.b' }, { var: 'list.1' }, { var: 'list.2.x' }, { var: ['nope', 'dflt'] },
    { var: ['a.nope', 5] }, { var: '' }, { var: null }, { var: [] }, { var: 's.length' }, { var: 's.1' },
    { var: 'list.length' }, { var: 'n.x' }, { var: ['n', 'd'] }, { var: 'zero' }, { var: 0 }, { var: 'a.b.c.d' },
    { var: ['list.9', { cat: ['x', 'y'] }] }, { var: [{ cat: ['a', '.', 'b'] }] }, { var: [{ cat: ['a', '.', 'zz'] }, 'dd'] }
  ]) parity(t, rule, data)
  parity(t, { var: 'x' }, null, 'var on null data')
  parity(t, { var: 'x' }, 'str', 'var on a string')
  parity(t, { var: '' }, [1, 2], 'the empty path gives the data itself')
})

t.test('var: the default is evaluated even when the empty path ignores it; extra arguments are evaluated', async (t) => {
  const seen: unknown[] = []
  const fn = compileLogic({ var: ['', { log: 'dflt' }, { log: 'extra' }] }, { log: (v) => seen.push(v) })
  t.same(fn({ a: 1 }, {}), { a: 1 })
  t.same(seen, ['dflt', 'extra'])
})

t.test('var: only own properties are read (a documented difference: json-logic-js follows the prototype)', async (t) => {
  t.equal(compileRule({ var: 'toString' })({}), null)
  t.equal(compileRule({ var: 'hasOwnProperty' })({ a: 1 }), null)
  t.equal(compileRule({ var: ['a.toString', 'd'] })({ a: {} }), 'd')
})

t.test('var: __proto__, constructor and prototype are refused at compile time when written, at evaluation when computed', async (t) => {
  compileError(t, () => compileRule({ var: '__proto__.polluted' }), 'rule.var', /"__proto__" is not allowed/, 'static __proto__')
  compileError(t, () => compileRule({ and: [true, { var: 'a.constructor' }] }), 'rule.and[1].var', /"constructor"/, 'nested static constructor')
  compileError(t, () => compileRule({ missing: ['a.prototype'] }), 'rule.missing', /"prototype"/, 'missing with a static forbidden key')
  compileError(t, () => compileRule({ missing: [['x', '__proto__']] }), 'rule.missing', /"__proto__"/, 'missing with a list holding a forbidden key')
  const dyn = compileRule({ var: { cat: ['__pro', 'to__'] } })
  t.throws(() => dyn({}), /path segment "__proto__" is not allowed/, 'a computed forbidden path throws when evaluated')
  t.throws(() => lookup({}, 'a.constructor', null), /"constructor"/)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
})

t.test('missing and missing_some: parity, including defaults in [key, default] pairs and nested lists', async (t) => {
  const data = { a: 1, b: '', c: null, d: { e: 0 } }
  for (const rule of [
    { missing: ['a', 'b', 'c', 'x'] }, { missing: [['a', 'x', 'd.e']] }, { missing: [] }, { missing: 'x' },
    { missing_some: [1, ['a', 'x']] }, { missing_some: [2, ['a', 'x', 'y']] }, { missing_some: [0, []] },
    { missing: { merge: ['a', 'zz'] } }, { missing: [null, 'a'] }, { missing: [[['x', 1], ['c'], ['d.e', 0]]] }
  ]) parity(t, rule, data)
  t.throws(() => compileRule({ missing_some: [1, null] })({}), 'missing_some with null options throws, as json-logic-js does')
  t.throws(() => jsonLogic.apply({ missing_some: [1, null] } as jsonLogic.RulesLogic, {}))
})

t.test('if and ?: with any arity, and/or returning operands', async (t) => {
  for (const rule of [
    { if: [] }, { if: [true] }, { if: [false, 1] }, { if: [true, 1] }, { if: [0, 1, 2] }, { if: [0, 1, '', 2, 3] },
    { if: [0, 1, '', 2] }, { if: [[], 'a', [1], 'b', 'c'] }, { '?:': [1, 'y', 'n'] },
    { and: [] }, { or: [] }, { and: [1, 'a', 0, 2] }, { or: [0, '', 'x', 1] }, { and: [1, 2] }, { or: [0, []] }
  ]) parity(t, rule, { })
})

t.test('comparison and arithmetic: loose equality, 3-argument <, numeric coercion, NaN', async (t) => {
  for (const rule of [
    { '==': [1, '1'] }, { '===': [1, '1'] }, { '!=': [0, ''] }, { '!==': [null, null] }, { '==': [null, 0] },
    { '<': [1, 2, 3] }, { '<': [1, 3, 2] }, { '<=': [1, 1, 1] }, { '<=': [2, 1] }, { '>': ['10', 9] }, { '>=': [1, 1] },
    { '+': ['1', '2.5', 3] }, { '+': [] }, { '+': ['abc'] }, { '-': [5] }, { '-': ['7', 2] }, { '*': ['2', 3, 4] },
    { '/': [1, 0] }, { '%': [7, 3] }, { max: [1, 3, '2'] }, { min: [] }, { max: [] }, { '!': [[]] }, { '!!': [[0]] },
    { '!': 0 }, { '+': [-0] }
  ]) parity(t, rule, {})
  t.throws(() => compileRule({ '*': [] })({}), 'an empty * throws, as json-logic-js does')
})

t.test('strings and arrays: cat, substr with negative arguments, in, merge', async (t) => {
  for (const rule of [
    { cat: [] }, { cat: ['a', 1, null, true] }, { substr: ['jsonlogic', 4] }, { substr: ['jsonlogic', -5] },
    { substr: ['jsonlogic', 1, 3] }, { substr: ['jsonlogic', 4, -2] }, { substr: ['abc', -1, -1] },
    { in: ['Spring', 'Springfield'] }, { in: [1, [1, 2]] }, { in: ['x', null] }, { in: ['x', 5] }, { in: ['a', {}] },
    { merge: [] }, { merge: [1, [2, 3], [[4]]] }
  ]) parity(t, rule, {})
  t.throws(() => compileRule({ in: ['a', { var: 'o' }] })({ o: { indexOf: 1 } }), /indexOf is not a function/, 'in on an object whose indexOf is data throws, as json-logic-js does')
})

t.test('map, filter, reduce, all, none, some work on scoped data; non-arrays give the json-logic-js results', async (t) => {
  const data = { list: [1, 2, 3, 4], people: [{ age: 30 }, { age: 12 }], none: null }
  for (const rule of [
    { map: [{ var: 'list' }, { '*': [{ var: '' }, 2] }] },
    { filter: [{ var: 'list' }, { '%': [{ var: '' }, 2] }] },
    { reduce: [{ var: 'list' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }, 10] },
    { reduce: [{ var: 'list' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }] },
    { reduce: [{ var: 'none' }, 1, 'init'] },
    { all: [{ var: 'people' }, { '>': [{ var: 'age' }, 10] }] },
    { all: [[], true] }, { none: [[], true] }, { some: [[], true] },
    { none: [{ var: 'people' }, { '>': [{ var: 'age' }, 40] }] },
    { some: [{ var: 'people' }, { '<': [{ var: 'age' }, 18] }] },
    { map: [{ var: 'none' }, 1] }, { filter: [5, 1] }, { all: ['x', 1] }, { some: [null, 1] }, { none: [{}, 1] },
    { map: [] }, { filter: [] }, { some: [[0, ''], { var: '' }] }
  ]) parity(t, rule, data)
})

t.test('literals, arrays and multi-key objects are values; constants are frozen copies', async (t) => {
  t.equal(compileRule(5)({}), 5)
  t.equal(compileRule('x')({}), 'x')
  t.equal(compileRule(null)({}), null)
  const obj = { a: 1, b: [1, 2] }
  const value = compileRule(obj)({}) as { a: number, b: number[] }
  t.same(value, obj, 'a multi-key object is returned as written')
  t.not(value, obj, 'as a copy')
  t.throws(() => { value.b.push(3) }, 'which is frozen')
  t.same(compileRule([1, { var: 'a' }, 'x'])({ a: 2 }), [1, 2, 'x'], 'an array with logic is evaluated item by item')
  const consts = compileRule([1, 2])({}) as number[]
  t.ok(Object.isFrozen(consts), 'an all-constant array is frozen')
  t.same(compileRule({})({}), {})
})

t.test('log passes its value to options.log and returns it; without options.log it is discarded', async (t) => {
  const seen: unknown[] = []
  t.equal(compileLogic({ log: { '+': [1, 2] } }, { log: (v) => seen.push(v) })({}, {}), 3)
  t.same(seen, [3])
  t.equal(compileRule({ log: 'quiet' })({}), 'quiet')
})

t.test('unknown operations and "method" are compile errors with the JSON path of the node', async (t) => {
  compileError(t, () => compileRule({ nope: [1] }), 'rule.nope', /unknown operation "nope"/, 'top level')
  compileError(t, () => compileRule({ if: [true, 1, { and: [{ frob: 1 }] }] }), 'rule.if[2].and[0].frob', /unknown operation/, 'in a branch that never runs')
  compileError(t, () => compileRule({ method: ['abc', 'toUpperCase'] }), 'rule.method', /"method" is not allowed/, 'method')
  compileError(t, () => compileRule({ 'we ird': 1 }), 'rule["we ird"]', /unknown operation/, 'an operation name that is not an identifier')
  compileError(t, () => compileLogic({ or: [{ x: 1 }] }, {}, 'config.deny_if'), 'config.deny_if.or[0].x', /unknown/, 'under a base path')
})

t.test('hostile rules: too deep, too large, or not JSON are refused before compiling', async (t) => {
  let deep: unknown = 1
  for (let i = 0; i < MAX_RULE_DEPTH + 1; i++) deep = [deep]
  compileError(t, () => compileRule(deep), 'rule', new RegExp(`deeper than ${MAX_RULE_DEPTH}`), 'arrays nested too deep')
  let deepObj: unknown = 1
  for (let i = 0; i < 200_000; i++) deepObj = { '!': deepObj }
  compileError(t, () => compileRule(deepObj), 'rule', /deeper than/, '200,000 nested operations (no stack overflow)')
  let ok: unknown = 1
  for (let i = 0; i < MAX_RULE_DEPTH - 1; i++) ok = [ok]
  t.doesNotThrow(() => compileRule(ok), `${MAX_RULE_DEPTH} levels are accepted`)
  compileError(t, () => compileRule({ cat: ['x'.repeat(MAX_RULE_BYTES)] }), 'rule', /larger than/, 'a long string')
  compileError(t, () => compileRule({ merge: Array.from({ length: 40_000 }, () => 1) }), 'rule', /larger than/, 'many items')
  compileError(t, () => compileRule({ '==': [() => 1, 1] }), 'rule', /function, which is not JSON/, 'a function')
  compileError(t, () => compileRule({ '==': [1n, 1] }), 'rule', /bigint/, 'a bigint')
  t.equal(compileRule([undefined])({})?.toString(), '', 'undefined inside an array is tolerated like null')
})

t.test('custom operations: compiled once with their arguments; errors carry the node path', async (t) => {
  let compiled = 0
  const twice: OperationSpec = {
    compile (args) {
      compiled++
      const f = args[0]?.fn
      if (f === undefined) throw new Error('twice needs an argument')
      return (d, c) => (f(d, c) as number) * 2
    }
  }
  const strict: OperationSpec = {
    compile (_args, path) { throw new JsonLogicCompileError('custom reason', `${path}.inner`) }
  }
  const operations = new Map([['twice', twice], ['strict', strict]])
  const fn = compileLogic({ '+': [{ twice: { var: 'n' } }, 1] }, { operations })
  t.equal(fn({ n: 4 }, {}), 9)
  t.equal(fn({ n: 5 }, {}), 11)
  t.equal(compiled, 1, 'compiled once, evaluated many times')
  compileError(t, () => compileLogic({ and: [{ twice: [] }] }, { operations }), 'rule.and[0].twice', /twice needs an argument/, 'a plain Error gets the path')
  compileError(t, () => compileLogic({ strict: 1 }, { operations }), 'rule.strict.inner', /custom reason/, 'a JsonLogicCompileError is kept as is')
  compileError(t, () => compileRule({ twice: 1 }), 'rule.twice', /unknown operation/, 'custom operations exist only where given')
})

t.test('JsonLogicCompileError: message is "path: reason"', async (t) => {
  const e = new JsonLogicCompileError('bad', 'rule.x')
  t.equal(e.message, 'rule.x: bad')
  t.equal(e.name, 'JsonLogicCompileError')
})

t.test('code generation corners: log with several arguments, extra arguments of scoped operations, custom arguments that need temporaries', async (t) => {
  const seen: unknown[] = []
  const fn = compileLogic({ log: [{ '+': [1, 1] }, { log: 'second' }] }, { log: (v) => seen.push(v) })
  t.equal(fn({}, {}), 2, 'log returns its first argument')
  t.same(seen, ['second', 2], 'every argument is evaluated first, then the first is logged')
  t.equal(compileLogic({ log: [] }, { log: (v) => seen.push(v) })({}, {}), undefined)
  parity(t, { map: [[1, 2], { '+': [{ var: '' }, 1] }, 'ignored', 'also ignored'] }, {}, 'extra arguments of map are ignored')
  compileError(t, () => compileRule({ map: [[1], { var: '' }, 0, { frob: 1 }] }), 'rule.map[3].frob', /unknown operation/, 'but still checked')
  const operations = new Map([['same', { compile: (args: Array<{ fn: (d: unknown, c: Record<string, unknown>) => unknown }>) => (d: unknown, c: Record<string, unknown>) => args[0]?.fn(d, c) }]])
  t.equal(compileLogic({ same: { and: [{ var: 'a' }, { var: 'b' }] } }, { operations })({ a: 1, b: 'x' }, {}), 'x', 'a custom argument with and/or temporaries')
})
