/**
 * The input document every policy reads (policy-types.md, "The input document"), built from a v1 or a
 * legacy `/evaluate` body and the authenticated agent.
 */

export interface AgentInfo {
  /** The agent_id slug. */
  id: string
  type: string
  capabilities: string[]
  metadata: Record<string, unknown>
  deployment_id: string | null
  team: string | null
}

/** An agent as the control plane stores it and the v1 config shows it (`agent` of GET /config). */
export interface AgentIdentity {
  agent_id: string
  agent_type: string
  capabilities: string[]
  metadata: Record<string, unknown>
  deployment_id: string | null
}

/** The `agent` of the input document: `team` is `metadata.team` when that is a string. */
export function agentInfoOf (a: AgentIdentity): AgentInfo {
  const team = a.metadata.team
  return {
    id: a.agent_id,
    type: a.agent_type,
    capabilities: a.capabilities,
    metadata: a.metadata,
    deployment_id: a.deployment_id,
    team: typeof team === 'string' ? team : null
  }
}

export interface NowInfo {
  iso: string
  /** 0-23, UTC. */
  hour: number
  /** Lower-case English day name, UTC: 'monday' ... 'sunday'. */
  weekday: string
}

export interface InputDocument {
  action: string
  agent: AgentInfo
  user_id: string | null
  tool: string | null
  tool_input: unknown
  model: string | null
  tokens: number | null
  text: string
  context: Record<string, unknown>
  now: NowInfo
}

export const LLM_ACTIONS: ReadonlySet<string> = new Set(['llm_call', 'llm.invoke', 'llm_invoke', 'chat'])
export const TOOL_ACTIONS: ReadonlySet<string> = new Set(['tool_call', 'tool.invoked', 'tool_use'])

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday']

/** Strings gathered into `text` stop here: deeper nesting is not searched. */
const MAX_TEXT_DEPTH = 16

let nowCache: { second: number, value: NowInfo } = { second: Number.NaN, value: { iso: '', hour: 0, weekday: '' } }

/** `now` for a time in ms; one frozen object per second, shared by the documents of that second. */
export function nowInfo (ms: number): NowInfo {
  const second = Math.floor(ms / 1000)
  if (nowCache.second === second) return nowCache.value
  const d = new Date(second * 1000)
  const value = Object.freeze({ iso: d.toISOString(), hour: d.getUTCHours(), weekday: WEEKDAYS[d.getUTCDay()] as string })
  nowCache = { second, value }
  return value
}

function isObject (v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

function str (v: unknown): string | null {
  return typeof v === 'string' ? v : null
}

function num (v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null
}

/** Every string value below `v` (object values and array items, depth-first, in order). */
function collectStrings (v: unknown, out: string[], depth: number): void {
  if (typeof v === 'string') {
    if (v !== '') out.push(v)
  } else if (depth < MAX_TEXT_DEPTH && v !== null && typeof v === 'object') {
    for (const item of Array.isArray(v) ? v : Object.values(v)) collectStrings(item, out, depth + 1)
  }
}

/** The text of chat messages: string contents, and the text parts of content arrays. */
function messagesText (messages: unknown, out: string[]): void {
  if (!Array.isArray(messages)) return
  for (const m of messages) {
    if (typeof m === 'string') {
      out.push(m)
      continue
    }
    if (!isObject(m)) continue
    const content = m.content
    if (typeof content === 'string') out.push(content)
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (typeof part === 'string') out.push(part)
        else if (isObject(part) && typeof part.text === 'string') out.push(part.text)
      }
    }
  }
}

/** Builds the input document of a v1 `/evaluate` body. */
export function buildInputV1 (body: Record<string, unknown>, agent: AgentInfo, now: number = Date.now()): InputDocument {
  const context = isObject(body.context) ? body.context : {}
  const toolInput = context.tool_input === undefined ? null : context.tool_input
  const parts: string[] = []
  if (typeof context.prompt === 'string' && context.prompt !== '') parts.push(context.prompt)
  if (typeof context.input === 'string' && context.input !== '') parts.push(context.input)
  collectStrings(toolInput, parts, 0)
  return {
    action: str(body.action) ?? '',
    agent,
    user_id: str(body.user_id),
    tool: str(context.tool) ?? str(context.tool_name),
    tool_input: toolInput,
    model: str(context.model),
    tokens: num(context.tokens) ?? num(context.tokens_requested),
    text: parts.length === 1 ? parts[0] as string : parts.join('\n'),
    context,
    now: nowInfo(now)
  }
}

/** Builds the input document of a legacy `/evaluate` body. */
export function buildInputLegacy (body: Record<string, unknown>, agent: AgentInfo, now: number = Date.now()): InputDocument {
  const context = isObject(body.context) ? body.context : {}
  const parts: string[] = []
  messagesText(body.messages, parts)
  return {
    action: str(body.request_type) ?? '',
    agent,
    user_id: str(context.user_id),
    tool: str(context.tool),
    tool_input: context.tool_input === undefined ? null : context.tool_input,
    model: str(body.model),
    tokens: num(body.tokens_requested),
    text: parts.length === 1 ? parts[0] as string : parts.join('\n'),
    context,
    now: nowInfo(now)
  }
}
