/**
 * Which of a tenant's policies apply to an agent (decisions.md, ScopeType), in evaluation order.
 * USER-scoped policies depend on the request; they are kept here and checked per request.
 */
import type { AgentInfo } from './input.js'

export const SCOPE_TYPES = ['ORG', 'TEAM', 'DEPLOYMENT', 'ENDPOINT', 'USER'] as const
export type ScopeType = typeof SCOPE_TYPES[number]

/** `org` or `ORG` -> `ORG`; absent -> `ORG`; anything else -> undefined. */
export function normalizeScopeType (value: unknown): ScopeType | undefined {
  if (value === undefined || value === null) return 'ORG'
  if (typeof value !== 'string') return undefined
  const upper = value.toUpperCase()
  return (SCOPE_TYPES as readonly string[]).includes(upper) ? upper as ScopeType : undefined
}

export interface ScopedPolicy {
  name: string
  priority?: number
  scope_type?: string
  scope_id?: string
  is_active?: boolean
}

/** Does a policy's scope take in this agent? (USER scope: yes here; the request decides.) */
export function scopeMatches (policy: ScopedPolicy, agent: AgentInfo): boolean {
  const id = policy.scope_id ?? ''
  switch (normalizeScopeType(policy.scope_type)) {
    case 'ORG':
    case 'USER':
      return true
    case 'TEAM':
      return agent.team === id || agent.metadata.team === id
    case 'DEPLOYMENT':
      return agent.deployment_id === id || agent.metadata.deployment === id
    case 'ENDPOINT':
      return agent.id === id
    default:
      return false
  }
}

/** The active policies whose scope takes in the agent, ordered by priority (higher first), then name. */
export function effectivePolicies<T extends ScopedPolicy> (policies: readonly T[], agent: AgentInfo): T[] {
  return policies
    .filter((p) => p.is_active !== false && scopeMatches(p, agent))
    .sort(byPriorityThenName)
}

/** Orders policies as decisions read them: priority (higher first), then name. */
export function byPriorityThenName (a: { priority?: number, name: string }, b: { priority?: number, name: string }): number {
  const pa = a.priority ?? 0
  const pb = b.priority ?? 0
  if (pa !== pb) return pb - pa
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
}
