/**
 * The policy engine's public API. The control plane and the sidecar decide with it; other programs
 * import it from `dist/shared/policy/index.js` (package export `agentgov/policy`).
 */
import { compileRule as compileCore, type CompileOptions } from './jsonlogic.js'
import { POLICY_OPERATIONS } from './operations.js'

/** Compiles a JSON-logic rule (with the policy engine's operations) into a function of the data. */
export function compileRule (rule: unknown, options: Omit<CompileOptions, 'operations'> = {}): (data?: unknown) => unknown {
  return compileCore(rule, { ...options, operations: POLICY_OPERATIONS })
}

export { JsonLogicCompileError, truthy, MAX_RULE_BYTES, MAX_RULE_DEPTH } from './jsonlogic.js'
export { validatePolicy, policyLogic, isPolicyType } from './registry.js'
export type { ValidationError } from './check.js'
export { compilePolicySet } from './policy-set.js'
export type { Decision, PolicyInput, PolicyResult, PolicySet, PolicySetOptions, CompiledPolicy, Enforcement } from './policy-set.js'
export { buildInputV1, buildInputLegacy, agentInfoOf, LLM_ACTIONS, TOOL_ACTIONS } from './input.js'
export type { AgentIdentity, AgentInfo, InputDocument } from './input.js'
export { effectivePolicies, scopeMatches, normalizeScopeType, SCOPE_TYPES } from './scope.js'
export type { ScopeType } from './scope.js'
export { POLICY_TYPES } from './types/common.js'
export type { PolicyTypeName, Restrictions } from './types/common.js'
export {
  MemoryRateCounters, MemoryBudgetLedger, MemoryApprovals, WINDOWS, periodStart
} from './counters.js'
export type { RateCounterStore, BudgetLedger, ApprovalSource, ApprovalState, WindowSpec } from './counters.js'
export { POLICY_OPERATIONS } from './operations.js'
