/**
 * From an agent's effective policies to one decision function (policy-types.md, "From policies to one
 * decision"). Every policy becomes one compiled JSON-logic closure, once per config version; evaluating
 * is a loop over closures with no parsing and no I/O.
 */
import { compileLogicBatch, truthy, type Evaluator } from './jsonlogic.js'
import { POLICY_OPERATIONS, EvalState, commitPending } from './operations.js'
import { MemoryRateCounters, type ApprovalSource, type BudgetLedger, type RateCounterStore } from './counters.js'
import type { InputDocument } from './input.js'
import type { Restrictions } from './types/common.js'
import { policyLogic, policyTypeDef } from './registry.js'
import { byPriorityThenName, normalizeScopeType } from './scope.js'
import { globMatch } from './glob.js'

export type Enforcement = 'enforce' | 'audit' | 'disabled'

export interface PolicyInput {
  id: string
  name: string
  type: string
  enforcement?: Enforcement | string
  priority?: number
  config: unknown
  /** Optional scope; USER scope is checked per request against the input's user_id. */
  scope_type?: string
  scope_id?: string
  is_active?: boolean
}

export interface PolicyResult {
  id: string
  name: string
  type: string
  result: 'pass' | 'fail'
  message: string | null
}

export interface Decision {
  allowed: boolean
  reason: string | null
  policies_evaluated: PolicyResult[]
  warnings: string[]
  restrictions: Restrictions
}

export interface PolicySetOptions {
  /** Current time in ms; default Date.now. */
  now?: () => number
  /** Sliding-window counters; pass one long-lived store so counts survive recompiles. */
  rates?: RateCounterStore
  budget?: BudgetLedger
  approvals?: ApprovalSource
  /** Told about a policy that failed to compile or threw while evaluating (it then fails closed). */
  onError?: (policy: { id: string, name: string }, err: Error) => void
  /** Receives the values of JSON-logic `log` operations. */
  log?: (value: unknown) => void
}

export interface CompiledPolicy {
  id: string
  name: string
  type: string
  enforcement: Enforcement
  priority: number
  /** The policy as JSON-logic: falsy = pass, a message = fail. */
  logic: unknown
  /** Set when the policy could not be compiled; it then always fails with this message. */
  error?: string
}

export interface PolicySet {
  evaluate (input: InputDocument): Decision
  /** The enforced and audited policies, in evaluation order. */
  readonly policies: readonly CompiledPolicy[]
  /** Restrictions of the enforced policies, merged (the same object every decision carries). */
  readonly restrictions: Restrictions
}

interface Entry {
  info: CompiledPolicy
  /** Restrictions of an enforced USER-scoped policy: merged only into its user's decisions. */
  userRestrictions?: Restrictions
  /** The policy's result when it passes: the same frozen object every time (no allocation). */
  pass: PolicyResult
  fn: Evaluator
  warnOnly: boolean
  userScope: string | undefined
}

function enforcementOf (value: unknown): Enforcement {
  return value === 'audit' || value === 'disabled' ? value : 'enforce'
}

/**
 * Merges restrictions: the lowest max_tokens; for allowed_models, the patterns of either list that
 * the other list's globs match (`gpt-*` and `gpt-4o` give `gpt-4o`), so that a model both policies
 * allow is never left out.
 */
function mergeRestrictions (into: Restrictions, r: Restrictions): void {
  if (r.max_tokens !== undefined) into.max_tokens = Math.min(into.max_tokens ?? Infinity, r.max_tokens)
  if (r.allowed_models !== undefined) {
    const b = r.allowed_models
    const a = into.allowed_models
    into.allowed_models = a === undefined
      ? [...b]
      : [...new Set([...a.filter((p) => b.some((g) => globMatch(g, p))), ...b.filter((p) => a.some((g) => globMatch(g, p)))])]
  }
}

function passResult (info: CompiledPolicy): PolicyResult {
  return Object.freeze({ id: info.id, name: info.name, type: info.type, result: 'pass' as const, message: null })
}

/**
 * Compiles every policy with one code-generation pass. A policy whose config cannot be turned into
 * logic, or whose logic does not compile, always fails with "policy error: ..." (fail closed).
 */
function compileEntries (policies: readonly PolicyInput[], options: PolicySetOptions, restrictions: Restrictions): Entry[] {
  const prepared = policies.map((p) => {
    const enforcement = enforcementOf(p.enforcement)
    const info: CompiledPolicy = { id: p.id, name: p.name, type: p.type, enforcement, priority: p.priority ?? 0, logic: null }
    const userScope = normalizeScopeType(p.scope_type) === 'USER' ? p.scope_id ?? '' : undefined
    try {
      const def = policyTypeDef(p.type)
      info.logic = policyLogic(p)
      return { p, info, userScope, def, error: undefined }
    } catch (err) {
      return { p, info, userScope, def: undefined, error: err as Error }
    }
  })
  const compiled = compileLogicBatch(
    prepared.map((e) => ({ rule: e.error === undefined ? e.info.logic : null, path: 'logic' })),
    { operations: POLICY_OPERATIONS, log: options.log }
  )
  return prepared.map((e, i) => {
    const result = compiled[i]
    const error = e.error ?? (result instanceof Error ? result : undefined)
    if (error !== undefined || e.def === undefined) {
      const message = `policy error: ${(error as Error).message}`
      e.info.error = message
      options.onError?.(e.p, error as Error)
      return { info: e.info, pass: passResult(e.info), fn: () => message, warnOnly: false, userScope: e.userScope }
    }
    const config = e.p.config as Record<string, unknown>
    const own = e.info.enforcement === 'enforce' && e.def.restrictions !== undefined ? e.def.restrictions(config) : undefined
    if (own !== undefined && e.userScope === undefined) mergeRestrictions(restrictions, own)
    return {
      info: e.info,
      pass: passResult(e.info),
      fn: result as Evaluator,
      warnOnly: e.def.onMatch?.(config) === 'warn',
      userScope: e.userScope,
      ...(own !== undefined && e.userScope !== undefined ? { userRestrictions: own } : {})
    }
  })
}

/** Compiles an agent's effective policies into one decision function. */
export function compilePolicySet (policies: readonly PolicyInput[], options: PolicySetOptions = {}): PolicySet {
  const clock = options.now ?? Date.now
  const rates = options.rates ?? new MemoryRateCounters()
  const restrictions: Restrictions = {}
  const entries = compileEntries(policies
    .filter((p) => p.is_active !== false && enforcementOf(p.enforcement) !== 'disabled')
    .slice()
    .sort(byPriorityThenName), options, restrictions)
  Object.freeze(restrictions)
  if (restrictions.allowed_models !== undefined) Object.freeze(restrictions.allowed_models)
  const { budget, approvals, onError } = options

  const n = entries.length

  function evaluate (input: InputDocument): Decision {
    const ctx = new EvalState(clock, rates, budget, approvals)
    // Filled by index: a policy of another user's scope leaves no entry, so the length is set last.
    const results = new Array<PolicyResult>(n)
    let count = 0
    const warnings: string[] = []
    let reason: string | null = null
    let decided = restrictions
    for (let i = 0; i < n; i++) {
      const e = entries[i] as Entry
      if (e.userScope !== undefined) {
        if (input.user_id !== e.userScope) continue
        if (e.userRestrictions !== undefined) {
          if (decided === restrictions) decided = structuredClone(restrictions)
          mergeRestrictions(decided, e.userRestrictions)
        }
      }
      let out: unknown
      let threw = false
      try {
        out = e.fn(input, ctx)
      } catch (err) {
        out = `policy error: ${(err as Error).message}`
        threw = true
        onError?.(e.info, err as Error)
      }
      if (!truthy(out)) {
        results[count++] = e.pass
        continue
      }
      const info = e.info
      const message = typeof out === 'string' ? out : 'denied'
      // A warn-only policy warns on a match; an error still fails it (fail closed).
      if (e.warnOnly && info.error === undefined && !threw) {
        warnings.push(`${info.name}: ${message}`)
        results[count++] = { id: info.id, name: info.name, type: info.type, result: 'pass', message }
        continue
      }
      results[count++] = { id: info.id, name: info.name, type: info.type, result: 'fail', message }
      if (info.enforcement === 'enforce') {
        reason ??= `${info.name}: ${message}`
      } else {
        warnings.push(`[audit] ${info.name}: ${message}`)
      }
    }
    if (count !== n) results.length = count
    const allowed = reason === null
    if (allowed && ctx.pending.length > 0) commitPending(ctx)
    return { allowed, reason, policies_evaluated: results, warnings, restrictions: decided }
  }

  return { evaluate, policies: Object.freeze(entries.map((e) => e.info)), restrictions }
}
