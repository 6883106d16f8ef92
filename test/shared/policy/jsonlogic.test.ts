/**
 * Hand-written tests of the JSON-logic compiler (shared/policy/jsonlogic.ts).
 *
 * Every json-logic-js 2.x operation is checked against `jsonLogic.apply` (the oracle): each case states
 * the expected value, and asserts that json-logic-js and the compiled rule both give it (same value,
 * -0 told apart from 0, same values handed to `log`), or that both throw the same error. Then the
 * documented deviations of jsonlogic.ts (each shown next to what json-logic-js does instead), hostile
 * rules and data, custom operations, batches and every error path.
 */
import t, { type Test } from 'tap'
import { inspect } from 'node:util'
import jsonLogic from 'json-logic-js'
import {
  FORBIDDEN_SEGMENTS, JsonLogicCompileError, MAX_RULE_BYTES, MAX_RULE_DEPTH, PLAIN, REFUSED, SCOPED, childPath,
  compileLogic, compileLogicBatch, compileRule, deepFreeze, inOp, lookup, splitPath, truthy,
  type CompiledArg, type EvalContext, type Evaluator, type OperationSpec
} from '../../../shared/policy/jsonlogic.js'

// ---------------------------------------------------------------------------------------------------
// Helpers

const show = (v: unknown): string => inspect(v, { depth: 8, breakLength: Infinity })

/** -0 replaced by a marker, so that strictSame (which takes 0 and -0 as equal) tells them apart. */
const NEG_ZERO = Symbol('-0')
function canon (v: unknown): unknown {
  if (Object.is(v, -0)) return NEG_ZERO
  if (Array.isArray(v)) return v.map(canon)
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, canon(x)]))
  }
  return v
}

type Outcome =
  | { kind: 'value', value: unknown, logs: unknown[] }
  | { kind: 'threw', error: unknown, logs: unknown[] }
  | { kind: 'refused', error: unknown }

/** json-logic-js on a copy of the data, with console.log captured (its `log` writes there). */
function oracle (rule: unknown, data: unknown): Outcome {
  const logs: unknown[] = []
  const original = console.log
  console.log = (v: unknown) => { logs.push(v) }
  try {
    return { kind: 'value', value: jsonLogic.apply(rule as jsonLogic.RulesLogic, structuredClone(data)), logs }
  } catch (error) {
    return { kind: 'threw', error, logs }
  } finally {
    console.log = original
  }
}

/** The compiled rule on a copy of the data; `refused` when compiling throws. */
function compiled (rule: unknown, data: unknown): Outcome {
  const logs: unknown[] = []
  let fn: Evaluator
  try {
    fn = compileLogic(rule, { log: (v) => logs.push(v) })
  } catch (error) {
    return { kind: 'refused', error }
  }
  try {
    return { kind: 'value', value: fn(structuredClone(data), {}), logs }
  } catch (error) {
    return { kind: 'threw', error, logs }
  }
}

function errorText (e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e)
}

function summary (o: Outcome): unknown {
  if (o.kind === 'value') return { value: canon(o.value), logs: canon(o.logs) }
  if (o.kind === 'threw') return { threw: errorText(o.error) }
  return { refused: errorText(o.error) }
}

/** json-logic-js and the compiled rule both give `want` on `data` (and hand `logs` to log). */
function agree (t: Test, rule: unknown, data: unknown, want: unknown, logs: unknown[] = []): void {
  const expected = { value: canon(want), logs: canon(logs) }
  const label = `${show(rule)} on ${show(data)} gives ${show(want)}${logs.length > 0 ? `, logging ${show(logs)}` : ''}`
  t.strictSame(summary(oracle(rule, data)), expected, `json-logic-js: ${label}`)
  t.strictSame(summary(compiled(rule, data)), expected, `compiled: ${label}`)
}

/** Runs a table of [rule, expected value] on one data document. */
function table (t: Test, data: unknown, cases: Array<[unknown, unknown]>): void {
  for (const [rule, want] of cases) agree(t, rule, data, want)
}

/** Both json-logic-js and the compiled rule (at evaluation, not at compile time) throw a matching error. */
function bothThrow (t: Test, rule: unknown, data: unknown, message: RegExp): void {
  const label = `${show(rule)} on ${show(data)} throws ${message}`
  const want = oracle(rule, data)
  const got = compiled(rule, data)
  t.match(want.kind === 'threw' ? errorText(want.error) : `did not throw: ${show(summary(want))}`, message, `json-logic-js: ${label}`)
  t.match(got.kind === 'threw' ? errorText(got.error) : `did not throw at evaluation: ${show(summary(got))}`, message, `compiled: ${label}`)
}

/** Compiling `rule` fails with a JsonLogicCompileError at `path` whose reason matches. */
function refused (t: Test, compile: () => unknown, path: string, reason: RegExp, label: string): JsonLogicCompileError | undefined {
  let caught: unknown
  try {
    compile()
  } catch (err) {
    caught = err
  }
  t.type(caught, JsonLogicCompileError, `${label}: refused with a JsonLogicCompileError`)
  if (!(caught instanceof JsonLogicCompileError)) return undefined
  t.equal(caught.path, path, `${label}: the error names the path ${path}`)
  t.match(caught.reason, reason, `${label}: the reason matches ${reason}`)
  t.equal(caught.message, `${caught.path}: ${caught.reason}`, `${label}: the message is "path: reason"`)
  return caught
}

// ---------------------------------------------------------------------------------------------------
// Truthiness

t.test('truthiness: an empty array is falsy, "0", [0] and {} are truthy, exactly as json-logic-js', async (t) => {
  const table: Array<[unknown, boolean]> = [
    [[], false], [[0], true], [[[]], true], ['', false], ['0', true], ['false', true], [' ', true],
    [0, false], [-0, false], [1, true], [-1, true], [null, false], [{}, true], [true, true], [false, false]
  ]
  for (const [v, want] of table) {
    t.equal(truthy(v), want, `truthy(${show(v)}) is ${want}`)
    t.equal(jsonLogic.truthy(v), want, `jsonLogic.truthy(${show(v)}) is ${want}`)
    agree(t, { '!!': { var: 'v' } }, { v }, want)
    agree(t, { '!': [{ var: 'v' }] }, { v }, !want)
    agree(t, { if: [{ var: 'v' }, 'yes', 'no'] }, { v }, want ? 'yes' : 'no')
  }
})

// ---------------------------------------------------------------------------------------------------
// var

const VAR_DATA = {
  a: { b: { c: 3 } },
  list: [10, 20, { x: 'y' }],
  s: 'hey',
  n: null,
  f: false,
  zero: 0,
  empty: '',
  0: 'zero key',
  1: { 2: 'deep numeric' },
  'dot.key': 'unreachable',
  path: 'a.b.c'
}

t.test('var: dot paths, numeric indices, string indices and length read the data like json-logic-js', async (t) => {
  table(t, VAR_DATA, [
    [{ var: 'a.b.c' }, 3],
    [{ var: ['a.b.c'] }, 3],
    [{ var: 'a.b' }, { c: 3 }],
    [{ var: 'list.1' }, 20],
    [{ var: 'list.2.x' }, 'y'],
    [{ var: 'list.length' }, 3],
    [{ var: 's.length' }, 3],
    [{ var: 's.1' }, 'e'],
    [{ var: 'list.5' }, null],
    [{ var: 'list.-1' }, null],
    [{ var: 'a.b.c.d' }, null],
    [{ var: 'zero.x' }, null],
    [{ var: 'dot.key' }, null],
    [{ var: 'a.' }, null],
    [{ var: '.a' }, null],
    [{ var: 'a..b' }, null]
  ])
})

t.test('var: numeric paths ({"var":0}, {"var":1.2}) are read as their string form', async (t) => {
  table(t, VAR_DATA, [
    [{ var: 0 }, 'zero key'],
    [{ var: '0' }, 'zero key'],
    [{ var: [0] }, 'zero key'],
    [{ var: 1 }, { 2: 'deep numeric' }],
    [{ var: 1.2 }, 'deep numeric'],
    [{ var: -1 }, null]
  ])
  table(t, ['first', 'second'], [
    [{ var: 0 }, 'first'],
    [{ var: 1 }, 'second'],
    [{ var: 2 }, null],
    [{ var: 'length' }, 2]
  ])
})

t.test('var: the default replaces an absent value or a null met on the way, but not a present null, false, 0 or ""', async (t) => {
  table(t, VAR_DATA, [
    [{ var: ['list.5', 'dflt'] }, 'dflt'],
    [{ var: ['nope', 0] }, 0],
    [{ var: ['nope', false] }, false],
    [{ var: ['nope', null] }, null],
    [{ var: ['nope'] }, null],
    [{ var: ['a.nope.deeper', 5] }, 5],
    [{ var: 'n' }, null],
    [{ var: ['n', 'd'] }, null],
    [{ var: ['n.x', 'd'] }, 'd'],
    [{ var: ['f', 'd'] }, false],
    [{ var: ['zero', 'd'] }, 0],
    [{ var: ['empty', 'd'] }, ''],
    [{ var: ['nope', { cat: ['x', 'y'] }] }, 'xy'],
    [{ var: ['a.b.c', { cat: ['x'] }] }, 3],
    [{ var: ['nope', { and: [] }] }, null],
    [{ var: ['nope', [1, { var: 'zero' }]] }, [1, 0]]
  ])
})

t.test('var: the empty path, null and no path at all give the whole data, whatever the default', async (t) => {
  table(t, VAR_DATA, [
    [{ var: '' }, VAR_DATA],
    [{ var: null }, VAR_DATA],
    [{ var: [] }, VAR_DATA],
    [{ var: [null, 'd'] }, VAR_DATA],
    [{ var: ['', 'd'] }, VAR_DATA]
  ])
  agree(t, { var: '' }, [1, 2], [1, 2])
  agree(t, { var: '' }, 'text', 'text')
  agree(t, { var: '' }, null, null)
})

t.test('var: a path computed at evaluation time is split, defaulted and emptied like a written one', async (t) => {
  table(t, VAR_DATA, [
    [{ var: { cat: ['a', '.', 'b', '.', 'c'] } }, 3],
    [{ var: { var: 'path' } }, 3],
    [{ var: [{ cat: ['list.', 9] }, 'dd'] }, 'dd'],
    [{ var: [{ if: [true, 'a.b.c'] }, 'd'] }, 3],
    [{ var: { if: [false, 'x'] } }, VAR_DATA],
    [{ var: { var: 'empty' } }, VAR_DATA],
    [{ var: { '+': [0, 1] } }, { 2: 'deep numeric' }],
    [{ var: [{ var: 'zero' }] }, 'zero key'],
    [{ var: [{ cat: ['no', 'pe'] }, { and: [] }] }, null],
    [{ var: [{ cat: ['n', '.x'] }, 7] }, 7],
    [{ var: [[['a', 'b']]] }, null]
  ])
})

t.test('var: on data that is null, undefined, a string, a number or an array', async (t) => {
  agree(t, { var: 'x' }, null, null)
  agree(t, { var: ['x', 1] }, null, 1)
  agree(t, { var: 'x' }, undefined, null)
  agree(t, { var: '' }, undefined, undefined)
  agree(t, { var: '0' }, 'str', 's')
  agree(t, { var: 'length' }, 'str', 3)
  agree(t, { var: 'x' }, 'str', null)
  agree(t, { var: 'x' }, 42, null)
  agree(t, { var: '' }, 42, 42)
  agree(t, { var: 'x' }, true, null)
  agree(t, { var: '1.0' }, [[1], ['a', 'b']], 'a')
  t.equal(compileRule({ var: 'a' })(), null, 'compileRule\'s evaluator accepts no data at all')
})

t.test('var: the default and any extra arguments are evaluated even when they are not used', async (t) => {
  agree(t, { var: ['', { log: 'dflt' }, { log: 'extra' }] }, { a: 1 }, { a: 1 }, ['dflt', 'extra'])
  agree(t, { var: ['a', { log: 'dflt' }, { log: 'extra' }] }, { a: 1 }, 1, ['dflt', 'extra'])
  agree(t, { var: [{ log: 'a' }, { log: 'd' }] }, { a: 2 }, 2, ['a', 'd'])
  agree(t, { var: [{ log: 'a' }] }, { a: 2 }, 2, ['a'])
})

// ---------------------------------------------------------------------------------------------------
// missing, missing_some

const MISSING_DATA = { a: 1, b: '', c: null, z: 0, f: false, d: { e: 0, s: '' }, list: ['x'] }

t.test('missing: null, "" and absent values are missing; 0 and false are present', async (t) => {
  table(t, MISSING_DATA, [
    [{ missing: ['a', 'b', 'c', 'x'] }, ['b', 'c', 'x']],
    [{ missing: ['z', 'f', 'd.e'] }, []],
    [{ missing: ['d.s', 'd.nope', 'list.0', 'list.1'] }, ['d.s', 'd.nope', 'list.1']],
    [{ missing: [] }, []],
    [{ missing: 'x' }, ['x']],
    [{ missing: 'a' }, []],
    [{ missing: [0] }, [0]],
    [{ missing: [''] }, []],
    [{ missing: [null] }, []]
  ])
  agree(t, { missing: [null, ''] }, null, [null, ''])
  agree(t, { missing: [0, 1, 2] }, ['a', '', null], [1, 2])
  agree(t, { missing: ['a', 'length'] }, 'str', ['a'])
})

t.test('missing: a first argument that is an array is the key list (other arguments ignored); computed lists work', async (t) => {
  table(t, MISSING_DATA, [
    [{ missing: [['a', 'x', 'd.e']] }, ['x']],
    [{ missing: [['a', 'x'], 'b'] }, ['x']],
    [{ missing: { merge: ['a', 'x', ['b']] } }, ['x', 'b']],
    [{ missing: { if: [true, ['a', 'q']] } }, ['q']],
    [{ missing: [{ var: 'list.0' }, 'a'] }, ['x']]
  ])
})

t.test('missing: a [key, default] pair counts as present when the default is neither null nor ""', async (t) => {
  table(t, MISSING_DATA, [
    [{ missing: [[['x', 1], ['c'], ['d.e', 0], ['q', ''], ['r', null], []]] }, [['c'], ['q', ''], ['r', null]]],
    [{ missing: ['a', ['x', 1], ['y']] }, [['y']]],
    [{ missing: [[['a', 'b']]] }, []],
    [{ missing: [[['zz', 'b']]] }, []],
    [{ missing: [[['zz']]] }, [['zz']]]
  ])
})

t.test('missing_some: [] when enough keys are present, else the missing keys; the count and options are coerced', async (t) => {
  table(t, MISSING_DATA, [
    [{ missing_some: [1, ['a', 'x']] }, []],
    [{ missing_some: [2, ['a', 'x', 'y']] }, ['x', 'y']],
    [{ missing_some: [0, []] }, []],
    [{ missing_some: [1, []] }, []],
    [{ missing_some: [3, ['a', 'z', 'f', 'b']] }, []],
    [{ missing_some: [4, ['a', 'z', 'f', 'b']] }, ['b']],
    [{ missing_some: ['1', ['a', 'x']] }, []],
    [{ missing_some: [1, 'x'] }, ['x']],
    [{ missing_some: [1, 'abc'] }, []],
    [{ missing_some: [0, 5] }, [5]],
    [{ missing_some: [1, [['a', 'x']]] }, ['x']],
    [{ missing_some: [1, { merge: [['x'], 'y'] }] }, ['x', 'y']]
  ])
})

t.test('missing_some: options that are null or absent throw at evaluation, as in json-logic-js', async (t) => {
  bothThrow(t, { missing_some: [1, null] }, {}, /^TypeError: Cannot read properties of null \(reading 'length'\)/)
  bothThrow(t, { missing_some: [1] }, {}, /^TypeError: Cannot read properties of undefined \(reading 'length'\)/)
  bothThrow(t, { missing_some: [1, { var: 'nope' }] }, {}, /^TypeError: Cannot read properties of null/)
})

// ---------------------------------------------------------------------------------------------------
// if, ?:, and, or, !, !!

t.test('if and ?: with any number of arguments: pairs of condition and value, an optional else, null without one', async (t) => {
  table(t, { a: 'from data' }, [
    [{ if: [] }, null],
    [{ if: [true] }, true],
    [{ if: [{ var: 'a' }] }, 'from data'],
    [{ if: 'x' }, 'x'],
    [{ if: [false, 1] }, null],
    [{ if: [true, 1] }, 1],
    [{ if: [0, 1, 2] }, 2],
    [{ if: [1, 'a', 'b'] }, 'a'],
    [{ if: [0, 1, '', 2, 3] }, 3],
    [{ if: [0, 1, 'x', 2, 3] }, 2],
    [{ if: [0, 1, '', 2] }, null],
    [{ if: [0, 1, '', 2, null, 3, 4] }, 4],
    [{ if: [[], 'a', [0], 'b', 'c'] }, 'b'],
    [{ if: ['0', 'truthy "0"', 'no'] }, 'truthy "0"'],
    [{ '?:': [1, 'y', 'n'] }, 'y'],
    [{ '?:': [null, 'y', 'n'] }, 'n'],
    [{ '?:': [false, 1, false, 2, 3] }, 3],
    [{ '?:': [] }, null]
  ])
})

t.test('if: only the chosen branch is evaluated (an untaken branch that would throw does not)', async (t) => {
  agree(t, { if: [true, 'ok', { '*': [] }] }, {}, 'ok')
  agree(t, { if: [false, { '*': [] }, 'ok'] }, {}, 'ok')
  agree(t, { if: [{ log: 'c' }, { log: 'then' }, { log: 'else' }] }, {}, 'then', ['c', 'then'])
  agree(t, { if: [{ log: 0 }, { log: 'then' }, { log: '' }, 'x', { log: 'else' }] }, {}, 'else', [0, '', 'else'])
  bothThrow(t, { if: [false, 'ok', { '*': [] }] }, {}, /^TypeError: Reduce of empty array with no initial value/)
})

t.test('and / or: return the deciding operand itself (not a boolean), undefined when empty, and stop early', async (t) => {
  table(t, {}, [
    [{ and: [] }, undefined],
    [{ or: [] }, undefined],
    [{ and: [1, 'a', 0, 2] }, 0],
    [{ and: [1, 2] }, 2],
    [{ and: [1, [], 2] }, []],
    [{ and: true }, true],
    [{ or: [0, '', 'x', 1] }, 'x'],
    [{ or: [0, []] }, []],
    [{ or: [false, null] }, null],
    [{ or: ['0'] }, '0'],
    [{ or: [[], [0]] }, [0]],
    [{ and: [false, { '*': [] }] }, false],
    [{ or: [1, { '*': [] }] }, 1]
  ])
  agree(t, { and: [{ log: 1 }, { log: 0 }, { log: 2 }] }, {}, 0, [1, 0])
  agree(t, { or: [{ log: '' }, { log: 'y' }, { log: 'z' }] }, {}, 'y', ['', 'y'])
  agree(t, { and: [{ var: 'a' }, { or: [{ var: 'b' }, { var: 'c' }] }] }, { a: 1, b: 0, c: 'c' }, 'c')
})

t.test('! and !!: JSON-logic truthiness, with the single-value form, no argument and extra arguments', async (t) => {
  table(t, { x: [1], e: [] }, [
    [{ '!': true }, false],
    [{ '!': [true] }, false],
    [{ '!': [[]] }, true],
    [{ '!': [[0]] }, false],
    [{ '!': '0' }, false],
    [{ '!': '' }, true],
    [{ '!': [] }, true],
    [{ '!': [0, 1] }, true],
    [{ '!': { var: 'e' } }, true],
    [{ '!!': [[]] }, false],
    [{ '!!': ['0'] }, true],
    [{ '!!': [] }, false],
    [{ '!!': [1, 0] }, true],
    [{ '!!': { var: 'x' } }, true],
    [{ '!!': { var: 'e' } }, false]
  ])
})

// ---------------------------------------------------------------------------------------------------
// Equality and comparison

t.test('==, ===, !=, !==: JavaScript loose and strict equality, with one, two or three arguments', async (t) => {
  table(t, { o: {}, s: '1' }, [
    [{ '==': [1, '1'] }, true],
    [{ '==': [0, ''] }, true],
    [{ '==': [null, 0] }, false],
    [{ '==': [null, { and: [] }] }, true],
    [{ '==': [[], false] }, true],
    [{ '==': ['1,2', [1, 2]] }, true],
    [{ '==': [[1], [1]] }, false],
    [{ '==': [{ var: 's' }, 1] }, true],
    [{ '==': [{ var: 'o' }, '[object Object]'] }, true],
    [{ '===': [1, '1'] }, false],
    [{ '===': [null, null] }, true],
    [{ '===': [{ var: 'o' }, { var: 'o' }] }, true],
    [{ '===': [{}, {}] }, false],
    [{ '!=': [0, ''] }, false],
    [{ '!=': [1, 2] }, true],
    [{ '!==': [1, '1'] }, true],
    [{ '!==': [null, null] }, false],
    [{ '==': [null] }, true],
    [{ '==': 1 }, false],
    [{ '===': [1] }, false],
    [{ '!=': [1] }, true],
    [{ '!==': [{ and: [] }] }, false],
    [{ '==': [1, 1, 2] }, true],
    [{ '===': ['a', 'a', 'b'] }, true],
    [{ '!=': [1, 2, 1] }, true],
    [{ '!==': [1, 1, 2] }, false]
  ])
})

t.test('< and <=: two-argument comparison, three-argument "between" (exclusive / inclusive), JavaScript coercions', async (t) => {
  table(t, {}, [
    [{ '<': [1, 2] }, true],
    [{ '<': [2, 1] }, false],
    [{ '<': ['10', '9'] }, true],
    [{ '<': ['10', 9] }, false],
    [{ '<': [null, 1] }, true],
    [{ '<': ['a', 1] }, false],
    [{ '<': [1, 2, 3] }, true],
    [{ '<': [1, 3, 2] }, false],
    [{ '<': [1, 1, 2] }, false],
    [{ '<': [1, 2, 2] }, false],
    [{ '<': [1, 2, { and: [] }] }, true],
    [{ '<': [1] }, false],
    [{ '<=': [1, 1] }, true],
    [{ '<=': [2, 1] }, false],
    [{ '<=': [null, 0] }, true],
    [{ '<=': [1, 1, 1] }, true],
    [{ '<=': [1, 2, 1] }, false],
    [{ '<=': [2, 1, 3] }, false],
    [{ '<=': [1, 2, { and: [] }] }, true],
    [{ '<=': [1] }, false]
  ])
})

t.test('> and >=: JavaScript comparison; a third argument is ignored', async (t) => {
  table(t, {}, [
    [{ '>': ['10', 9] }, true],
    [{ '>': [1, 1] }, false],
    [{ '>': ['b', 'a'] }, true],
    [{ '>': [2, 1, 5] }, true],
    [{ '>': [1] }, false],
    [{ '>=': [1, 1] }, true],
    [{ '>=': [0, null] }, true],
    [{ '>=': [1, 2, 0] }, false],
    [{ '>=': [] }, false]
  ])
})

// ---------------------------------------------------------------------------------------------------
// Arithmetic

t.test('max and min: Math.max / Math.min with coercion; empty gives -Infinity / Infinity; -0 is kept', async (t) => {
  table(t, {}, [
    [{ max: [1, 3, '2'] }, 3],
    [{ min: [1, 3, '-2'] }, -2],
    [{ max: [] }, -Infinity],
    [{ min: [] }, Infinity],
    [{ max: [1, 'a'] }, NaN],
    [{ min: [null, 5] }, 0],
    [{ max: [[4]] }, 4],
    [{ max: 2 }, 2],
    [{ min: [-0, 0] }, -0],
    [{ max: [-0, 0] }, 0]
  ])
})

t.test('+: parseFloat of every argument summed from 0 (so "3px" is 3, true is NaN, -0 becomes 0)', async (t) => {
  table(t, { z: -0 }, [
    [{ '+': [] }, 0],
    [{ '+': ['1', '2.5', 3] }, 6.5],
    [{ '+': ['3.14'] }, 3.14],
    [{ '+': ['3px', 1] }, 4],
    [{ '+': ['1e3', 1] }, 1001],
    [{ '+': ['abc'] }, NaN],
    [{ '+': [true, 1] }, NaN],
    [{ '+': [null] }, NaN],
    [{ '+': [[2], 1] }, 3],
    [{ '+': [-0] }, 0],
    [{ '+': [-0, -0] }, 0],
    [{ '+': [{ var: 'z' }] }, 0],
    [{ '+': [1e21, 1] }, 1e21],
    [{ '+': 5 }, 5]
  ])
})

t.test('-: unary negation, binary subtraction with JavaScript coercion, NaN without arguments', async (t) => {
  table(t, {}, [
    [{ '-': [5] }, -5],
    [{ '-': '5' }, -5],
    [{ '-': ['7', 2] }, 5],
    [{ '-': [0] }, -0],
    [{ '-': [-0] }, 0],
    [{ '-': [] }, NaN],
    [{ '-': ['a', 1] }, NaN],
    [{ '-': [null, 1] }, -1],
    [{ '-': [5, { and: [] }] }, -5],
    [{ '-': [3, 1, 1] }, 2]
  ])
})

t.test('*: parseFloat products; a single argument is returned unconverted; no argument throws like json-logic-js', async (t) => {
  table(t, {}, [
    [{ '*': ['2', 3, 4] }, 24],
    [{ '*': ['3'] }, '3'],
    [{ '*': 7 }, 7],
    [{ '*': ['2px', '3'] }, 6],
    [{ '*': [-1, 0] }, -0],
    [{ '*': [-0, 5] }, 0],
    [{ '*': [-1, 0, 5] }, 0],
    [{ '*': [2, null] }, NaN]
  ])
  bothThrow(t, { '*': [] }, {}, /^TypeError: Reduce of empty array with no initial value$/)
})

t.test('/ and %: JavaScript division and remainder (Infinity, NaN, -0); extra arguments ignored, a missing one is undefined', async (t) => {
  table(t, {}, [
    [{ '/': [1, 0] }, Infinity],
    [{ '/': [-1, 0] }, -Infinity],
    [{ '/': [0, -1] }, -0],
    [{ '/': [0, 0] }, NaN],
    [{ '/': ['6', '3'] }, 2],
    [{ '/': [6, 3, 100] }, 2],
    [{ '/': [6] }, NaN],
    [{ '%': [7, 3] }, 1],
    [{ '%': [-7, 3] }, -1],
    [{ '%': [-3, 3] }, -0],
    [{ '%': ['7', '4'] }, 3],
    [{ '%': [7, 0] }, NaN],
    [{ '%': [7, 4, 2] }, 3],
    [{ '%': [7] }, NaN]
  ])
})

// ---------------------------------------------------------------------------------------------------
// Strings and arrays

t.test('cat: joins the string forms of its arguments; null and undefined are empty, arrays are comma-joined', async (t) => {
  table(t, { f: 'apple', n: null, o: { a: 1 } }, [
    [{ cat: [] }, ''],
    [{ cat: 'x' }, 'x'],
    [{ cat: ['a', 1, null, true] }, 'a1true'],
    [{ cat: [[1, [2, null]], { and: [] }] }, '1,2,'],
    [{ cat: [-0, 2.5] }, '02.5'],
    [{ cat: [{ var: 'o' }] }, '[object Object]'],
    [{ cat: ['I love ', { var: 'f' }, ' pie'] }, 'I love apple pie'],
    [{ cat: [{ var: 'n' }, 'x'] }, 'x'],
    [{ cat: ['x'.repeat(300), 'y'] }, `${'x'.repeat(300)}y`]
  ])
})

t.test('substr: start and length like String.prototype.substr, a negative length cuts from the end', async (t) => {
  table(t, {}, [
    [{ substr: ['jsonlogic', 4] }, 'logic'],
    [{ substr: ['jsonlogic', -5] }, 'logic'],
    [{ substr: ['jsonlogic', 1, 3] }, 'son'],
    [{ substr: ['jsonlogic', 4, -2] }, 'log'],
    [{ substr: ['jsonlogic', -5, -2] }, 'log'],
    [{ substr: ['abc', -1, -1] }, ''],
    [{ substr: ['abc', 0, -5] }, ''],
    [{ substr: ['abc', 5] }, ''],
    [{ substr: ['abc', 1, 0] }, ''],
    [{ substr: ['abc', '1', '1'] }, 'b'],
    [{ substr: [12345, 1, 2] }, '23'],
    [{ substr: ['abc'] }, 'abc'],
    [{ substr: [null, 0] }, 'null']
  ])
})

t.test('in: substring of a string, strict membership in an array, false for anything else', async (t) => {
  table(t, { o: { a: 1 } }, [
    [{ in: ['Spring', 'Springfield'] }, true],
    [{ in: ['spring', 'Springfield'] }, false],
    [{ in: ['', 'abc'] }, true],
    [{ in: ['a', ''] }, false],
    [{ in: ['', ''] }, false],
    [{ in: [1, '123'] }, true],
    [{ in: [1, [1, 2]] }, true],
    [{ in: ['1', [1, 2]] }, false],
    [{ in: [null, [null]] }, true],
    [{ in: [[], [[]]] }, false],
    [{ in: ['x', null] }, false],
    [{ in: ['x', 0] }, false],
    [{ in: ['x', 5] }, false],
    [{ in: ['x', true] }, false],
    [{ in: ['a', {}] }, false],
    [{ in: ['a', { var: 'o' }] }, false],
    [{ in: ['a'] }, false],
    [{ in: ['b', 'abc', 'ignored'] }, true],
    [{ in: [2, [1, 2], 0] }, true],
    [{ in: ['x', null, 1] }, false],
    [{ in: ['x', 5, 1] }, false],
    [{ in: ['x', 'abc', 1] }, false]
  ])
})

t.test('in: an object whose own "indexOf" is data throws, as json-logic-js does', async (t) => {
  bothThrow(t, { in: ['a', { var: 'o' }] }, { o: { indexOf: 1 } }, /^TypeError: b\.indexOf is not a function$/)
  bothThrow(t, { in: ['a', { var: 'o' }] }, { o: { indexOf: null } }, /^TypeError: b\.indexOf is not a function$/)
  bothThrow(t, { in: ['a', { var: 'o' }, 'extra'] }, { o: { indexOf: 'x' } }, /^TypeError: b\.indexOf is not a function$/)
})

t.test('merge: flattens its arguments one level into a new array', async (t) => {
  table(t, { l: [1] }, [
    [{ merge: [] }, []],
    [{ merge: [1, [2, 3], [[4]]] }, [1, 2, 3, [4]]],
    [{ merge: [null] }, [null]],
    [{ merge: 'a' }, ['a']],
    [{ merge: [[], []] }, []],
    [{ merge: [{ var: 'l' }, { var: 'l' }] }, [1, 1]]
  ])
})

// ---------------------------------------------------------------------------------------------------
// Scoped operations

const SCOPED_DATA = {
  list: [1, 2, 3, 4],
  people: [{ name: 'ann', age: 30 }, { name: 'bob', age: 12 }],
  words: ['a', 'bb'],
  none: null,
  nested: [[1, 2], [3]]
}

t.test('map: the logic sees each item as its data; a non-array gives []', async (t) => {
  table(t, SCOPED_DATA, [
    [{ map: [{ var: 'list' }, { '*': [{ var: '' }, 2] }] }, [2, 4, 6, 8]],
    [{ map: [{ var: 'people' }, { var: 'name' }] }, ['ann', 'bob']],
    [{ map: [{ var: 'list' }, { var: 'list' }] }, [null, null, null, null]],
    [{ map: [{ var: 'nested' }, { map: [{ var: '' }, { '+': [{ var: '' }, 10] }] }] }, [[11, 12], [13]]],
    [{ map: [{ var: 'none' }, 1] }, []],
    [{ map: ['abc', { var: '' }] }, []],
    [{ map: [[], 1] }, []],
    [{ map: [{ var: 'words' }] }, [undefined, undefined]],
    [{ map: [] }, []],
    [{ map: { var: 'list' } }, [undefined, undefined, undefined, undefined]]
  ])
})

t.test('filter: keeps the items whose logic is truthy (JSON-logic truthiness); a non-array gives []', async (t) => {
  table(t, SCOPED_DATA, [
    [{ filter: [{ var: 'list' }, { '%': [{ var: '' }, 2] }] }, [1, 3]],
    [{ filter: [{ var: 'people' }, { '>=': [{ var: 'age' }, 18] }] }, [{ name: 'ann', age: 30 }]],
    [{ filter: [[0, '', '0', [], [0], null], { var: '' }] }, ['0', [0]]],
    [{ filter: [5, 1] }, []],
    [{ filter: [{ var: 'list' }] }, []],
    [{ filter: [] }, []]
  ])
})

t.test('reduce: current and accumulator as the data; the initial value is evaluated on the outer data, null when absent', async (t) => {
  table(t, SCOPED_DATA, [
    [{ reduce: [{ var: 'list' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }, 10] }, 20],
    [{ reduce: [{ var: 'list' }, { '+': [{ var: 'current' }, { var: 'accumulator' }] }] }, NaN],
    [{ reduce: [{ var: 'list' }, { '*': [{ var: 'current' }, { var: 'accumulator' }] }, 1] }, 24],
    [{ reduce: [{ var: 'words' }, { cat: [{ var: 'accumulator' }, { var: 'current' }] }, ''] }, 'abb'],
    [{ reduce: [[1, 2], { var: 'current' }, { var: 'list.0' }] }, 2],
    [{ reduce: [[], 0, { var: 'list.3' }] }, 4],
    [{ reduce: [[], { var: 'current' }, 0] }, 0],
    [{ reduce: [{ var: 'none' }, 1, 'init'] }, 'init'],
    [{ reduce: [{ var: 'none' }, 1] }, null],
    [{ reduce: [[1, 2], { var: '' }, 0] }, { current: 2, accumulator: { current: 1, accumulator: 0 } }],
    [{ reduce: [[1, 2]] }, undefined],
    [{ reduce: [] }, null]
  ])
})

t.test('all, none, some: JSON-logic truthiness per item; an empty or non-array input gives false / true / false', async (t) => {
  table(t, SCOPED_DATA, [
    [{ all: [{ var: 'list' }, { '>': [{ var: '' }, 0] }] }, true],
    [{ all: [{ var: 'list' }, { '>': [{ var: '' }, 1] }] }, false],
    [{ all: [{ var: 'people' }, { var: 'age' }] }, true],
    [{ all: [[[]], { var: '' }] }, false],
    [{ all: [[], true] }, false],
    [{ all: ['x', 1] }, false],
    [{ all: [[1]] }, false],
    [{ none: [{ var: 'list' }, { '>': [{ var: '' }, 3] }] }, false],
    [{ none: [{ var: 'list' }, { '>': [{ var: '' }, 4] }] }, true],
    [{ none: [[], true] }, true],
    [{ none: [{ var: 'none' }, 1] }, true],
    [{ none: [{}, 1] }, true],
    [{ none: [[1]] }, true],
    [{ some: [{ var: 'people' }, { '<': [{ var: 'age' }, 18] }] }, true],
    [{ some: [[0, ''], { var: '' }] }, false],
    [{ some: [[0, '0'], { var: '' }] }, true],
    [{ some: [[], true] }, false],
    [{ some: [null, 1] }, false],
    [{ some: [[1]] }, false]
  ])
})

t.test('scoped operations: evaluation order and short-circuits match json-logic-js (seen through log)', async (t) => {
  agree(t, { all: [[1, 0, 2], { log: { var: '' } }] }, {}, false, [1, 0])
  agree(t, { some: [[0, 1, 2], { log: { var: '' } }] }, {}, true, [0, 1])
  agree(t, { none: [[0, 1, 2], { log: { var: '' } }] }, {}, false, [0, 1])
  agree(t, { map: [[1, 2], { log: { var: '' } }] }, {}, [1, 2], [1, 2])
  agree(t, { filter: [[1, 0], { log: { var: '' } }] }, {}, [1], [1, 0])
  agree(t, { reduce: [{ log: [[1]] }, { log: { var: 'current' } }, { log: 'init' }] }, {}, 1, [[1], 'init', 1])
})

t.test('scoped operations: arguments past those the operation reads are not evaluated', async (t) => {
  agree(t, { map: [[1, 2], { '+': [{ var: '' }, 1] }, { log: 'ignored' }] }, {}, [2, 3])
  agree(t, { all: [[1], 1, { log: 'ignored' }, { log: 'ignored' }] }, {}, true)
  agree(t, { reduce: [[1], { var: 'current' }, 0, { log: 'ignored' }] }, {}, 1)
})

// ---------------------------------------------------------------------------------------------------
// log

t.test('log: returns its first argument after evaluating all of them, and hands that value to options.log', async (t) => {
  agree(t, { log: 'apple' }, {}, 'apple', ['apple'])
  agree(t, { log: { '+': [1, 2] } }, {}, 3, [3])
  agree(t, { log: [] }, {}, undefined, [undefined])
  agree(t, { log: [[1, 2]] }, {}, [1, 2], [[1, 2]])
  agree(t, { log: [1, { log: 'second' }] }, {}, 1, ['second', 1])
  agree(t, { '+': [{ log: 1 }, { log: 2 }] }, {}, 3, [1, 2])
})

t.test('log: without options.log the value is discarded and console.log is never called (a documented difference)', async (t) => {
  const original = console.log
  let calls = 0
  console.log = () => { calls++ }
  let value: unknown
  try {
    value = compileRule({ log: [{ log: 'quiet' }] })({})
  } finally {
    console.log = original
  }
  t.equal(value, 'quiet', 'the value is still returned')
  t.equal(calls, 0, 'console.log was not called')
})

// ---------------------------------------------------------------------------------------------------
// Rules that are not operations

t.test('rules that are literals, arrays or objects without exactly one key are values, as in json-logic-js', async (t) => {
  table(t, { a: 2 }, [
    [5, 5],
    ['x', 'x'],
    [null, null],
    [true, true],
    [[], []],
    [[1, { var: 'a' }, 'x'], [1, 2, 'x']],
    [[[{ var: 'a' }], 3], [[2], 3]],
    [{}, {}],
    [{ a: 1, b: [1, 2] }, { a: 1, b: [1, 2] }],
    [{ a: { var: 'x' }, b: 1 }, { a: { var: 'x' }, b: 1 }],
    [[{ a: 1, b: 2 }], [{ a: 1, b: 2 }]]
  ])
})

t.test('constant values are frozen copies: an evaluation cannot change the compiled rule', async (t) => {
  const obj = { a: 1, b: [1, 2], c: null, d: { e: 'x' } }
  const value = compileRule(obj)({}) as { a: number, b: number[], d: { e: string } }
  t.strictSame(value, obj, 'a multi-key object is returned as written')
  t.not(value, obj, 'as a copy, not the rule object')
  t.ok(Object.isFrozen(value) && Object.isFrozen(value.b) && Object.isFrozen(value.d), 'frozen all the way down')
  t.throws(() => { value.b.push(3) }, TypeError, 'pushing into it throws')
  t.strictSame(compileRule(obj)({}), obj, 'a new evaluation gives the same value again')
  const consts = compileRule([1, [2]])({}) as unknown[]
  t.ok(Object.isFrozen(consts) && Object.isFrozen(consts[1]), 'an all-constant array is frozen, nested arrays too')
  const shared = { x: 1 }
  const twice = compileRule({ p: shared, q: shared })({}) as { p: object, q: object }
  t.equal(twice.p, twice.q, 'an object met twice stays one (frozen once)')
  t.ok(Object.isFrozen(twice.q), 'and is frozen')
  t.notOk(Object.isFrozen(shared), 'the rule itself is not frozen')
})

// ---------------------------------------------------------------------------------------------------
// Documented deviations

t.test('deviation: var reads own properties only; json-logic-js also returns inherited ones', async (t) => {
  const cases: Array<[unknown, unknown, unknown]> = [
    [{ var: 'toString' }, {}, null],
    [{ var: ['hasOwnProperty', 'd'] }, { a: 1 }, 'd'],
    [{ var: 'list.map' }, { list: [] }, null],
    [{ var: 's.toUpperCase' }, { s: 'x' }, null],
    [{ var: 'n.toFixed' }, { n: 1 }, null],
    [{ var: [{ cat: ['value', 'Of'] }, 'd'] }, {}, 'd']
  ]
  for (const [rule, data, want] of cases) {
    t.equal(compileRule(rule)(data), want, `compiled: ${show(rule)} on ${show(data)} gives ${show(want)}`)
    t.type(jsonLogic.apply(rule as jsonLogic.RulesLogic, data), 'function', `json-logic-js: ${show(rule)} reaches an inherited method`)
  }
  t.strictSame(compileRule({ missing: ['toString', 'a'] })({ a: 1 }), ['toString'], 'compiled: an inherited name is missing')
  t.strictSame(jsonLogic.apply({ missing: ['toString', 'a'] }, { a: 1 }), [], 'json-logic-js: it is not')
})

t.test('var: a value inherited from a polluted Object.prototype is never read; own values equal to it are', async (t) => {
  const proto = Object.prototype as unknown as Record<string, unknown>
  proto.polluted = 'yes'
  try {
    t.equal(compileRule({ var: 'polluted' })({}), null, 'a written path does not see the pollution')
    t.equal(compileRule({ var: ['a.polluted', 'd'] })({ a: {} }), 'd', 'nor a nested one (the default is used)')
    t.equal(compileRule({ var: { cat: ['pol', 'luted'] } })({}), null, 'nor a computed one')
    t.strictSame(compileRule({ missing: ['polluted'] })({}), ['polluted'], 'missing reports it missing')
    t.equal(compileRule({ var: 'polluted' })(JSON.parse('{"polluted":"yes"}')), 'yes', 'an own value equal to the polluted one is read')
    t.equal(compileRule({ var: 'polluted' })(JSON.parse('{"polluted":"own"}')), 'own', 'an own value of its own is read')
  } finally {
    delete proto.polluted
  }
})

t.test('var: own function values are read; inherited methods of arrays, strings and numbers are not', async (t) => {
  const f = (): number => 1
  t.equal(compileRule({ var: 'f' })({ f }), f, 'an own function (only possible outside JSON data)')
  t.equal(compileRule({ var: 'x.f' })({ x: { f } }), f, 'nested')
  t.equal(compileRule({ var: 'a.push' })({ a: [] }), null, 'Array.prototype.push')
  t.equal(compileRule({ var: 's.trim' })({ s: ' ' }), null, 'String.prototype.trim')
  t.equal(compileRule({ var: 'n.toFixed' })({ n: 1 }), null, 'Number.prototype.toFixed')
  t.equal(compileRule({ var: 'b.valueOf' })({ b: true }), null, 'Boolean.prototype.valueOf')
  t.equal(compileRule({ var: { cat: ['a.', 'push'] } })({ a: [] }), null, 'a computed path too')
})

t.test('own properties are still read, even when named like inherited ones', async (t) => {
  agree(t, { var: 'toString' }, JSON.parse('{"toString":"own"}'), 'own')
  agree(t, { var: 'length' }, [1, 2], 2)
  agree(t, { var: 'a.valueOf' }, { a: { valueOf: 0 } }, 0)
  agree(t, { var: 'constructors' }, { constructors: 1 }, 1)
  agree(t, { var: 'x.__proto__x' }, { x: { __proto__x: 2 } }, 2)
  agree(t, { var: 'my.prototype_id' }, { my: { prototype_id: 3 } }, 3)
})

t.test('deviation: __proto__, constructor and prototype written in var or missing are compile errors naming the node', async (t) => {
  t.equal(jsonLogic.apply({ var: '__proto__' }, {}), Object.prototype, 'json-logic-js: {"var":"__proto__"} reaches Object.prototype')
  t.equal(jsonLogic.apply({ var: 'constructor' }, 'x'), String, 'json-logic-js: {"var":"constructor"} reaches String')
  refused(t, () => compileRule({ var: '__proto__' }), 'rule.var', /^path segment "__proto__" is not allowed$/, 'var __proto__')
  refused(t, () => compileRule({ var: '__proto__.polluted' }), 'rule.var', /"__proto__"/, 'var __proto__.polluted')
  refused(t, () => compileRule({ var: ['a.constructor', 'd'] }), 'rule.var', /^path segment "constructor" is not allowed$/, 'var with a default')
  refused(t, () => compileRule({ var: 'f.prototype.x' }), 'rule.var', /^path segment "prototype" is not allowed$/, 'var prototype')
  refused(t, () => compileRule({ and: [true, { var: 'a.constructor' }] }), 'rule.and[1].var', /"constructor"/, 'nested in and')
  refused(t, () => compileRule({ if: [false, { var: '__proto__' }] }), 'rule.if[1].var', /"__proto__"/, 'in a branch that never runs')
  refused(t, () => compileRule({ map: [[1], { var: 'prototype' }] }), 'rule.map[1].var', /"prototype"/, 'in scoped logic')
  refused(t, () => compileRule({ missing: ['a.prototype'] }), 'rule.missing', /^path segment "prototype" is not allowed$/, 'missing')
  refused(t, () => compileRule({ missing: 'constructor' }), 'rule.missing', /"constructor"/, 'missing with a single key')
  refused(t, () => compileRule({ missing: [['ok', 'a.__proto__']] }), 'rule.missing', /"__proto__"/, 'missing with a key list')
  refused(t, () => compileRule({ missing: [['x', '__proto__']] }), 'rule.missing', /"__proto__"/, 'missing with a [key, default] pair list')
  refused(t, () => compileRule({ missing: [['ok'], ['__proto__', 1]] }), 'rule.missing', /"__proto__"/, 'missing with [key, default] pairs')
  refused(t, () => compileLogic({ or: [{ var: 'constructor' }] }, {}, 'config.deny_if'), 'config.deny_if.or[0].var', /"constructor"/, 'under a base path')
  t.doesNotThrow(() => compileRule({ missing: [null, 'a', { var: 'k' }] }), 'missing keys that are null or computed are not checked at compile time')
})

t.test('deviation: a forbidden segment computed at evaluation time throws there, before any lookup', async (t) => {
  const polluted = JSON.parse('{"__proto__": {"polluted": "yes"}, "p": "__proto__.polluted", "q": "a.constructor", "keys": ["prototype"]}')
  const cases: Array<[unknown, RegExp]> = [
    [{ var: { cat: ['__pro', 'to__'] } }, /^var: path segment "__proto__" is not allowed$/],
    [{ var: { var: 'p' } }, /"__proto__"/],
    [{ var: [{ var: 'q' }, 'd'] }, /"constructor"/],
    [{ missing: { var: 'keys' } }, /"prototype"/],
    [{ missing: [[{ var: 'p' }, 1]] }, /"__proto__"/],
    [{ missing_some: [1, { var: 'keys' }] }, /"prototype"/],
    [{ map: [['__proto__'], { var: { var: '' } }] }, /"__proto__"/]
  ]
  for (const [rule, message] of cases) {
    const fn = compileRule(rule)
    t.throws(() => fn(polluted), { message }, `${show(rule)} throws at evaluation`)
  }
  t.throws(() => lookup({}, 'a.constructor', null), { message: /"constructor"/ }, 'lookup refuses it too')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was not touched')
})

t.test('deviation: missing_some keys written in the rule are refused at compile time; computed ones when evaluated', async (t) => {
  t.throws(() => compileRule({ missing_some: [1, ['a', '__proto__']] }), JsonLogicCompileError,
    'a forbidden key written in missing_some is refused at compile time')
  const fn = compileRule({ missing_some: [1, { merge: ['a', { cat: ['__pro', 'to__'] }] }] })
  t.throws(() => fn({ a: 1 }), { message: /"__proto__" is not allowed/ }, 'a computed one throws when evaluated')
})

t.test('deviation: data handed to missing is never run as logic (json-logic-js evaluates one-key objects in it)', async (t) => {
  const data = { keys: [{ var: 'a' }], pairs: [[{ var: 'a' }, 'd']], a: 'b', b: 1 }
  t.strictSame(compileRule({ missing: { var: 'keys' } })(data), [{ var: 'a' }], 'compiled: the object key is looked up as the path "[object Object]", which is missing')
  t.strictSame(jsonLogic.apply({ missing: { var: 'keys' } }, data), [], 'json-logic-js: it evaluates {"var":"a"} and looks up "b"')
  t.strictSame(compileRule({ missing_some: [1, { var: 'keys' }] })(data), [{ var: 'a' }], 'compiled: missing_some likewise')
  t.strictSame(compileRule({ missing: [{ var: 'pairs' }] })(data), [], 'compiled: a [key, default] pair from data uses its default as data')
})

t.test('deviation: unknown operations are compile errors naming the node, even where json-logic-js never looks', async (t) => {
  t.equal(jsonLogic.apply({ if: [true, 1, { nope: 1 }] } as jsonLogic.RulesLogic, {}), 1, 'json-logic-js: an unknown operation in an untaken branch is fine')
  refused(t, () => compileRule({ if: [true, 1, { nope: 1 }] }), 'rule.if[2].nope', /^unknown operation "nope"$/, 'in an untaken if branch')
  refused(t, () => compileRule({ and: [false, { frob: [1] }] }), 'rule.and[1].frob', /^unknown operation "frob"$/, 'after a short-circuit')
  refused(t, () => compileRule({ nope: [1] }), 'rule.nope', /unknown operation "nope"/, 'at the top')
  refused(t, () => compileRule([1, { nope: 1 }]), 'rule[1].nope', /unknown operation/, 'inside an array')
  refused(t, () => compileRule({ map: [[1], { nope: 1 }] }), 'rule.map[1].nope', /unknown operation/, 'in scoped logic')
  refused(t, () => compileRule({ map: [[1], { var: '' }, 0, { frob: 1 }] }), 'rule.map[3].frob', /unknown operation/, 'in an argument map never reads')
  refused(t, () => compileRule({ var: ['a', { nope: 1 }] }), 'rule.var[1].nope', /unknown operation/, 'in a var default')
  refused(t, () => compileRule({ '!': { nope: 1 } }), 'rule["!"].nope', /unknown operation/, 'under a single-value argument')
  refused(t, () => compileRule({ 'we ird': 1 }), 'rule["we ird"]', /unknown operation "we ird"/, 'a name that is not an identifier')
  refused(t, () => compileRule({ 'a.b': 1 }), 'rule["a.b"]', /unknown operation "a.b"/, 'a dotted name (json-logic-js sub-operations)')
  refused(t, () => compileRule({ toString: 1 }), 'rule.toString', /unknown operation "toString"/, 'an inherited name')
  refused(t, () => compileRule(JSON.parse('{"__proto__": [1]}')), 'rule.__proto__', /unknown operation "__proto__"/, 'an own __proto__ key')
  refused(t, () => compileLogic({ or: [{ x: 1 }] }, {}, 'config.deny_if'), 'config.deny_if.or[0].x', /unknown operation "x"/, 'under a base path')
  bothThrow(t, { nope: 1 }, {}, /Unrecognized operation nope|unknown operation "nope"/)
})

t.test('deviation: "method" is refused at compile time wherever it appears', async (t) => {
  refused(t, () => compileRule({ method: ['abc', 'toUpperCase'] }), 'rule.method', /^operation "method" is not allowed: it calls arbitrary methods$/, 'at the top')
  refused(t, () => compileRule({ if: [false, { method: [{ var: 'a' }, 'constructor'] }] }), 'rule.if[1].method', /"method" is not allowed/, 'in an untaken branch')
})

// ---------------------------------------------------------------------------------------------------
// Hostile rules

function nestArrays (levels: number): unknown {
  let r: unknown = 1
  for (let i = 0; i < levels; i++) r = [r]
  return r
}

function nestNot (levels: number): unknown {
  let r: unknown = 1
  for (let i = 0; i < levels; i++) r = { '!': r }
  return r
}

t.test(`hostile rules: ${MAX_RULE_DEPTH} levels of nesting compile and evaluate; ${MAX_RULE_DEPTH + 1} are refused`, async (t) => {
  agree(t, nestArrays(MAX_RULE_DEPTH), {}, nestArrays(MAX_RULE_DEPTH))
  agree(t, nestNot(MAX_RULE_DEPTH), {}, true)
  agree(t, nestNot(MAX_RULE_DEPTH - 1), {}, false)
  const reason = new RegExp(`^rule is nested deeper than ${MAX_RULE_DEPTH} levels$`)
  refused(t, () => compileRule(nestArrays(MAX_RULE_DEPTH + 1)), 'rule', reason, `${MAX_RULE_DEPTH + 1} nested arrays`)
  refused(t, () => compileRule(nestNot(MAX_RULE_DEPTH + 1)), 'rule', reason, `${MAX_RULE_DEPTH + 1} nested operations`)
  let mixed: unknown = 1
  for (let i = 0; i < MAX_RULE_DEPTH / 2; i++) mixed = { '!': [mixed] }
  t.doesNotThrow(() => compileRule(mixed), `${MAX_RULE_DEPTH / 2} operations with argument arrays are ${MAX_RULE_DEPTH} levels: accepted`)
  refused(t, () => compileRule([mixed]), 'rule', reason, 'one more array level')
  refused(t, () => compileLogic({ and: [nestArrays(MAX_RULE_DEPTH)] }, {}, 'config.deny_if'), 'config.deny_if', reason, 'under a base path, the error names the root')
})

t.test('hostile rules: 200,000 nested operations are refused without a stack overflow', async (t) => {
  refused(t, () => compileRule(nestNot(200_000)), 'rule', /nested deeper than/, '200,000 nested operations')
  refused(t, () => compileRule(nestArrays(200_000)), 'rule', /nested deeper than/, '200,000 nested arrays')
})

t.test(`hostile rules: more than ${MAX_RULE_BYTES} bytes of JSON are refused, smaller rules are accepted`, async (t) => {
  const reason = new RegExp(`^rule is larger than ${MAX_RULE_BYTES} bytes of JSON$`)
  const catOf = (n: number): unknown => ({ cat: ['x'.repeat(n)] })
  const overhead = JSON.stringify(catOf(0)).length
  const small = catOf(MAX_RULE_BYTES - 64 - overhead)
  t.equal(JSON.stringify(small).length, MAX_RULE_BYTES - 64, 'the accepted rule is 64 bytes under the limit')
  t.equal((compileRule(small)({}) as string).length, MAX_RULE_BYTES - 64 - overhead, 'and compiles and evaluates')
  const big = catOf(MAX_RULE_BYTES + 1 - overhead)
  t.equal(JSON.stringify(big).length, MAX_RULE_BYTES + 1, 'the refused rule is one byte over')
  refused(t, () => compileRule(big), 'rule', reason, 'a long string')
  const exact = catOf(MAX_RULE_BYTES - overhead)
  t.ok((() => { try { compileRule(exact); return true } catch { return false } })(), `a rule of exactly ${MAX_RULE_BYTES} bytes of JSON is accepted`)
  const wide = { cat: ['é'.repeat(MAX_RULE_BYTES / 2)] }
  t.ok(Buffer.byteLength(JSON.stringify(wide)) > MAX_RULE_BYTES, 'a rule of non-ASCII text is over the limit in UTF-8 bytes')
  t.throws(() => compileRule(wide), JsonLogicCompileError, 'and is refused')
  refused(t, () => compileRule({ merge: Array.from({ length: 40_000 }, () => 1) }), 'rule', reason, 'many small numbers')
  refused(t, () => compileRule({ merge: Array.from({ length: 16_000 }, () => null) }), 'rule', reason, 'many nulls')
  refused(t, () => compileRule({ merge: Array.from({ length: 14_000 }, () => true) }), 'rule', reason, 'many booleans')
  refused(t, () => compileRule(Object.fromEntries(Array.from({ length: 8_000 }, (_, i) => [`key${i}`, 1]))), 'rule', reason, 'an object with many keys')
  refused(t, () => compileLogic({ or: [big] }, {}, 'config.allow_if'), 'config.allow_if', reason, 'under a base path')
})

t.test('hostile rules: values that are not JSON (function, bigint, symbol) are refused; undefined passes as a value', async (t) => {
  refused(t, () => compileRule({ '==': [() => 1, 1] }), 'rule', /^rule holds a function, which is not JSON$/, 'a function')
  refused(t, () => compileRule({ '==': [1n, 1] }), 'rule', /^rule holds a bigint, which is not JSON$/, 'a bigint')
  refused(t, () => compileRule([Symbol('s')]), 'rule', /^rule holds a symbol, which is not JSON$/, 'a symbol')
  refused(t, () => compileLogic({ and: [[[() => 1]]] }, {}, 'x.y'), 'x.y', /function/, 'deep inside, under a base path')
  agree(t, [undefined, 1], {}, [undefined, 1])
  agree(t, { var: undefined }, { a: 1 }, { a: 1 })
})

t.test('hostile rules: a rule with a getter that throws propagates that error unchanged', async (t) => {
  const rule = { get and () { throw new Error('getter boom') } }
  t.throws(() => compileRule(rule), { message: 'getter boom' }, 'compileRule')
  t.notOk((() => { try { compileRule(rule) } catch (e) { return e instanceof JsonLogicCompileError } return true })(), 'it is not turned into a compile error')
})

// ---------------------------------------------------------------------------------------------------
// Custom operations

t.test('custom operations: compiled once with their compiled arguments and path, evaluated with data and context', async (t) => {
  let compiled = 0
  const seen: Array<{ constant: boolean, value: unknown }> = []
  let seenPath = ''
  const twice: OperationSpec = {
    compile (args: CompiledArg[], path: string): Evaluator {
      compiled++
      seenPath = path
      for (const a of args) seen.push({ constant: a.constant, value: a.value })
      const f = args[0]?.fn
      if (f === undefined) throw new Error('twice needs an argument')
      return (d, c) => (f(d, c) as number) * 2
    }
  }
  const count: OperationSpec = {
    compile: () => (_d: unknown, c: EvalContext) => { c.n = ((c.n as number | undefined) ?? 0) + 1; return c.n }
  }
  const operations = new Map([['twice', twice], ['count', count]])
  const fn = compileLogic({ '+': [{ twice: [{ var: 'n' }, 'k', [1, 2]] }, 1] }, { operations })
  t.equal(fn({ n: 4 }, {}), 9, 'evaluates with the data')
  t.equal(fn({ n: 5 }, {}), 11, 'and again with other data')
  t.equal(compiled, 1, 'compiled once, evaluated many times')
  t.equal(seenPath, 'rule["+"][0].twice', 'compile receives the path of the node')
  t.strictSame(seen, [{ constant: false, value: undefined }, { constant: true, value: 'k' }, { constant: true, value: [1, 2] }],
    'arguments say whether they are constant, and give the constant value')
  t.equal(compileLogic({ twice: 21 }, { operations })(null, {}), 42, 'a single constant argument')
  const ctx: EvalContext = {}
  const counter = compileLogic({ '+': [{ count: [] }, { count: [] }] }, { operations })
  t.equal(counter({}, ctx), 3, 'the evaluation context is shared by the operations of one evaluation')
  t.equal(ctx.n, 2, 'and is the object the caller passed')
  t.equal(compileRule({ count: [] }, { operations })(), 1, 'compileRule gives every evaluation a fresh context')
  t.strictSame(compileLogic({ map: [[1, 2], { twice: { var: '' } }] }, { operations })({}, {}), [2, 4], 'inside map the operation sees the item')
  t.equal(compileLogic({ twice: { and: [{ var: 'a' }, { var: 'b' }] } }, { operations })({ a: 1, b: 4 }, {}), 8, 'an argument that needs temporaries')
})

t.test('custom operations: compile errors carry the rule path; evaluation errors propagate unchanged', async (t) => {
  const operations = new Map<string, OperationSpec>([
    ['needs_arg', { compile (args) { if (args.length === 0) throw new Error('needs an argument'); return () => true } }],
    ['bad_type', { compile () { throw new TypeError('pattern must be a string') } }],
    ['strict', { compile (_args, path) { throw new JsonLogicCompileError('custom reason', `${path}.inner`) } }],
    ['boom', { compile: () => () => { throw new RangeError('evaluation boom') } }]
  ])
  refused(t, () => compileLogic({ and: [{ needs_arg: [] }] }, { operations }), 'rule.and[0].needs_arg', /^needs an argument$/, 'a plain Error gets the path')
  refused(t, () => compileLogic({ if: [false, { bad_type: 1 }] }, { operations }, 'config.deny_if'), 'config.deny_if.if[1].bad_type', /^pattern must be a string$/, 'any Error, in an untaken branch, under a base path')
  refused(t, () => compileLogic({ strict: 1 }, { operations }), 'rule.strict.inner', /^custom reason$/, 'a JsonLogicCompileError is kept as it is')
  refused(t, () => compileLogic({ needs_arg: [{ nope: 1 }] }, { operations }), 'rule.needs_arg[0].nope', /unknown operation/, 'its arguments are checked too')
  refused(t, () => compileRule({ needs_arg: 1 }), 'rule.needs_arg', /unknown operation "needs_arg"/, 'custom operations exist only where given')
  // codegen.ts builds the reason from `(err as Error).message`, which a thrown non-Error does not have.
  const str = new Map<string, OperationSpec>([['str', { compile () { throw 'plain string' } }]])
  const thrown = t.throws(() => compileLogic({ str: 1 }, { operations: str }), JsonLogicCompileError,
    'a thrown non-Error still gives a compile error') as JsonLogicCompileError
  t.equal(thrown.path, 'rule.str', 'with the path of the node')
  t.match(String(thrown.reason), /plain string/, 'whose reason says what was thrown')
  const fn = compileLogic({ or: [{ boom: [] }] }, { operations })
  t.throws(() => fn({}, {}), new RangeError('evaluation boom'), 'an evaluation error is the operation\'s own')
})

t.test('in: literals searched in the same text across a batch agree with json-logic-js on every kind of text', async (t) => {
  const needles = ['secret', 'a.b', 'x|y', '(z', '[q]', '\\d', 'ünï', '😀', 'ab', 'b']
  const rules = needles.map((n) => ({ in: [n, { var: 'text' }] }))
  const texts: unknown[] = ['', 'nothing here', 'a secret', 'aXb', 'a.b', 'x|y', 'xy', '(z', 'z', '[q]', 'q', '\\d', 'd',
    'ünïcode', 'smile 😀', 'ab', 'b', ['secret', 'ab'], ['a'], 42, null, undefined, { indexOf: 1 }, true]
  const batch = compileLogicBatch(rules.map((rule, i) => ({ rule, path: `r[${i}]` })))
  for (const text of texts) {
    for (let i = 0; i < rules.length; i++) {
      const data = { text }
      const want = oracle(rules[i], data)
      let got: Outcome
      try {
        got = { kind: 'value', value: (batch[i] as Evaluator)(data, {}), logs: [] }
      } catch (error) {
        got = { kind: 'threw', error, logs: [] }
      }
      t.strictSame(summary(got), summary(want), `${show(rules[i])} on ${show(text)}`)
    }
  }
})

t.test('in: the group scan answers again for a text of equal content, and afresh for a new text', async (t) => {
  const [a, b] = compileLogicBatch([
    { rule: { in: ['alpha', { var: 'text' }] }, path: 'a' },
    { rule: { in: ['beta', { var: 'text' }] }, path: 'b' }
  ]) as [Evaluator, Evaluator]
  const texts = ['alpha', 'alp' + 'ha'.repeat(1), 'beta', 'gamma', 'alpha beta', 'gamma']
  const got = texts.map((text) => [a({ text }, {}), b({ text }, {})])
  t.strictSame(got, [[true, false], [true, false], [false, true], [false, false], [true, true], [false, false]])
})

t.test('in: literals past the group budget are searched one by one, with the same answers', async (t) => {
  const big = 'x'.repeat(9000)
  const [a, b] = compileLogicBatch([
    { rule: { in: [big + 'a', { var: 'text' }] }, path: 'a' },
    { rule: { in: [big + 'b', { var: 'text' }] }, path: 'b' }
  ]) as [Evaluator, Evaluator]
  t.equal(a({ text: `-${big}a-` }, {}), true)
  t.equal(b({ text: `-${big}a-` }, {}), false)
  t.equal(b({ text: `${big}b` }, {}), true)
})

t.test('in: a list written in the rule is searched with strict equality, as json-logic-js does', async (t) => {
  table(t, { s: 'b', n: 1, z: null }, [
    [{ in: [{ var: 's' }, ['a', 'b']] }, true],
    [{ in: [{ var: 'n' }, ['1', 2]] }, false],
    [{ in: [{ var: 'z' }, [null]] }, true],
    [{ in: [{ var: 'missing' }, []] }, false]
  ])
})

// ---------------------------------------------------------------------------------------------------
// Batches

t.test('compileLogicBatch: each rule gives its evaluator or its own compile error; one bad rule spoils nothing', async (t) => {
  const operations = new Map<string, OperationSpec>([
    ['twice', { compile: (args) => { const f = (args[0] as CompiledArg).fn; return (d, c) => (f(d, c) as number) * 2 } }]
  ])
  const out = compileLogicBatch([
    { rule: { twice: { var: 'n' } }, path: 'p[0]' },
    { rule: { and: [{ twice: { var: 'n' } }, { nope: 1 }] }, path: 'p[1].deny_if' },
    { rule: nestArrays(MAX_RULE_DEPTH + 1), path: 'p[2]' },
    { rule: { '+': [{ var: 'n' }, { twice: 1 }] }, path: 'p[3]' },
    { rule: { var: '__proto__' }, path: 'p[4]' }
  ], { operations })
  t.equal(out.length, 5, 'one entry per rule')
  t.equal((out[0] as Evaluator)({ n: 3 }, {}), 6, 'the first rule evaluates')
  t.match(out[1], { path: 'p[1].deny_if.and[1].nope', reason: 'unknown operation "nope"' }, 'the second is its compile error')
  t.type(out[1], JsonLogicCompileError)
  t.match(out[2], { path: 'p[2]', reason: /nested deeper/ }, 'the third is refused by the shape check')
  t.equal((out[3] as Evaluator)({ n: 3 }, {}), 5, 'the fourth, after two failures, still evaluates')
  t.match(out[4], { path: 'p[4].var', reason: /"__proto__"/ }, 'the fifth is refused')
  t.strictSame(compileLogicBatch([]), [], 'an empty batch gives an empty list')
  const [only] = compileLogicBatch([{ rule: { cat: ['a', { var: 'b' }] }, path: 'x' }])
  t.equal((only as Evaluator)({ b: 'c' }, {}), 'ac', 'default options')
})

t.test('compileLogicBatch: an error that is not a compile error (a throwing getter) propagates', async (t) => {
  const rule = { get and () { throw new Error('getter boom') } }
  t.throws(() => compileLogicBatch([{ rule: 1, path: 'a' }, { rule, path: 'b' }]), { message: 'getter boom' })
})

// ---------------------------------------------------------------------------------------------------
// Exported building blocks

t.test('JsonLogicCompileError: an Error whose message is "path: reason", with both kept', async (t) => {
  const e = new JsonLogicCompileError('bad', 'rule.x')
  t.ok(e instanceof Error)
  t.equal(e.message, 'rule.x: bad')
  t.equal(e.name, 'JsonLogicCompileError')
  t.equal(e.path, 'rule.x')
  t.equal(e.reason, 'bad')
})

t.test('childPath: identifiers join with a dot, indices in brackets, other keys as quoted strings', async (t) => {
  t.equal(childPath('rule', 0), 'rule[0]')
  t.equal(childPath('rule', 'and'), 'rule.and')
  t.equal(childPath('rule', '$x_1'), 'rule.$x_1')
  t.equal(childPath('rule', '1a'), 'rule["1a"]')
  t.equal(childPath('rule', 'a b'), 'rule["a b"]')
  t.equal(childPath('rule', '"'), 'rule["\\""]')
})

t.test('lookup and splitPath: the evaluation-time var', async (t) => {
  const data = { a: { b: [5, { c: null }] } }
  t.equal(lookup(data, 'a.b.0', 'nf'), 5, 'a dot path with an index')
  t.equal(lookup(data, 'a.b.1.c', 'nf'), null, 'a present null is returned')
  t.equal(lookup(data, 'a.b.1.c.d', 'nf'), 'nf', 'a null on the way gives the not-found value')
  t.equal(lookup(data, 'a.x', 'nf'), 'nf', 'an absent key gives the not-found value')
  t.equal(lookup(data, '', 'nf'), data, 'the empty path gives the data')
  t.equal(lookup(data, null, 'nf'), data, 'null gives the data')
  t.equal(lookup(data, undefined, 'nf'), data, 'undefined gives the data')
  t.equal(lookup(undefined, 'a', 'nf'), 'nf', 'undefined data')
  t.equal(lookup('abc', 1, 'nf'), 'b', 'a number path on a string')
  t.equal(lookup({}, 'toString', 'nf'), 'nf', 'inherited properties are not read')
  t.throws(() => lookup({}, 'x.prototype', 'nf'), { message: 'var: path segment "prototype" is not allowed' })
  t.strictSame(splitPath('a.b'), ['a', 'b'])
  t.strictSame(splitPath(1.5), ['1', '5'])
  t.strictSame(splitPath(['a', 'b']), ['a,b'])
})

t.test('inOp: string, array, falsy, non-object and object containers', async (t) => {
  t.equal(inOp('b', 'abc'), true)
  t.equal(inOp('d', 'abc'), false)
  t.equal(inOp(1, [1]), true)
  t.equal(inOp('1', [1]), false)
  t.equal(inOp('a', ''), false)
  t.equal(inOp('a', 0), false)
  t.equal(inOp('a', 7), false)
  t.equal(inOp('a', {}), false)
  t.throws(() => inOp('a', { indexOf: 0 }), new TypeError('b.indexOf is not a function'))
})

t.test('deepFreeze: freezes nested objects and arrays, leaves primitives, returns its argument', async (t) => {
  const v = { a: [1, { b: 2 }], c: null }
  t.equal(deepFreeze(v), v)
  t.ok(Object.isFrozen(v) && Object.isFrozen(v.a) && Object.isFrozen(v.a[1]))
  t.equal(deepFreeze(3), 3)
  t.equal(deepFreeze(null), null)
})

t.test('PLAIN, SCOPED, REFUSED, FORBIDDEN_SEGMENTS: the operation tables cover json-logic-js 2.x exactly', async (t) => {
  const jsOps = ['==', '===', '!=', '!==', '>', '>=', '<', '<=', '!!', '!', '%', '/', '-', '+', '*', 'min', 'max', 'cat', 'substr', 'in', 'merge', 'missing', 'missing_some']
  t.strictSame([...PLAIN.keys()].sort(), [...jsOps].sort(), 'the plain operations')
  t.strictSame([...SCOPED].sort(), ['all', 'filter', 'map', 'none', 'reduce', 'some'], 'the scoped operations')
  t.strictSame([...REFUSED.keys()], ['method'], 'the refused operations')
  t.strictSame([...FORBIDDEN_SEGMENTS].sort(), ['__proto__', 'constructor', 'prototype'], 'the forbidden path segments')
  const plus = PLAIN.get('+') as (a: unknown[], d: unknown) => unknown
  t.equal(plus(['1', 2], null), 3, 'a plain operation can be called directly')
})
