/**
 * The JSON-logic code generator: turns rules into JavaScript source, then into functions with one
 * `new Function` call for a whole batch (a policy set compiles in one go).
 *
 * Why source and not closures: V8 shares the type feedback of closures made by the same function, so
 * a tree of generic closures ends up megamorphic at every call and property access. Generated code
 * gives every rule its own, monomorphic, inlinable code: measured 4-10x faster here.
 *
 * Safety of the generated source: nothing from a rule is ever written into it except through
 * `JSON.stringify` of a string (a valid, inert JavaScript string literal) or a finite integer; every
 * other constant is passed in the array `K` and referenced by index. Generated identifiers are the
 * generator's own (`d`, `c`, `t<n>`, `x<n>`, `F`, `K`, `H`, `own`, `OP`).
 */
import {
  FORBIDDEN_SEGMENTS, JsonLogicCompileError, PLAIN, REFUSED, SCOPED, childPath, deepFreeze, inOp, lookup,
  splitPath, truthy, type CompileOptions, type CompiledArg, type EvalContext, type Evaluator, type OperationSpec
} from './jsonlogic.js'

/** A generated expression: its source, and its value when it is a constant. */
interface Expr {
  code: string
  constant: boolean
  value: unknown
  /** For a `var` with a path written in the rule: what it reads, so equal reads can be grouped. */
  reads?: string
  /** The value is always a boolean (its truthiness needs no H.t). */
  bool?: boolean
}

/**
 * The constant strings that `in` looks for in one haystack (the same `var`), across the rules of a
 * batch. When a batch searches one text for several literals, one scan with all of them (a regular
 * expression of the escaped literals) tells whether any occurs: on most texts none does, and every
 * search of the group is answered by that one scan. The answer is kept for the last haystack value.
 */
class LiteralGroup {
  readonly needles = new Set<string>()
  rx: RegExp | null = null
  hay: string | null = null
  any = false
}

/** Literals longer than this in all are not combined (plain searches instead). */
const MAX_GROUP_CHARS = 16 * 1024

function escapeRegExp (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
}

/** One function being generated: its data variable and its temporaries. */
interface Scope {
  data: string
  temps: string[]
}

type ScopedFn = (item: unknown) => unknown

/** Helpers the generated code calls (as `H.x`). */
const HELPERS = Object.freeze({
  t: truthy,
  s: (v: unknown): string => v === null || v === undefined ? '' : String(v),
  lookup,
  inOp,
  /** `needle` (a constant, non-empty string) in the string `hay`, answered by the group's scan first. */
  lit (g: LiteralGroup, hay: string, needle: string): boolean {
    const rx = g.rx
    if (rx === null) return hay.indexOf(needle) !== -1
    if (hay !== g.hay) {
      g.any = rx.test(hay)
      g.hay = hay
    }
    return g.any && hay.indexOf(needle) !== -1
  },
  map (arr: unknown, f: ScopedFn): unknown[] {
    if (!Array.isArray(arr)) return []
    const out = new Array(arr.length)
    for (let i = 0; i < arr.length; i++) out[i] = f(arr[i])
    return out
  },
  filter (arr: unknown, f: ScopedFn): unknown[] {
    if (!Array.isArray(arr)) return []
    const out: unknown[] = []
    for (let i = 0; i < arr.length; i++) if (truthy(f(arr[i]))) out.push(arr[i])
    return out
  },
  reduce (arr: unknown, f: ScopedFn, init: unknown): unknown {
    let acc = init
    if (!Array.isArray(arr)) return acc
    for (let i = 0; i < arr.length; i++) acc = f({ current: arr[i], accumulator: acc })
    return acc
  },
  all (arr: unknown, f: ScopedFn): boolean {
    if (!Array.isArray(arr) || arr.length === 0) return false
    for (let i = 0; i < arr.length; i++) if (!truthy(f(arr[i]))) return false
    return true
  },
  none (arr: unknown, f: ScopedFn): boolean {
    if (!Array.isArray(arr) || arr.length === 0) return true
    for (let i = 0; i < arr.length; i++) if (truthy(f(arr[i]))) return false
    return true
  },
  some (arr: unknown, f: ScopedFn): boolean {
    if (!Array.isArray(arr) || arr.length === 0) return false
    for (let i = 0; i < arr.length; i++) if (truthy(f(arr[i]))) return true
    return false
  }
})

/** Binary operations written as JavaScript operators when given exactly two arguments. */
const INFIX: ReadonlyMap<string, string> = new Map([
  ['==', '=='], ['===', '==='], ['!=', '!='], ['!==', '!=='], ['>', '>'], ['>=', '>='], ['<', '<'], ['<=', '<='],
  ['%', '%'], ['/', '/']
])

const IDENT_SAFE_INT = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && !Object.is(v, -0)

function forbidden (path: unknown): string | undefined {
  return splitPath(path).find((s) => FORBIDDEN_SEGMENTS.has(s))
}

export class Generator {
  /** Constants referenced by the code as K[i]. */
  private readonly consts: unknown[] = []
  private readonly functions: string[] = []
  /** Slots of functions handed to custom operations before the batch is materialised. */
  private readonly slots: Array<{ index: number, fn: Evaluator | null }> = []
  private readonly literalGroups = new Map<string, LiteralGroup>()
  /**
   * The last generated expression known to be a boolean. An operation marks its code just before
   * returning it, so `expr` recognises it by identity (no hashing of long code strings).
   */
  private lastBoolean: string | null = null
  private counter = 0

  constructor (private readonly options: CompileOptions) {}

  private k (value: unknown): string {
    if (value === null) return 'null'
    if (value === true || value === false) return String(value)
    if (IDENT_SAFE_INT(value) && Math.abs(value) < 1e15) return value < 0 ? `(${value})` : String(value)
    if (typeof value === 'string' && value.length <= 200) return JSON.stringify(value)
    this.consts.push(value)
    return `K[${this.consts.length - 1}]`
  }

  private constant (value: unknown): Expr {
    return { code: this.k(value), constant: true, value }
  }

  private tmp (s: Scope): string {
    const name = `t${this.counter++}`
    s.temps.push(name)
    return name
  }

  /** Adds a function for `rule`; returns its index in the batch. Throws JsonLogicCompileError. */
  addRoot (rule: unknown, path: string): number {
    const s: Scope = { data: 'd', temps: [] }
    const e = this.expr(rule, path, s)
    return this.pushFunction(`function (d, c) { ${s.temps.length > 0 ? `let ${s.temps.join(', ')}; ` : ''}return ${e.code} }`)
  }

  private pushFunction (source: string): number {
    this.functions.push(source)
    return this.functions.length - 1
  }

  /** Builds every function of the batch with one `new Function`; returns them by index. */
  materialise (): Evaluator[] {
    if (this.functions.length === 0) return []
    for (const g of this.literalGroups.values()) {
      const needles = [...g.needles]
      if (needles.length > 1 && needles.reduce((n, x) => n + x.length, 0) <= MAX_GROUP_CHARS) {
        g.rx = new RegExp(needles.map(escapeRegExp).join('|'))
      }
    }
    const body = `"use strict"; const own = Object.hasOwn, OP = Object.prototype; return [\n${this.functions.join(',\n')}\n]`
    // Safe by construction (see the header): only generated identifiers and escaped literals.
    const fns = new Function('K', 'H', body)(this.consts, HELPERS) as Evaluator[]
    for (const slot of this.slots) slot.fn = fns[slot.index] as Evaluator
    return fns
  }

  private expr (rule: unknown, path: string, s: Scope): Expr {
    if (Array.isArray(rule)) {
      const items = rule.map((r, i) => this.expr(r, childPath(path, i), s))
      if (items.every((n) => n.constant)) {
        const value = Object.freeze(items.map((n) => n.value))
        this.consts.push(value)
        return { code: `K[${this.consts.length - 1}]`, constant: true, value }
      }
      return { code: `[${items.map((n) => n.code).join(', ')}]`, constant: false, value: undefined }
    }
    if (rule === null || typeof rule !== 'object') return this.constant(rule)
    const keys = Object.keys(rule)
    if (keys.length !== 1) {
      const value = deepFreeze(structuredClone(rule))
      this.consts.push(value)
      return { code: `K[${this.consts.length - 1}]`, constant: true, value }
    }
    const op = keys[0] as string
    const raw = (rule as Record<string, unknown>)[op]
    const values = Array.isArray(raw) ? raw : [raw]
    const opPath = childPath(path, op)
    const argPath = (i: number): string => Array.isArray(raw) ? childPath(opPath, i) : opPath
    if (op === 'var') return this.varOp(this.args(values, argPath, s), opPath, s)
    const code = this.operation(op, values, opPath, argPath, s)
    return { code, constant: false, value: undefined, bool: this.lastBoolean === code }
  }

  /** JavaScript truthiness of a generated value, with JSON-logic's rule for arrays. */
  private truth (e: Expr): string {
    return e.bool === true || (e.constant && typeof e.value === 'boolean') ? e.code : `H.t(${e.code})`
  }

  private boolean (code: string): string {
    this.lastBoolean = code
    return code
  }

  private args (values: unknown[], argPath: (i: number) => string, s: Scope): Expr[] {
    return values.map((v, i) => this.expr(v, argPath(i), s))
  }

  private operation (op: string, values: unknown[], path: string, argPath: (i: number) => string, s: Scope): string {
    const refused = REFUSED.get(op)
    if (refused !== undefined) throw new JsonLogicCompileError(refused, path)
    switch (op) {
      case 'if':
      case '?:':
        return this.ifOp(this.args(values, argPath, s))
      case 'and':
      case 'or':
        return this.andOr(op, this.args(values, argPath, s), s)
      case 'log':
        return this.logOp(this.args(values, argPath, s), s)
    }
    if (SCOPED.has(op)) return this.scoped(op, values, argPath, s)
    const plain = PLAIN.get(op)
    if (plain !== undefined) {
      const args = this.args(values, argPath, s)
      if (op === 'missing') checkStaticKeys(args, path)
      if (op === 'missing_some') checkStaticKeys(args.slice(1), path)
      return this.plain(op, plain, args, s)
    }
    const custom = this.options.operations?.get(op)
    if (custom?.values !== undefined) {
      const args = this.args(values, argPath, s)
      const fn = buildOperation(() => (custom.values as NonNullable<OperationSpec['values']>)(args.map((a) => ({ constant: a.constant, value: a.value })), path), path)
      return `${this.k(fn)}(c${args.map((a) => `, ${a.code}`).join('')})`
    }
    if (custom?.compile !== undefined) {
      const args = values.map((v, i) => this.customArg(v, argPath(i)))
      const fn = buildOperation(() => (custom.compile as NonNullable<OperationSpec['compile']>)(args, path), path)
      return `${this.k(fn)}(${s.data}, c)`
    }
    throw new JsonLogicCompileError(`unknown operation "${op}"`, path)
  }

  /** An argument of a custom operation: its value when constant, and a function of the data. */
  private customArg (rule: unknown, path: string): CompiledArg {
    const s: Scope = { data: 'd', temps: [] }
    const e = this.expr(rule, path, s)
    if (e.constant) {
      const value = e.value
      return { fn: () => value, constant: true, value }
    }
    const index = this.pushFunction(`function (d, c) { ${s.temps.length > 0 ? `let ${s.temps.join(', ')}; ` : ''}return ${e.code} }`)
    const slot: { index: number, fn: Evaluator | null } = { index, fn: null }
    this.slots.push(slot)
    return { fn: (d: unknown, c: EvalContext) => (slot.fn as Evaluator)(d, c), constant: false, value: undefined }
  }

  private ifOp (args: Expr[]): string {
    const n = args.length
    if (n === 0) return 'null'
    if (n === 1) return (args[0] as Expr).code
    let code = n % 2 === 1 ? (args[n - 1] as Expr).code : 'null'
    for (let i = (n % 2 === 1 ? n - 1 : n) - 2; i >= 0; i -= 2) {
      code = `(${this.truth(args[i] as Expr)} ? ${(args[i + 1] as Expr).code} : ${code})`
    }
    return code
  }

  private andOr (op: 'and' | 'or', args: Expr[], s: Scope): string {
    if (args.length === 0) return 'undefined'
    const t = this.tmp(s)
    let code = `(${t} = ${(args[args.length - 1] as Expr).code})`
    for (let i = args.length - 2; i >= 0; i--) {
      const a = args[i] as Expr
      const held = this.truth({ ...a, code: t })
      code = `((${t} = ${a.code}), ${op === 'or' ? held : `!${held}`} ? ${t} : ${code})`
    }
    return args.every((a) => a.bool === true) ? this.boolean(code) : code
  }

  private varOp (args: Expr[], path: string, s: Scope): Expr {
    const [pathArg, dfltArg] = args
    const rest = args.slice(2)
    let code: string
    let reads: string | undefined
    if (pathArg === undefined || pathArg.constant) {
      const p = pathArg?.value
      if (p === undefined || p === null || p === '') {
        // An empty path ignores the default, but json-logic-js still evaluates it.
        code = dfltArg !== undefined && !dfltArg.constant ? `(${dfltArg.code}, ${s.data})` : s.data
      } else {
        const bad = forbidden(p)
        if (bad !== undefined) throw new JsonLogicCompileError(`path segment "${bad}" is not allowed`, path)
        const segments = splitPath(p)
        const t = this.tmp(s)
        let nf: string
        let prefix = ''
        if (dfltArg === undefined || dfltArg.constant) {
          const v = dfltArg?.value
          nf = this.k(v === undefined ? null : v)
        } else {
          nf = this.tmp(s)
          prefix = `${nf} = ${dfltArg.code}, ${nf} = ${nf} === undefined ? null : ${nf}, `
        }
        const v = this.tmp(s)
        let inner = t
        for (let i = segments.length - 1; i >= 0; i--) {
          const key = JSON.stringify(segments[i])
          // One property load; hasOwn (a call V8 cannot inline) only for a value that may be inherited.
          const read = `(${v} = ${t}[${key}]) === undefined || ((typeof ${v} === 'function' || ${v} === OP[${key}]) && !own(${t}, ${key})) ? undefined : ${v}`
          inner = `(${t} == null ? ${nf} : (${t} = ${read}) === undefined ? ${nf} : ${inner})`
        }
        code = `(${prefix}${t} = ${s.data}, ${inner})`
        if (prefix === '' && rest.length === 0) reads = `${s.data}:${JSON.stringify([p, nf])}`
      }
    } else if (dfltArg === undefined) {
      code = `H.lookup(${s.data}, ${pathArg.code}, null)`
    } else {
      const tp = this.tmp(s)
      const tb = this.tmp(s)
      code = `(${tp} = ${pathArg.code}, ${tb} = ${dfltArg.code}, H.lookup(${s.data}, ${tp}, ${tb} === undefined ? null : ${tb}))`
    }
    if (rest.length > 0) {
      const v = this.tmp(s)
      code = `(${v} = ${code}, ${rest.map((r) => r.code).join(', ')}, ${v})`
    }
    return { code, constant: false, value: undefined, ...(reads !== undefined ? { reads } : {}) }
  }

  private logOp (args: Expr[], s: Scope): string {
    const log = this.k(this.options.log ?? (() => {}))
    if (args.length === 0) return `(${log}(undefined), undefined)`
    const t = this.tmp(s)
    const others = args.slice(1).map((a) => a.code)
    return `(${t} = ${(args[0] as Expr).code}, ${others.length > 0 ? others.join(', ') + ', ' : ''}${log}(${t}), ${t})`
  }

  private plain (op: string, fn: (a: unknown[], data: unknown) => unknown, args: Expr[], s: Scope): string {
    const infix = INFIX.get(op)
    if (infix !== undefined && args.length === 2) {
      const code = `(${(args[0] as Expr).code} ${infix} ${(args[1] as Expr).code})`
      return op === '%' || op === '/' ? code : this.boolean(code)
    }
    if (op === '!' && args.length === 1) return this.boolean(`!${this.truth(args[0] as Expr)}`)
    if (op === '!!' && args.length === 1) return this.boolean(`${this.truth(args[0] as Expr)}`)
    if (op === 'in' && args.length === 2) {
      // Inlined for strings and arrays (each site stays monomorphic); anything else goes to inOp.
      const [needle, hay] = args as [Expr, Expr]
      const b = this.tmp(s)
      if (needle.constant && typeof needle.value === 'string' && needle.value !== '' && hay.reads !== undefined) {
        const group = this.literalGroup(hay.reads)
        group.needles.add(needle.value)
        return this.boolean(`(${b} = ${hay.code}, typeof ${b} === 'string' ? ${b} !== '' && H.lit(${this.k(group)}, ${b}, ${needle.code}) : Array.isArray(${b}) ? ${b}.indexOf(${needle.code}) !== -1 : H.inOp(${needle.code}, ${b}))`)
      }
      if (hay.constant && Array.isArray(hay.value)) {
        // A list written in the rule: a search of that list (indexOf: strict equality, as json-logic-js).
        return this.boolean(`(${hay.code}.indexOf(${needle.code}) !== -1)`)
      }
      const a = this.tmp(s)
      return this.boolean(`(${a} = ${(args[0] as Expr).code}, ${b} = ${(args[1] as Expr).code}, typeof ${b} === 'string' ? ${b} !== '' && ${b}.indexOf(${a}) !== -1 : Array.isArray(${b}) ? ${b}.indexOf(${a}) !== -1 : H.inOp(${a}, ${b}))`)
    }
    // cat is Array.prototype.join(''): null and undefined give '', anything else its string form.
    if (op === 'cat' && args.length > 0) return `(${args.map((a) => a.constant && typeof a.value === 'string' ? a.code : `H.s(${a.code})`).join(' + ')})`
    return `${this.k(fn)}([${args.map((a) => a.code).join(', ')}], ${s.data})`
  }

  private literalGroup (reads: string): LiteralGroup {
    let g = this.literalGroups.get(reads)
    if (g === undefined) {
      g = new LiteralGroup()
      this.literalGroups.set(reads, g)
    }
    return g
  }

  private scoped (op: string, values: unknown[], argPath: (i: number) => string, s: Scope): string {
    const src = values.length > 0 ? this.expr(values[0], argPath(0), s).code : 'undefined'
    const x = `x${this.counter++}`
    let logic = '() => undefined'
    if (values.length > 1) {
      const inner: Scope = { data: x, temps: [] }
      const body = this.expr(values[1], argPath(1), inner).code
      logic = inner.temps.length > 0
        ? `(${x}) => { let ${inner.temps.join(', ')}; return ${body} }`
        : `(${x}) => ${body}`
    }
    // Arguments past the ones the operation reads are still checked, as written rules.
    const init = values.length > 2 ? this.expr(values[2], argPath(2), s) : undefined
    for (let i = 3; i < values.length; i++) this.expr(values[i], argPath(i), { data: s.data, temps: [] })
    if (op === 'reduce') return `H.reduce(${src}, ${logic}, ${init === undefined ? 'null' : init.code})`
    return `H.${op}(${src}, ${logic})`
  }
}

/** Runs an operation's builder; whatever it throws becomes a compile error at `path`. */
function buildOperation<T> (build: () => T, path: string): T {
  try {
    return build()
  } catch (err) {
    if (err instanceof JsonLogicCompileError) throw err
    throw new JsonLogicCompileError(err instanceof Error ? err.message : String(err), path)
  }
}

/** `missing` keys written in the rule are checked for forbidden segments at compile time. */
function checkStaticKeys (args: Expr[], path: string): void {
  const keys: unknown[] = []
  for (const a of args) {
    if (!a.constant) continue
    const v = a.value
    if (Array.isArray(v)) {
      for (const k of v) keys.push(Array.isArray(k) ? k[0] : k)
    } else keys.push(v)
  }
  for (const k of keys) {
    if (k === null || k === undefined) continue
    const bad = forbidden(k)
    if (bad !== undefined) throw new JsonLogicCompileError(`path segment "${bad}" is not allowed`, path)
  }
}

