/** The versioned REST contract (`/api/service/v1`), interface.md section 4.1. */
import { Type, type Static } from '@sinclair/typebox'
import type { Decision } from '../policy/policy-set.js'
import {
  AGENT_TYPES, StringEnum, AgentId, AgentSettings, Capabilities, FreeObject, Hash, HealthValue, Metrics, ShortString, Timestamp
} from './common.js'

export const RegisterBody = Type.Object({
  agent_id: Type.Optional(AgentId),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  agent_type: StringEnum(AGENT_TYPES),
  capabilities: Type.Optional(Capabilities),
  metadata: Type.Optional(FreeObject),
  deployment_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 }))
})
export type RegisterBody = Static<typeof RegisterBody>

export const PolicyV1 = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  enforcement: Type.String(),
  config: FreeObject,
  priority: Type.Optional(Type.Integer({ description: 'evaluation order: higher first, then by name' })),
  scope_type: Type.Optional(Type.String({ description: 'ORG, TEAM, DEPLOYMENT, ENDPOINT or USER (a USER policy applies to requests of that user_id only)' })),
  scope_id: Type.Optional(Type.Union([Type.String(), Type.Null()]))
})
export type PolicyV1 = Static<typeof PolicyV1>

export const RegisterResponse = Type.Object({
  agent_id: Type.String(),
  api_key: Type.String(),
  config: AgentSettings,
  policies: Type.Array(PolicyV1)
})

export const AgentParams = Type.Object({ agent_id: Type.String({ maxLength: 200 }) })

/** The agent as the v1 config shows it: what a sidecar needs to build the input document. */
export const AgentIdentity = Type.Object({
  agent_id: Type.String(),
  agent_type: Type.String(),
  capabilities: Type.Array(Type.String()),
  metadata: FreeObject,
  deployment_id: Type.Union([Type.String(), Type.Null()])
})

export const ConfigResponse = Type.Object({
  agent_id: Type.String(),
  config: AgentSettings,
  policies: Type.Array(PolicyV1),
  config_hash: Type.String({ description: 'sha256 of the canonical JSON of config and policies; send it in heartbeats' }),
  updated_at: Type.String(),
  agent: Type.Optional(AgentIdentity)
})
export type ConfigResponse = Static<typeof ConfigResponse>

export const SecretsResponse = Type.Object({
  secrets: Type.Record(Type.String(), Type.String()),
  providers: Type.Record(Type.String(), Type.Object({ api_key: Type.String(), base_url: Type.Union([Type.String(), Type.Null()]) })),
  expires_at: Type.String()
})

export const EvaluateBody = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  action: Type.String({ minLength: 1, maxLength: 200 }),
  user_id: Type.Optional(Type.Union([ShortString, Type.Null()])),
  context: Type.Optional(FreeObject)
})
export type EvaluateBody = Static<typeof EvaluateBody>

export const PolicyResult = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  result: StringEnum(['pass', 'fail'] as const),
  message: Type.Union([Type.String(), Type.Null()])
})

export const EvaluateResponse = Type.Object({
  allowed: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]),
  policies_evaluated: Type.Array(PolicyResult),
  warnings: Type.Array(Type.String()),
  restrictions: Type.Object({
    max_tokens: Type.Optional(Type.Integer()),
    allowed_models: Type.Optional(Type.Array(Type.String()))
  }),
  context: FreeObject
})
export type EvaluateResponse = Static<typeof EvaluateResponse>

/** The v1 /evaluate answer of a decision: what the control plane and a sidecar both send. */
export function evaluateResponse (d: Decision, context: unknown): EvaluateResponse {
  return {
    allowed: d.allowed,
    reason: d.reason,
    policies_evaluated: d.policies_evaluated,
    warnings: d.warnings,
    restrictions: d.restrictions,
    context: (context ?? {}) as Record<string, unknown>
  }
}

export const EventV1 = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'sender-chosen id; a repeated id is stored once' })),
  type: Type.String({ minLength: 1, maxLength: 200 }),
  category: StringEnum(['telemetry', 'audit', 'alert'] as const),
  timestamp: Timestamp,
  user_id: Type.Optional(Type.Union([ShortString, Type.Null()])),
  payload: Type.Optional(FreeObject)
})
export type EventV1 = Static<typeof EventV1>

export function eventsBody (maxEvents: number) {
  return Type.Object({
    agent_id: Type.String({ maxLength: 200 }),
    events: Type.Array(EventV1, { maxItems: maxEvents })
  })
}
export type EventsBody = Static<ReturnType<typeof eventsBody>>

export const EventsResponse = Type.Object({ accepted: Type.Integer(), batch_id: Type.String() })

export const HeartbeatBody = Type.Object({
  agent_id: Type.String({ maxLength: 200 }),
  status: HealthValue,
  metrics: Type.Optional(Metrics),
  config_hash: Type.Optional(Hash),
  secrets_hash: Type.Optional(Hash),
  version: Type.Optional(ShortString),
  telemetry: Type.Optional(FreeObject)
})
export type HeartbeatBody = Static<typeof HeartbeatBody>

export const HeartbeatResponse = Type.Object({
  acknowledged: Type.Boolean(),
  config_changed: Type.Boolean(),
  next_heartbeat_seconds: Type.Integer()
})
