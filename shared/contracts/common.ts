/**
 * Wire shapes shared by both REST contracts (TypeBox: JSON Schema for fastify's validation and
 * serialisation, and static types). Requests tolerate unknown fields (clients may be newer than us);
 * responses list every field they carry.
 */
import { Type, type Static } from '@sinclair/typebox'

/** A string from a fixed list (one `enum`, so a bad value gives one clear error). */
export function StringEnum<T extends string> (values: readonly T[], options: Record<string, unknown> = {}) {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...options })
}

/** A free-form JSON object, serialised as is. */
export const FreeObject = Type.Object({}, { additionalProperties: true })

export const AGENT_TYPES = [
  'custom', 'claude_code', 'codex', 'gemini', 'langchain', 'langgraph', 'crewai', 'llamaindex', 'autogen',
  'openai_agents', 'mcp', 'chat'
] as const

export const AGENT_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,99}$'
export const AgentId = Type.String({ pattern: AGENT_ID_PATTERN, description: 'slug, unique within the tenant' })
export const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })
export const ShortString = Type.String({ maxLength: 200 })
export const Capabilities = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 200 })
export const HealthValue = StringEnum(['healthy', 'degraded', 'unhealthy', 'unknown'] as const)
export const Hash = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' })

export const Metrics = Type.Object({
  requests_processed: Type.Optional(Type.Number({ minimum: 0 })),
  errors_last_5min: Type.Optional(Type.Number({ minimum: 0 })),
  avg_latency_ms: Type.Optional(Type.Number({ minimum: 0 }))
}, { additionalProperties: true })

export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() })))
}, { $id: 'ErrorResponse' })
export type ErrorResponse = Static<typeof ErrorResponse>

/** Runtime settings an agent receives (v1 `config`). */
export const AgentSettings = Type.Object({
  heartbeat_interval_seconds: Type.Integer(),
  event_batch_size: Type.Integer(),
  event_flush_interval_seconds: Type.Integer(),
  config_refresh_interval_seconds: Type.Integer()
})
export type AgentSettings = Static<typeof AgentSettings>

/** The error responses every authenticated route may give. */
export function errorResponses (...codes: number[]): Record<number, unknown> {
  return Object.fromEntries(codes.map((c) => [c, Type.Ref(ErrorResponse)]))
}
