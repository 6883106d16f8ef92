/**
 * The assistant's read-only tools, for models that call functions: they answer from the store of the
 * caller's tenant instead of stuffing the prompt. None reads a secret, a key or a sealed value.
 */
import type { Store } from '../store/store.js'
import type { Directory } from '../policies/directory.js'

export interface ToolDefinition {
  name: string
  description: string
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>
}

export interface ToolSet {
  definitions: ToolDefinition[]
  /** Runs a tool; the answer is JSON text (an unknown tool or bad arguments answer with an error). */
  run: (name: string, args: unknown) => Promise<string>
}

/** Characters of one tool answer at most. */
export const TOOL_ANSWER_CHARS = 8_000

const AGENT_ARG = { type: 'object', properties: { agent_id: { type: 'string', description: 'the agent\'s agentId (slug)' } }, required: ['agent_id'] }
const OPTIONAL_AGENT = { type: 'object', properties: { agent_id: { type: 'string', description: 'only this agent (agentId); all agents when left out' }, limit: { type: 'integer', minimum: 1, maximum: 50 } } }

export const TOOL_DEFINITIONS: ToolDefinition[] = [
  { name: 'list_agents', description: 'The tenant\'s agents: agentId, type, status, health, last heartbeat, deployment.', parameters: { type: 'object', properties: {} } },
  { name: 'get_agent', description: 'One agent in full: capabilities, metadata, status, health, last heartbeat.', parameters: AGENT_ARG },
  { name: 'list_policies', description: 'The tenant\'s policies: name, type, scope, enforcement, priority, active, config.', parameters: { type: 'object', properties: {} } },
  { name: 'effective_policies', description: 'The policies that apply to one agent, in evaluation order.', parameters: AGENT_ARG },
  { name: 'recent_events', description: 'The latest events, newest first (type, category, agent, payload).', parameters: OPTIONAL_AGENT },
  { name: 'recent_blocks', description: 'The latest blocked decisions with their reasons.', parameters: OPTIONAL_AGENT }
]

function json (value: unknown): string {
  const text = JSON.stringify(value)
  return text.length <= TOOL_ANSWER_CHARS ? text : `${text.slice(0, TOOL_ANSWER_CHARS)}...[trimmed]`
}

export function toolSet (store: Store, directory: Directory, tenantId: string): ToolSet {
  const agentOf = async (args: unknown): Promise<ReturnType<Store['getAgent']> extends Promise<infer A> ? A : never> => {
    const id = (args as { agent_id?: unknown } | null)?.agent_id
    return typeof id === 'string' ? await store.getAgent(tenantId, id) : undefined
  }
  const limitOf = (args: unknown): number => {
    const n = (args as { limit?: unknown } | null)?.limit
    return typeof n === 'number' && Number.isInteger(n) ? Math.min(50, Math.max(1, n)) : 20
  }
  return {
    definitions: TOOL_DEFINITIONS,
    run: async (name, args) => {
      switch (name) {
        case 'list_agents':
          return json((await store.listAgents(tenantId)).map((a) => ({ agent_id: a.agent_id, agent_type: a.agent_type, status: a.status, health: a.health, last_heartbeat: a.last_heartbeat, deployment_id: a.deployment_id })))
        case 'get_agent': {
          const a = await agentOf(args)
          if (a === undefined) return json({ error: 'no such agent: send agent_id (its slug)' })
          return json({ agent_id: a.agent_id, name: a.name, agent_type: a.agent_type, capabilities: a.capabilities, metadata: a.metadata, deployment_id: a.deployment_id, status: a.status, health: a.health, last_heartbeat: a.last_heartbeat, created_at: a.created_at })
        }
        case 'list_policies':
          return json((await store.listPolicies(tenantId)).map((p) => ({ name: p.name, type: p.type, scope_type: p.scope_type, scope_id: p.scope_id, enforcement: p.enforcement, priority: p.priority, is_active: p.is_active, config: p.config })))
        case 'effective_policies': {
          const a = await agentOf(args)
          if (a === undefined) return json({ error: 'no such agent: send agent_id (its slug)' })
          return json((await directory.forAgent(a)).set.policies.map((p) => ({ name: p.name, type: p.type, enforcement: p.enforcement, priority: p.priority })))
        }
        case 'recent_events':
        case 'recent_blocks': {
          const a = await agentOf(args)
          const { rows } = await store.queryEvents(tenantId, { limit: limitOf(args), ...(name === 'recent_blocks' ? { eventType: 'policy.blocked' } : {}), ...(a === undefined ? {} : { agentUuid: a.id }) })
          return json(rows.map((e) => ({ at: e.received_at, agent_id: e.agent_id, type: e.event_type, category: e.category, payload: e.payload })))
        }
        default:
          return json({ error: `no tool named ${name}` })
      }
    }
  }
}
