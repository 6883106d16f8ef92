/* eslint-disable eqeqeq -- JSON-logic's `==` and `!=` are JavaScript's loose equality */
/**
 * A JSON-logic compiler with the semantics of json-logic-js 2.x.
 *
 * `compileRule(rule)` walks the rule once and returns a closure; evaluation never looks at the JSON
 * again. Deliberate differences from json-logic-js, all for safety:
 * - unknown operations (and `method`) are compile errors, even in branches that would never run;
 * - `var` reads own properties only (plus string and array indices and `length`); the path segments
 *   `__proto__`, `constructor` and `prototype` are refused (at compile time when the path is written in
 *   the rule, at evaluation time when it is computed);
 * - data is never interpreted as logic (json-logic-js does so for keys handed to `missing`);
 * - `log` calls `options.log` instead of `console.log`;
 * - rules nested deeper than 64 levels or larger than 64 KiB of JSON are refused.
 */

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

/** A custom operation: builds its evaluator from its compiled arguments, once, at compile time. */
export interface OperationSpec {
  /** Throws (any Error) to refuse the arguments; the compiler adds the rule path to the message. */
  compile(args: CompiledArg[], path: string): Evaluator
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

/** One property step of `var`: own properties only, `undefined` when absent. */
function step (obj: unknown, key: string): unknown {
  // obj is never null or undefined here; primitives answer for their own indices and length.
  return hasOwn(obj as object, key) ? (obj as Record<string, unknown>)[key] : undefined
}

function splitPath (path: unknown): string[] {
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

/** A `var` with a path known at compile time, specialised for short paths. */
function staticVar (segments: string[], notFound: Evaluator | null, notFoundConst: unknown): Evaluator {
  if (notFound === null) {
    const nf = notFoundConst
    if (segments.length === 1) {
      const k = segments[0] as string
      return (d) => {
        if (d === null || d === undefined) return nf
        const v = step(d, k)
        return v === undefined ? nf : v
      }
    }
    if (segments.length === 2) {
      const k0 = segments[0] as string
      const k1 = segments[1] as string
      return (d) => {
        if (d === null || d === undefined) return nf
        const v0 = step(d, k0)
        if (v0 === undefined || v0 === null) return nf
        const v1 = step(v0, k1)
        return v1 === undefined ? nf : v1
      }
    }
    return (d) => walk(d, segments, nf)
  }
  return (d, c) => {
    const b = notFound(d, c)
    return walk(d, segments, b === undefined ? null : b)
  }
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

function inOp (a: unknown, b: unknown): boolean {
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
const PLAIN: ReadonlyMap<string, (args: Args, data: unknown) => unknown> = new Map<string, (args: Args, data: unknown) => unknown>([
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

const SCOPED = new Set(['map', 'filter', 'reduce', 'all', 'none', 'some'])
const REFUSED: ReadonlyMap<string, string> = new Map([
  ['method', 'operation "method" is not allowed: it calls arbitrary methods']
])

function constNode (value: unknown): CompiledArg {
  return { fn: () => value, constant: true, value }
}

function deepFreeze<T> (value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

function childPath (path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/** Iterative pre-pass: refuses non-JSON values, rules deeper than MAX_RULE_DEPTH or larger than MAX_RULE_BYTES. */
function checkShape (rule: unknown, path: string): void {
  const stack: Array<[unknown, number]> = [[rule, 1]]
  let bytes = 0
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    const t = typeof node
    if (t === 'string') bytes += (node as string).length + 2
    else if (t === 'number' || t === 'boolean') bytes += String(node).length
    else if (node === null || node === undefined) bytes += 4
    else if (t === 'object') {
      if (depth > MAX_RULE_DEPTH) {
        throw new JsonLogicCompileError(`rule is nested deeper than ${MAX_RULE_DEPTH} levels`, path)
      }
      if (Array.isArray(node)) {
        bytes += 2 + node.length
        for (const v of node) stack.push([v, depth + 1])
      } else {
        for (const [k, v] of Object.entries(node as object)) {
          bytes += k.length + 4
          stack.push([v, depth + 1])
        }
        bytes += 2
      }
    } else {
      throw new JsonLogicCompileError(`rule holds a ${t}, which is not JSON`, path)
    }
    if (bytes > MAX_RULE_BYTES) {
      throw new JsonLogicCompileError(`rule is larger than ${MAX_RULE_BYTES} bytes of JSON`, path)
    }
  }
}

class Compiler {
  private readonly ops: OperationTable | undefined
  private readonly log: (value: unknown) => void

  constructor (options: CompileOptions) {
    this.ops = options.operations
    this.log = options.log ?? (() => {})
  }

  node (rule: unknown, path: string): CompiledArg {
    if (Array.isArray(rule)) return this.array(rule, path)
    if (rule === null || typeof rule !== 'object') return constNode(rule)
    const keys = Object.keys(rule)
    // Objects with zero or several keys are values, returned as written.
    if (keys.length !== 1) return constNode(deepFreeze(structuredClone(rule)))
    const op = keys[0] as string
    const raw = (rule as Record<string, unknown>)[op]
    const values = Array.isArray(raw) ? raw : [raw]
    const opPath = childPath(path, op)
    const argPath = (i: number): string => Array.isArray(raw) ? childPath(opPath, i) : opPath
    return { fn: this.operation(op, values, opPath, argPath), constant: false, value: undefined }
  }

  private array (rule: unknown[], path: string): CompiledArg {
    const items = rule.map((r, i) => this.node(r, childPath(path, i)))
    if (items.every((n) => n.constant)) return constNode(Object.freeze(items.map((n) => n.value)))
    const fns = items.map((n) => n.fn)
    return {
      fn: (d, c) => {
        const out = new Array(fns.length)
        for (let i = 0; i < fns.length; i++) out[i] = (fns[i] as Evaluator)(d, c)
        return out
      },
      constant: false,
      value: undefined
    }
  }

  private args (values: unknown[], argPath: (i: number) => string): CompiledArg[] {
    return values.map((v, i) => this.node(v, argPath(i)))
  }

  private operation (op: string, values: unknown[], path: string, argPath: (i: number) => string): Evaluator {
    const refused = REFUSED.get(op)
    if (refused !== undefined) throw new JsonLogicCompileError(refused, path)
    switch (op) {
      case 'if':
      case '?:':
        return this.ifOp(this.args(values, argPath))
      case 'and':
      case 'or':
        return this.andOr(op, this.args(values, argPath))
      case 'var':
        return this.varOp(this.args(values, argPath), path)
      case 'log': {
        const args = this.args(values, argPath)
        const log = this.log
        return this.plain(args, (a) => { log(a[0]); return a[0] })
      }
    }
    if (SCOPED.has(op)) return this.scoped(op, this.args(values, argPath))
    const plain = PLAIN.get(op)
    if (plain !== undefined) {
      const args = this.args(values, argPath)
      if (op === 'missing') this.checkStaticKeys(args, path)
      return this.plain(args, plain)
    }
    const custom = this.ops?.get(op)
    if (custom !== undefined) {
      const args = this.args(values, argPath)
      try {
        return custom.compile(args, path)
      } catch (err) {
        if (err instanceof JsonLogicCompileError) throw err
        throw new JsonLogicCompileError((err as Error).message, path)
      }
    }
    throw new JsonLogicCompileError(`unknown operation "${op}"`, path)
  }

  /** Evaluates every argument, then applies fn; specialised for the common arities. */
  private plain (args: CompiledArg[], fn: (a: Args, data: unknown) => unknown): Evaluator {
    const fns = args.map((a) => a.fn)
    if (fns.length === 0) return (d) => fn([], d)
    if (fns.length === 1) {
      const f0 = fns[0] as Evaluator
      return (d, c) => fn([f0(d, c)], d)
    }
    if (fns.length === 2) {
      const f0 = fns[0] as Evaluator
      const f1 = fns[1] as Evaluator
      return (d, c) => fn([f0(d, c), f1(d, c)], d)
    }
    return (d, c) => {
      const a = new Array(fns.length)
      for (let i = 0; i < fns.length; i++) a[i] = (fns[i] as Evaluator)(d, c)
      return fn(a, d)
    }
  }

  private ifOp (args: CompiledArg[]): Evaluator {
    const fns = args.map((a) => a.fn)
    if (fns.length === 0) return () => null
    if (fns.length === 1) return fns[0] as Evaluator
    if (fns.length === 3) {
      const [c0, t0, e0] = fns as [Evaluator, Evaluator, Evaluator]
      return (d, c) => truthy(c0(d, c)) ? t0(d, c) : e0(d, c)
    }
    const n = fns.length
    return (d, c) => {
      let i = 0
      for (; i < n - 1; i += 2) {
        if (truthy((fns[i] as Evaluator)(d, c))) return (fns[i + 1] as Evaluator)(d, c)
      }
      return i === n - 1 ? (fns[i] as Evaluator)(d, c) : null
    }
  }

  private andOr (op: 'and' | 'or', args: CompiledArg[]): Evaluator {
    const fns = args.map((a) => a.fn)
    const wantTruthy = op === 'or'
    return (d, c) => {
      let current: unknown
      for (let i = 0; i < fns.length; i++) {
        current = (fns[i] as Evaluator)(d, c)
        if (truthy(current) === wantTruthy) return current
      }
      return current
    }
  }

  private varOp (args: CompiledArg[], path: string): Evaluator {
    const [pathArg, dfltArg] = args
    const rest = args.slice(2).map((a) => a.fn)
    let fn: Evaluator
    if (pathArg === undefined || pathArg.constant) {
      const p = pathArg?.value
      if (p === undefined || p === null || p === '') {
        fn = (d) => d
      } else {
        const segments = splitPath(p)
        const bad = forbiddenSegment(segments)
        if (bad !== undefined) throw new JsonLogicCompileError(`path segment "${bad}" is not allowed`, path)
        if (dfltArg === undefined || dfltArg.constant) {
          const v = dfltArg?.value
          fn = staticVar(segments, null, v === undefined ? null : v)
        } else {
          fn = staticVar(segments, dfltArg.fn, undefined)
        }
      }
      // An empty path ignores the default, but json-logic-js still evaluates it.
      if ((p === undefined || p === null || p === '') && dfltArg !== undefined && !dfltArg.constant) {
        const f = fn
        const df = dfltArg.fn
        fn = (d, c) => { df(d, c); return f(d, c) }
      }
    } else {
      const pf = pathArg.fn
      const df = dfltArg?.fn
      fn = (d, c) => {
        const p = pf(d, c)
        const b = df === undefined ? undefined : df(d, c)
        return lookup(d, p, b === undefined ? null : b)
      }
    }
    if (rest.length === 0) return fn
    const main = fn
    return (d, c) => {
      const v = main(d, c)
      for (const r of rest) r(d, c)
      return v
    }
  }

  /** `missing` keys written in the rule are checked for forbidden segments at compile time. */
  private checkStaticKeys (args: CompiledArg[], path: string): void {
    const consts = args.filter((a) => a.constant).map((a) => a.value)
    const keys: unknown[] = []
    for (const v of consts) {
      if (Array.isArray(v)) {
        for (const k of v) keys.push(Array.isArray(k) ? k[0] : k)
      } else keys.push(v)
    }
    for (const k of keys) {
      if (k === null || k === undefined) continue
      const bad = forbiddenSegment(splitPath(k))
      if (bad !== undefined) throw new JsonLogicCompileError(`path segment "${bad}" is not allowed`, path)
    }
  }

  private scoped (op: string, args: CompiledArg[]): Evaluator {
    const src = args[0]?.fn ?? (() => undefined)
    const logic = args[1]?.fn ?? (() => undefined)
    switch (op) {
      case 'map':
        return (d, c) => {
          const arr = src(d, c)
          if (!Array.isArray(arr)) return []
          const out = new Array(arr.length)
          for (let i = 0; i < arr.length; i++) out[i] = logic(arr[i], c)
          return out
        }
      case 'filter':
        return (d, c) => {
          const arr = src(d, c)
          if (!Array.isArray(arr)) return []
          const out: unknown[] = []
          for (let i = 0; i < arr.length; i++) if (truthy(logic(arr[i], c))) out.push(arr[i])
          return out
        }
      case 'reduce': {
        const init = args[2]?.fn
        return (d, c) => {
          const arr = src(d, c)
          let acc = init === undefined ? null : init(d, c)
          if (!Array.isArray(arr)) return acc
          for (let i = 0; i < arr.length; i++) acc = logic({ current: arr[i], accumulator: acc }, c)
          return acc
        }
      }
      case 'all':
        return (d, c) => {
          const arr = src(d, c)
          if (!Array.isArray(arr) || arr.length === 0) return false
          for (let i = 0; i < arr.length; i++) if (!truthy(logic(arr[i], c))) return false
          return true
        }
      case 'none':
        return (d, c) => {
          const arr = src(d, c)
          if (!Array.isArray(arr) || arr.length === 0) return true
          for (let i = 0; i < arr.length; i++) if (truthy(logic(arr[i], c))) return false
          return true
        }
      default: // some
        return (d, c) => {
          const arr = src(d, c)
          if (!Array.isArray(arr) || arr.length === 0) return false
          for (let i = 0; i < arr.length; i++) if (truthy(logic(arr[i], c))) return true
          return false
        }
    }
  }
}

/**
 * Compiles a rule to a two-argument evaluator (data, per-evaluation context). `basePath` prefixes
 * the paths in compile errors (the policy engine passes `config.deny_if`).
 */
export function compileLogic (rule: unknown, options: CompileOptions = {}, basePath = 'rule'): Evaluator {
  checkShape(rule, basePath)
  return new Compiler(options).node(rule, basePath).fn
}

/** Compiles a rule once; the returned function evaluates it against a data document. */
export function compileRule (rule: unknown, options: CompileOptions = {}): (data?: unknown) => unknown {
  const fn = compileLogic(rule, options)
  return (data) => fn(data, {})
}
