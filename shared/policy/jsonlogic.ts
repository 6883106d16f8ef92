/* eslint-disable eqeqeq -- JSON-logic's `==` and `!=` are JavaScript's loose equality */
/**
 * A JSON-logic compiler with the semantics of json-logic-js 2.x.
 *
 * `compileRule(rule)` walks the rule once and returns a function generated for it (codegen.ts);
 * evaluation never looks at the JSON again. Deliberate differences from json-logic-js, all for safety:
 * - unknown operations (and `method`) are compile errors, even in branches that would never run;
 * - `var` never reads an inherited method, nor a value inherited from Object.prototype (so neither
 *   builtins nor a polluted Object.prototype reach a rule); the path segments
 *   `__proto__`, `constructor` and `prototype` are refused (at compile time when the path is written in
 *   the rule, at evaluation time when it is computed);
 * - data is never interpreted as logic (json-logic-js does so for keys handed to `missing`);
 * - `log` calls `options.log` instead of `console.log`;
 * - rules nested deeper than 64 levels or larger than 64 KiB of JSON are refused.
 */

import { Generator } from './codegen.js'

/** Per-evaluation state handed to every closure; custom operations keep their state here. */
export type EvalContext = Record<string, unknown>

/** A compiled rule: data in, value out. */
export type Evaluator = (data: unknown, ctx: EvalContext) => unknown

/** A compiled argument of an operation, with its value when it is a constant. */
export interface CompiledArg {
  fn: Evaluator
  constant: boolean
  value: unknown
}

/** What an operation in the value form knows of an argument at compile time. */
export interface ArgShape {
  constant: boolean
  /** The argument's value when it is constant. */
  value: unknown
}

/** A compiled operation in the value form: the evaluation context, then the evaluated arguments. */
export type ValueOperation = (ctx: EvalContext, ...values: unknown[]) => unknown

/**
 * A custom operation, built once at compile time, in one of two forms. Either throws (any Error) to
 * refuse its arguments; the compiler adds the rule path to the message.
 * - `values` (preferred): every argument is evaluated, in order, by the generated code, which then
 *   calls the returned function with the context and the values (json-logic-js's own calling
 *   convention for added operations, and the fastest: no closure per argument).
 * - `compile`: receives a function per argument and decides when to evaluate each (lazy arguments).
 */
export interface OperationSpec {
  values?(args: ArgShape[], path: string): ValueOperation
  compile?(args: CompiledArg[], path: string): Evaluator
}

export type OperationTable = ReadonlyMap<string, OperationSpec>

export interface CompileOptions {
  /** Extra operations (the policy engine's glob, regex, domain, PII and counter operations). */
  operations?: OperationTable
  /** Receives the values of `log` operations. Default: discarded. */
  log?: (value: unknown) => void
}

export const MAX_RULE_DEPTH = 64
export const MAX_RULE_BYTES = 64 * 1024
export const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])

export class JsonLogicCompileError extends Error {
  /** Where in the rule: `rule.and[1].var`, or below the base path the caller gave. */
  readonly path: string
  /** The message without the path. */
  readonly reason: string
  constructor (reason: string, path: string) {
    super(`${path}: ${reason}`)
    this.name = 'JsonLogicCompileError'
    this.path = path
    this.reason = reason
  }
}

/** JSON-logic truthiness: JavaScript's, except that an empty array is falsy. */
export function truthy (value: unknown): boolean {
  if (Array.isArray(value) && value.length === 0) return false
  return !!value
}

const hasOwn = Object.hasOwn

const OBJECT_PROTO = Object.prototype as unknown as Record<string, unknown>

/**
 * One property step of `var`: `undefined` when absent, and for an inherited method or a value
 * inherited from Object.prototype. One property load, and hasOwn only for a value that may be
 * inherited (a function, or the value Object.prototype holds under the key): data parsed from JSON
 * never holds functions, so an ordinary value costs no call. The generated code does the same.
 */
function step (obj: unknown, key: string): unknown {
  // obj is never null or undefined here; primitives answer for their own indices and length.
  const v = (obj as Record<string, unknown>)[key]
  if (v === undefined) return undefined
  return (typeof v === 'function' || v === OBJECT_PROTO[key]) && !hasOwn(obj as object, key) ? undefined : v
}

export function splitPath (path: unknown): string[] {
  return String(path).split('.')
}

function forbiddenSegment (segments: string[]): string | undefined {
  return segments.find((s) => FORBIDDEN_SEGMENTS.has(s))
}

/** `var` with a path computed at evaluation time. */
export function lookup (data: unknown, path: unknown, notFound: unknown): unknown {
  if (path === undefined || path === null || path === '') return data
  const segments = splitPath(path)
  const bad = forbiddenSegment(segments)
  if (bad !== undefined) throw new Error(`var: path segment "${bad}" is not allowed`)
  return walk(data, segments, notFound)
}

function walk (data: unknown, segments: string[], notFound: unknown): unknown {
  let cur = data
  for (let i = 0; i < segments.length; i++) {
    if (cur === null || cur === undefined) return notFound
    cur = step(cur, segments[i] as string)
    if (cur === undefined) return notFound
  }
  return cur
}

/** The keys `missing` reports, given its evaluated arguments. */
function missingKeys (data: unknown, args: unknown[]): unknown[] {
  const keys = Array.isArray(args[0]) ? (args[0] as unknown[]) : args
  const out: unknown[] = []
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]
    let value: unknown
    if (Array.isArray(key)) {
      const dflt = key[1]
      value = lookup(data, key[0], dflt === undefined ? null : dflt)
    } else {
      value = lookup(data, key, null)
    }
    if (value === null || value === '') out.push(key)
  }
  return out
}

function toFloat (v: unknown): number {
  // parseFloat(n) for a number n is n itself, except that -0 prints as "0".
  if (typeof v === 'number') return v === 0 ? 0 : v
  return parseFloat(v as string)
}

export function inOp (a: unknown, b: unknown): boolean {
  if (!b) return false
  if (typeof b === 'string') return b.indexOf(a as string) !== -1
  if (Array.isArray(b)) return b.indexOf(a) !== -1
  if (typeof b !== 'object') return false
  // json-logic-js calls b.indexOf; a plain data object has none, or a data value that is not a function.
  const f = (b as Record<string, unknown>).indexOf
  if (f === undefined) return false
  throw new TypeError('b.indexOf is not a function')
}

function substrOp (source: unknown, start: unknown, end: unknown): string {
  const s = String(source)
  if ((end as number) < 0) {
    const temp = s.substr(start as number)
    return temp.substr(0, temp.length + (end as number))
  }
  return s.substr(start as number, end as number)
}

type Args = unknown[]
/** Plain operations: every argument is evaluated first, then the function is applied. */
export const PLAIN: ReadonlyMap<string, (args: Args, data: unknown) => unknown> = new Map<string, (args: Args, data: unknown) => unknown>([
  ['==', (a) => a[0] == a[1]],
  ['===', (a) => a[0] === a[1]],
  ['!=', (a) => a[0] != a[1]],
  ['!==', (a) => a[0] !== a[1]],
  ['>', (a) => (a[0] as number) > (a[1] as number)],
  ['>=', (a) => (a[0] as number) >= (a[1] as number)],
  ['<', (a) => a[2] === undefined
    ? (a[0] as number) < (a[1] as number)
    : (a[0] as number) < (a[1] as number) && (a[1] as number) < (a[2] as number)],
  ['<=', (a) => a[2] === undefined
    ? (a[0] as number) <= (a[1] as number)
    : (a[0] as number) <= (a[1] as number) && (a[1] as number) <= (a[2] as number)],
  ['!!', (a) => truthy(a[0])],
  ['!', (a) => !truthy(a[0])],
  ['%', (a) => (a[0] as number) % (a[1] as number)],
  ['/', (a) => (a[0] as number) / (a[1] as number)],
  ['-', (a) => a[1] === undefined ? -(a[0] as number) : (a[0] as number) - (a[1] as number)],
  ['+', (a) => {
    let acc = 0
    for (let i = 0; i < a.length; i++) acc = toFloat(acc) + toFloat(a[i])
    return acc
  }],
  ['*', (a) => {
    if (a.length === 0) throw new TypeError('Reduce of empty array with no initial value')
    let acc: unknown = a[0]
    for (let i = 1; i < a.length; i++) acc = toFloat(acc) * toFloat(a[i])
    return acc
  }],
  ['min', (a) => Math.min(...(a as number[]))],
  ['max', (a) => Math.max(...(a as number[]))],
  ['cat', (a) => a.join('')],
  ['substr', (a) => substrOp(a[0], a[1], a[2])],
  ['in', (a) => inOp(a[0], a[1])],
  ['merge', (a) => ([] as unknown[]).concat(...a)],
  ['missing', (a, d) => missingKeys(d, a)],
  ['missing_some', (a, d) => {
    const options = a[1] as { length: number }
    const missing = missingKeys(d, Array.isArray(options) ? options : [options])
    // Throws, as json-logic-js does, when options is null or undefined.
    return options.length - missing.length >= (a[0] as number) ? [] : missing
  }]
])

export const SCOPED: ReadonlySet<string> = new Set(['map', 'filter', 'reduce', 'all', 'none', 'some'])
export const REFUSED: ReadonlyMap<string, string> = new Map([
  ['method', 'operation "method" is not allowed: it calls arbitrary methods']
])

export function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

export function childPath (path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/** Printable ASCII but `"` and `\`: written in JSON as they are. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/

function jsonBytes (s: string): number {
  return PLAIN_JSON_TEXT.test(s) ? s.length + 2 : Buffer.byteLength(JSON.stringify(s))
}

/** Iterative pre-pass: refuses non-JSON values, rules deeper than MAX_RULE_DEPTH or larger than MAX_RULE_BYTES. */
function checkShape (rule: unknown, path: string): void {
  const stack: Array<[unknown, number]> = [[rule, 1]]
  let bytes = 0
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    const t = typeof node
    // Bytes of the rule's JSON text: strings as written (escaped, UTF-8), one separator between items.
    if (t === 'string') bytes += jsonBytes(node as string)
    else if (t === 'number' || t === 'boolean') bytes += String(node).length
    else if (node === null || node === undefined) bytes += 4
    else if (t === 'object') {
      if (depth > MAX_RULE_DEPTH) {
        throw new JsonLogicCompileError(`rule is nested deeper than ${MAX_RULE_DEPTH} levels`, path)
      }
      if (Array.isArray(node)) {
        bytes += 2 + Math.max(0, node.length - 1)
        for (const v of node) stack.push([v, depth + 1])
      } else {
        const entries = Object.entries(node as object)
        for (const [k, v] of entries) {
          bytes += jsonBytes(k) + 2 // the colon and the comma
          stack.push([v, depth + 1])
        }
        bytes += entries.length > 0 ? 1 : 2 // the braces, less the comma the last entry does not have
      }
    } else {
      throw new JsonLogicCompileError(`rule holds a ${t}, which is not JSON`, path)
    }
    if (bytes > MAX_RULE_BYTES) {
      throw new JsonLogicCompileError(`rule is larger than ${MAX_RULE_BYTES} bytes of JSON`, path)
    }
  }
}

/**
 * Compiles a rule to a two-argument evaluator (data, per-evaluation context). `basePath` prefixes
 * the paths in compile errors (the policy engine passes `config.deny_if`).
 */
export function compileLogic (rule: unknown, options: CompileOptions = {}, basePath = 'rule'): Evaluator {
  checkShape(rule, basePath)
  const g = new Generator(options)
  const index = g.addRoot(rule, basePath)
  return g.materialise()[index] as Evaluator
}

/**
 * Compiles many rules with one code-generation pass (a policy set). Each entry is the evaluator of its
 * rule, or the JsonLogicCompileError that refused it; one bad rule does not affect the others.
 */
export function compileLogicBatch (rules: ReadonlyArray<{ rule: unknown, path: string }>, options: CompileOptions = {}): Array<Evaluator | JsonLogicCompileError> {
  const g = new Generator(options)
  const slots = rules.map(({ rule, path }) => {
    try {
      checkShape(rule, path)
      return g.addRoot(rule, path)
    } catch (err) {
      if (err instanceof JsonLogicCompileError) return err
      throw err
    }
  })
  const fns = g.materialise()
  return slots.map((slot) => typeof slot === 'number' ? fns[slot] as Evaluator : slot)
}

/** Compiles a rule once; the returned function evaluates it against a data document. */
export function compileRule (rule: unknown, options: CompileOptions = {}): (data?: unknown) => unknown {
  const fn = compileLogic(rule, options)
  return (data) => fn(data, {})
}
