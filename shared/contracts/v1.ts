/** The versioned REST contract (`/api/service/v1`), interface.md section 4.1. */
import { ByteSlab } from '../bytes.js'
import { Type, type Static } from '@sinclair/typebox'
import type { Decision, PolicyResult as EnginePolicyResult } from '../policy/policy-set.js'
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

/**
 * The payload of a `policy.blocked` audit event: what was asked, why it was blocked, and who decided
 * (the control plane or a sidecar). Both write blocks in this one shape.
 */
export function blockedPayload (action: unknown, tool: unknown, model: unknown, d: Pick<Decision, 'reason' | 'policies_evaluated'>,
  decidedBy: 'control-plane' | 'sidecar'): Record<string, unknown> {
  return {
    action,
    tool: tool ?? null,
    model: model ?? null,
    reason: d.reason,
    failed: d.policies_evaluated.filter((p) => p.result === 'fail').map((p) => p.name),
    decided_by: decidedBy
  }
}

/**
 * JSON of frozen objects the engine hands out again and again (a policy's pass result, a policy set's
 * merged restrictions), by identity: the same object always serialises to the same text.
 */
const frozenJson = new WeakMap<object, string>()

/**
 * A text built by concatenation, flattened once: V8 keeps `a + b` as a tree of pieces and walks the
 * tree whenever the text is written out. A text that is kept and reused (cached JSON) is flattened in
 * place here (what `flatstr` does: converting it to a number makes V8 flatten it), so a response built
 * from it copies one run of bytes instead of walking the pieces again on every request.
 */
export function flattened (s: string): string {
  Number(s)
  return s
}

function cachedJson (value: object, serialise: () => string): string {
  if (!Object.isFrozen(value)) return serialise()
  let json = frozenJson.get(value)
  if (json === undefined) {
    json = flattened(serialise())
    frozenJson.set(value, json)
  }
  return json
}

/** A `string | null` field's JSON. */
export const jsonStringOrNull = (s: string | null): string => s === null ? 'null' : JSON.stringify(s)
const str = jsonStringOrNull

function policyResultJson (r: EnginePolicyResult): string {
  return `{"id":${str(r.id)},"name":${str(r.name)},"type":${str(r.type)},"result":${str(r.result)},"message":${str(r.message)}}`
}

function restrictionsJson (r: Decision['restrictions']): string {
  let out = ''
  if (typeof r.max_tokens === 'number') out += `"max_tokens":${JSON.stringify(Math.trunc(r.max_tokens))}`
  if (Array.isArray(r.allowed_models)) out += `${out === '' ? '' : ','}"allowed_models":${JSON.stringify(r.allowed_models.map(String))}`
  return `{${out}}`
}

/**
 * The last list of results serialised whole, when every result in it was frozen: a run of decisions
 * that all pass (the common case) hands out the same result objects in the same order.
 */
let lastResults: readonly EnginePolicyResult[] = []
let lastResultsJson = ''
/** lastResultsJson's UTF-8 bytes, made when first asked for. */
let lastResultsBytes: Uint8Array | null = null

function sameResults (a: readonly EnginePolicyResult[], b: readonly EnginePolicyResult[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

function resultsJson (results: readonly EnginePolicyResult[]): string {
  if (results.length > 0 && sameResults(results, lastResults)) return lastResultsJson
  let json = ''
  let frozen = true
  for (let i = 0; i < results.length; i++) {
    const r = results[i] as EnginePolicyResult
    frozen &&= Object.isFrozen(r)
    json += (i === 0 ? '' : ',') + cachedJson(r, () => policyResultJson(r))
  }
  if (frozen) {
    lastResults = results.slice()
    lastResultsJson = flattened(json)
    lastResultsBytes = null
  }
  return json
}

/** The answer's text around its list of policy results: what comes before the list, and after. */
/**
 * The JSON of a decision's `warnings` (an array of strings) and `restrictions` (the schema's key
 * order; frozen restrictions serialised once): the same in the v1 and the legacy answers.
 */
export function decisionListsJson (d: Decision): { warnings: string, restrictions: string } {
  let warnings = ''
  for (let i = 0; i < d.warnings.length; i++) warnings += (i === 0 ? '' : ',') + JSON.stringify(String(d.warnings[i]))
  return { warnings: `[${warnings}]`, restrictions: cachedJson(d.restrictions, () => restrictionsJson(d.restrictions)) }
}

function responseEnds (d: Decision, context: unknown): [string, string] {
  const { warnings, restrictions } = decisionListsJson(d)
  const ctx = context !== null && typeof context === 'object' && !Array.isArray(context) ? JSON.stringify(context) : '{}'
  return [
    `{"allowed":${d.allowed ? 'true' : 'false'},"reason":${str(d.reason)},"policies_evaluated":[`,
    `],"warnings":${warnings},"restrictions":${restrictions},"context":${ctx}}`
  ]
}

/**
 * evaluateResponse as JSON text, exactly the EvaluateResponse schema's serialisation, built without
 * the schema serialiser: on the decision path that serialiser cost more than evaluating the
 * policies (its `string | null` unions are decided by running a validator per field). A policy's
 * pass result is frozen and reused by every decision, so its JSON is made once.
 */
export function evaluateResponseJson (d: Decision, context: unknown): string {
  const [head, tail] = responseEnds(d, context)
  return head + resultsJson(d.policies_evaluated) + tail
}

const answerBytes = new ByteSlab()

/**
 * evaluateResponseJson's UTF-8 bytes (the fast lane sends bytes): the list of results, the bulk of
 * an answer and the same from one decision to the next while they all pass, is encoded once and
 * copied; only the rest of the answer is encoded per request.
 */
export function evaluateResponseBytes (d: Decision, context: unknown): Uint8Array {
  const [head, tail] = responseEnds(d, context)
  const results = resultsJson(d.policies_evaluated)
  if (results === lastResultsJson && results !== '') {
    lastResultsBytes ??= Buffer.from(results, 'utf8')
    return answerBytes.join([head, lastResultsBytes, tail])
  }
  return answerBytes.join([head, results, tail])
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
