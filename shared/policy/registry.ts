/** The policy types, by name, and what is done with a policy through them. */
import { Checker, type ValidationError } from './check.js'
import { POLICY_TYPES, type PolicyTypeDef, type PolicyTypeName } from './types/common.js'
import { rateLimit } from './types/rate-limit.js'
import { toolPermission } from './types/tool-permission.js'
import { modelRestriction } from './types/model-restriction.js'
import { budgetLimit } from './types/budget-limit.js'
import { contentFilter } from './types/content-filter.js'
import { networkPolicy } from './types/network-policy.js'
import { humanOversight } from './types/human-oversight.js'
import { custom } from './types/custom.js'
import { SCOPE_TYPES, normalizeScopeType } from './scope.js'

const DEFS: ReadonlyMap<string, PolicyTypeDef> = new Map(
  [rateLimit, toolPermission, modelRestriction, budgetLimit, contentFilter, networkPolicy, humanOversight, custom]
    .map((d) => [d.type, d])
)

export function isPolicyType (type: unknown): type is PolicyTypeName {
  return typeof type === 'string' && DEFS.has(type)
}

export function policyTypeDef (type: string): PolicyTypeDef {
  const def = DEFS.get(type)
  if (def === undefined) throw new Error(`unknown policy type "${type}"`)
  return def
}

/** The policy as one JSON-logic rule (falsy = pass, message = fail). */
export function policyLogic (policy: { id: string, type: string, config: unknown }): unknown {
  return policyTypeDef(policy.type).toLogic(policy.config as Record<string, unknown>, policy.id)
}

/**
 * Every problem of a policy, each with the path of the offending value (`config.allowed_tools[2]`);
 * empty when the policy is valid. Fields outside the policy's own (version, timestamps) are ignored;
 * unknown config fields are errors.
 */
export function validatePolicy (policy: unknown): ValidationError[] {
  const c = new Checker()
  if (policy === null || typeof policy !== 'object' || Array.isArray(policy)) {
    c.fail('', 'a policy must be an object')
    return c.errors
  }
  const p = policy as Record<string, unknown>
  if (p.id !== undefined && p.id !== null) c.string(p.id, 'id', { max: 200 })
  c.string(p.name, 'name', { max: 200 })
  const type = c.oneOf(p.type, 'type', POLICY_TYPES)
  if (p.enforcement !== undefined) c.oneOf(p.enforcement, 'enforcement', ['enforce', 'audit', 'disabled'])
  if (p.priority !== undefined) c.integer(p.priority, 'priority', -1_000_000, 1_000_000)
  if (p.is_active !== undefined) c.boolean(p.is_active, 'is_active')
  if (p.scope_type !== undefined && normalizeScopeType(p.scope_type) === undefined) {
    c.fail('scope_type', `must be one of: ${SCOPE_TYPES.join(', ')}`)
  }
  if (p.scope_id !== undefined && typeof p.scope_id !== 'string') c.fail('scope_id', 'must be a string')
  else {
    // Only ORG takes in everyone; any narrower scope names what it takes in (interface.md 2.2).
    const scope = normalizeScopeType(p.scope_type)
    if (scope !== undefined && scope !== 'ORG' && (typeof p.scope_id !== 'string' || p.scope_id.trim() === '')) {
      c.fail('scope_id', `is required for scope_type ${scope}`)
    }
  }
  if (type !== undefined) {
    if (p.config === undefined) c.fail('config', 'is required')
    else policyTypeDef(type).validate(p.config, c)
  }
  return c.errors
}
