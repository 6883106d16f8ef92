/**
 * Small validators for policy configs. Each records errors as {path, message} with the path of the
 * offending value (`config.allowed_tools[2]`) and returns the value when it is valid.
 */
import { compileLogic, JsonLogicCompileError } from './jsonlogic.js'
import { POLICY_OPERATIONS } from './operations.js'

export interface ValidationError {
  path: string
  message: string
}

export class Checker {
  readonly errors: ValidationError[] = []

  fail (path: string, message: string): undefined {
    this.errors.push({ path, message })
    return undefined
  }

  /** An object whose keys are all in `known`. */
  object (value: unknown, path: string, known: readonly string[]): Record<string, unknown> | undefined {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return this.fail(path, 'must be an object')
    const obj = value as Record<string, unknown>
    for (const key of Object.keys(obj)) {
      if (!known.includes(key)) this.fail(`${path}.${key}`, `unknown field (expected one of: ${known.join(', ')})`)
    }
    return obj
  }

  string (value: unknown, path: string, opts: { max?: number } = {}): string | undefined {
    if (typeof value !== 'string') return this.fail(path, 'must be a string')
    if (value.trim() === '') return this.fail(path, 'must not be empty')
    const max = opts.max ?? 1000
    if (value.length > max) return this.fail(path, `must be at most ${max} characters`)
    return value
  }

  /** A list of non-empty strings, each also checked by `each` (which returns an error message or null). */
  stringList (value: unknown, path: string, opts: { nonEmpty?: boolean, max?: number, each?: (s: string) => string | null } = {}): string[] | undefined {
    if (!Array.isArray(value)) return this.fail(path, 'must be a list of strings')
    if (opts.nonEmpty === true && value.length === 0) return this.fail(path, 'must not be empty')
    const max = opts.max ?? 1000
    if (value.length > max) return this.fail(path, `must have at most ${max} items`)
    const before = this.errors.length
    value.forEach((item, i) => {
      const p = `${path}[${i}]`
      if (this.string(item, p) === undefined) return
      const problem = opts.each?.(item as string) ?? null
      if (problem !== null) this.fail(p, problem)
    })
    return this.errors.length === before ? value as string[] : undefined
  }

  /** An integer in [min, max]. */
  integer (value: unknown, path: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value)) return this.fail(path, 'must be an integer')
    if (value < min || value > max) return this.fail(path, `must be between ${min} and ${max}`)
    return value
  }

  /** A finite number >= min. */
  number (value: unknown, path: string, min: number): number | undefined {
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.fail(path, 'must be a number')
    if (value < min) return this.fail(path, `must be at least ${min}`)
    return value
  }

  oneOf<T extends string> (value: unknown, path: string, values: readonly T[]): T | undefined {
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      return this.fail(path, `must be one of: ${values.join(', ')}`)
    }
    return value as T
  }

  boolean (value: unknown, path: string): boolean | undefined {
    if (typeof value !== 'boolean') return this.fail(path, 'must be true or false')
    return value
  }

  /** A JSON-logic rule that compiles with the policy engine's operations. */
  logic (value: unknown, path: string): unknown {
    if (value === undefined) return this.fail(path, 'must be a JSON-logic rule')
    try {
      compileLogic(value, { operations: POLICY_OPERATIONS }, path)
      return value
    } catch (err) {
      if (err instanceof JsonLogicCompileError) return this.fail(err.path, err.reason)
      return this.fail(path, (err as Error).message)
    }
  }
}
