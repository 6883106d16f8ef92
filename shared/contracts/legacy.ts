/** The legacy REST contract (`/api/service/`), interface.md section 4.2. */
import { Type, type Static } from '@sinclair/typebox'
import { ConfigResponse as V1ConfigResponse, decisionListsJson, jsonStringOrNull } from './v1.js'
import type { Decision } from '../policy/policy-set.js'
import { StringEnum, AgentId, Capabilities, FreeObject, Hash, HealthValue, Metrics, ShortString, Timestamp } from './common.js'

export const RegisterBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  agent_id: Type.Optional(AgentId),
  capabilities: Type.Optional(Capabilities),
  deployment_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  metadata: Type.Optional(FreeObject)
})
export type RegisterBody = Static<typeof RegisterBody>

export const PolicyLegacy = Type.Object({
  id: Type.String(),
  type: Type.String(),
  config: FreeObject,
  scope: Type.String()
})
export type PolicyLegacy = Static<typeof PolicyLegacy>

export const LegacySettings = Type.Object({
  cache_ttl: Type.Integer(),
  heartbeat_interval_seconds: Type.Integer(),
  event_batch_size: Type.Integer(),
  event_flush_interval_seconds: Type.Integer()
})

export const RegisterResponse = Type.Object({
  agent_id: Type.String(),
  api_key: Type.String(),
  api_key_prefix: Type.String(),
  config: LegacySettings,
  policies: Type.Array(PolicyLegacy)
})

export const EvaluateBody = Type.Object({
  request_type: Type.String({ minLength: 1, maxLength: 200 }),
  model: Type.Optional(Type.Union([ShortString, Type.Null()])),
  tokens_requested: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])),
  messages: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 10_000 })),
  context: Type.Optional(FreeObject)
})
export type EvaluateBody = Static<typeof EvaluateBody>

export const Restrictions = Type.Object({
  max_tokens: Type.Optional(Type.Integer()),
  allowed_models: Type.Optional(Type.Array(Type.String()))
})

export const EvaluateResponse = Type.Object({
  allowed: Type.Boolean(),
  reason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  policies_evaluated: Type.Integer(),
  restrictions: Restrictions,
  warnings: Type.Array(Type.String()),
  evaluation_id: Type.String()
})

/**
 * The legacy /evaluate answer of a decision as JSON text, exactly the EvaluateResponse schema's
 * serialisation (tested against it), built without the schema serialiser, as v1's is. The schema
 * serialiser writes the optional `reason` after the required fields; so does this.
 */
export function evaluateResponseJson (d: Decision, evaluationId: string): string {
  const { warnings, restrictions } = decisionListsJson(d)
  return `{"allowed":${d.allowed ? 'true' : 'false'},"policies_evaluated":${d.policies_evaluated.length},"restrictions":${restrictions},` +
    `"warnings":${warnings},"evaluation_id":${JSON.stringify(evaluationId)},"reason":${jsonStringOrNull(d.reason)}}`
}

export const ConfigResponse = Type.Object({
  agent_id: Type.String(),
  policies: Type.Array(PolicyLegacy),
  allowed_models: Type.Array(Type.String()),
  features: Type.Record(Type.String(), Type.Boolean()),
  cache_ttl: Type.Integer(),
  config_hash: Type.String(),
  /**
   * Extension: the same config in the v1 shape (named policies with enforcement, priority and scope,
   * and the agent's identity), which a sidecar compiles to decide legacy requests locally.
   */
  v1_config: Type.Optional(V1ConfigResponse)
})

export const LEGACY_EVENT_TYPES = [
  'llm.invoke', 'llm.response', 'tool.invoked', 'tool.result', 'agent.started', 'agent.stopped',
  'policy.blocked', 'error.occurred'
] as const

export const EventLegacy = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  type: StringEnum(LEGACY_EVENT_TYPES),
  timestamp: Timestamp,
  evaluation_id: Type.Optional(Type.Union([Type.String({ pattern: '^eval_[A-Za-z0-9_-]{1,100}$' }), Type.Null()])),
  data: Type.Optional(FreeObject)
})
export type EventLegacy = Static<typeof EventLegacy>

export function eventsBody (maxEvents: number) {
  return Type.Object({ events: Type.Array(EventLegacy, { maxItems: maxEvents }) })
}
export type EventsBody = Static<ReturnType<typeof eventsBody>>

export const EventsResponse = Type.Object({ accepted: Type.Integer(), dropped: Type.Integer() })

export const HeartbeatBody = Type.Object({
  status: HealthValue,
  metrics: Type.Optional(Metrics),
  config_hash: Type.Optional(Hash)
})
export type HeartbeatBody = Static<typeof HeartbeatBody>

export const HeartbeatResponse = Type.Object({ acknowledged: Type.Boolean(), config_updated: Type.Boolean() })

export const SecretsResponse = Type.Object({
  secrets: Type.Record(Type.String(), Type.String()),
  expires_at: Type.String()
})
