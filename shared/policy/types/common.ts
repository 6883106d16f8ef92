/** What every policy type module provides, and the pieces of JSON-logic they share. */
import type { Checker } from '../check.js'
import { LLM_ACTIONS, TOOL_ACTIONS } from '../input.js'

export const POLICY_TYPES = [
  'rate_limit', 'tool_permission', 'model_restriction', 'budget_limit',
  'content_filter', 'network_policy', 'human_oversight', 'custom'
] as const
export type PolicyTypeName = typeof POLICY_TYPES[number]

/** Limits handed back to legacy clients with each decision. */
export interface Restrictions {
  max_tokens?: number
  allowed_models?: string[]
}

export interface PolicyTypeDef {
  readonly type: PolicyTypeName
  /** Records every problem of `config` (path prefix `config`). */
  validate (config: unknown, c: Checker): void
  /**
   * The policy as one JSON-logic rule over the input document: falsy when the policy passes, a
   * message (string) when it fails. `id` keys the policy's counters.
   */
  toLogic (config: Record<string, unknown>, id: string): unknown
  /** `warn`: a failure passes with a warning instead of failing (content_filter's on_match). */
  onMatch? (config: Record<string, unknown>): 'block' | 'warn'
  restrictions? (config: Record<string, unknown>): Restrictions
}

export const V = (path: string): { var: string } => ({ var: path })

/** `{"in": [action, [...LLM actions]]}` */
export const isLlmAction = { in: [V('action'), [...LLM_ACTIONS]] }
/** `{"in": [action, [...tool actions]]}` */
export const isToolAction = { in: [V('action'), [...TOOL_ACTIONS]] }

/** `{"if": [cond, message, null]}` */
export function failIf (cond: unknown, message: unknown): unknown {
  return { if: [cond, message, null] }
}

/** The first failure message among checks; every check is evaluated (their counters all see the request). */
export function firstFailure (checks: unknown[]): unknown {
  if (checks.length === 1) return checks[0]
  return { reduce: [checks, { or: [V('accumulator'), V('current')] }, null] }
}

/** Renders a value for a message: `"x"` for strings, `(none)` for null. */
export function quoted (expr: unknown): unknown {
  return { if: [expr, { cat: ['"', expr, '"'] }, '(none)'] }
}
