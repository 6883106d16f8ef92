/**
 * From an agent's effective policies to one decision function (policy-types.md, "From policies to one
 * decision"). Every policy becomes one generated JavaScript function, once per config version, and a
 * generated driver (driver.ts) calls them in order; evaluating does no parsing and no I/O.
 */
import { compileLogicBatch, type Evaluator } from './jsonlogic.js'
import { Outcome, buildDriver, mergeRestrictions, type DriverChunk, type Entry } from './driver.js'
import { POLICY_OPERATIONS, EvalState, commitPending } from './operations.js'
import { MemoryRateCounters, type ApprovalSource, type BudgetLedger, type RateCounterStore } from './counters.js'
import type { InputDocument } from './input.js'
import type { Restrictions } from './types/common.js'
import { policyLogic, policyTypeDef } from './registry.js'
import { byPriorityThenName, normalizeScopeType } from './scope.js'

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

function enforcementOf (value: unknown): Enforcement {
  return value === 'audit' || value === 'disabled' ? value : 'enforce'
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
  const driver = buildDriver(entries)

  function evaluate (input: InputDocument): Decision {
    const ctx = new EvalState(clock, rates, budget, approvals)
    const outcome = new Outcome(entries, restrictions, onError)
    // Filled by index: a policy of another user's scope leaves no entry, so the length is set last.
    const results = new Array<PolicyResult>(n)
    let count = 0
    for (let i = 0; i < driver.length; i++) count = (driver[i] as DriverChunk)(input, ctx, results, outcome, count)
    if (count !== n) results.length = count
    const reason = outcome.reason
    const allowed = reason === null
    if (allowed && ctx.pending.length > 0) commitPending(ctx)
    return { allowed, reason, policies_evaluated: results, warnings: outcome.warnings, restrictions: outcome.decided }
  }

  return { evaluate, policies: Object.freeze(entries.map((e) => e.info)), restrictions }
}
