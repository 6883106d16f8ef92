/**
 * Local enforcement in the sidecar: the agent's v1 config (GET /config/{agent_id}, or an event of the
 * config watch) compiled into the same policy set the control plane evaluates, so that /evaluate is
 * answered on localhost with the control plane's answer. Counters (rate limits) are the sidecar's
 * own; pass one long-lived store so that they survive config changes.
 */
import { evaluateResponse, type ConfigResponse, type EvaluateResponse } from '../shared/contracts/v1.js'
import {
  agentInfoOf, buildInputLegacy, buildInputV1, compilePolicySet, type AgentInfo, type Decision, type PolicyInput, type PolicySet, type PolicySetOptions
} from '../shared/policy/index.js'

export class Enforcer {
  readonly agent: AgentInfo
  readonly configHash: string
  private readonly set: PolicySet

  constructor (config: ConfigResponse, options: PolicySetOptions = {}) {
    if (config.agent === undefined) {
      throw new Error('the control plane\'s config has no agent identity: it is too old for local enforcement')
    }
    this.agent = agentInfoOf(config.agent)
    this.configHash = config.config_hash
    const policies: PolicyInput[] = config.policies.map((p) => ({
      id: p.id,
      name: p.name,
      type: p.type,
      enforcement: p.enforcement,
      config: p.config,
      ...(p.priority !== undefined ? { priority: p.priority } : {}),
      ...(p.scope_type !== undefined ? { scope_type: p.scope_type } : {}),
      ...(p.scope_id !== undefined && p.scope_id !== null ? { scope_id: p.scope_id } : {})
    }))
    this.set = compilePolicySet(policies, options)
  }

  /** Decides a v1 /evaluate body (already validated by the route's schema). */
  decideV1 (body: Record<string, unknown>, now: number = Date.now()): Decision {
    return this.set.evaluate(buildInputV1(body, this.agent, now))
  }

  /** Decides a legacy /evaluate body (already validated by the route's schema). */
  decideLegacy (body: Record<string, unknown>, now: number = Date.now()): Decision {
    return this.set.evaluate(buildInputLegacy(body, this.agent, now))
  }

  /** The v1 /evaluate answer to a body, as the control plane gives it. */
  evaluateV1 (body: Record<string, unknown>, now: number = Date.now()): EvaluateResponse {
    return evaluateResponse(this.decideV1(body, now), body.context)
  }
}
