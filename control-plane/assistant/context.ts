/**
 * The system context of a model-backed answer: the tenant's agents (status, health, last heartbeat),
 * policies and recent events, trimmed to fit (the newest events go first when space runs out). Never
 * a secret, a key or a sealed value: those tables are not read.
 */
import type { Store } from '../store/store.js'

/** Characters of context at most (about 8,000 tokens): fits every model the assistant offers. */
export const CONTEXT_CHARS = 32_000
const EVENTS = 50

export async function systemContext (store: Store, tenantId: string, pageContext: string | undefined): Promise<string> {
  const [agents, policies, events] = await Promise.all([
    store.listAgents(tenantId),
    store.listPolicies(tenantId),
    store.queryEvents(tenantId, { limit: EVENTS })
  ])
  const head = 'You are the assistant of agentgov, a governance control plane for LLM agents. Answer questions about ' +
    'this tenant\'s agents, policies and events from the data below; say when the data does not tell. Be brief.' +
    (pageContext === undefined ? '' : `\nThe user is looking at the portal page ${pageContext}.`)
  const sections = [
    `Agents (${agents.length}):\n` + agents.map((a) => `- ${a.agent_id} (${a.agent_type}): status ${a.status}, health ${a.health}, last heartbeat ${a.last_heartbeat ?? 'never'}, deployment ${a.deployment_id ?? '-'}`).join('\n'),
    `Policies (${policies.length}):\n` + policies.map((p) => `- ${p.name}: ${p.type}, scope ${p.scope_type} ${p.scope_id}, ${p.is_active ? 'active' : 'inactive'}, ${p.enforcement}, priority ${p.priority}, config ${JSON.stringify(p.config)}`).join('\n'),
    `Recent events (newest first, ${events.rows.length} of ${events.total}):\n` + events.rows.map((e) => `- ${e.received_at} ${e.agent_id} ${e.event_type}: ${JSON.stringify(e.payload).slice(0, 300)}`).join('\n')
  ]
  let text = `${head}\n\n${sections.join('\n\n')}`
  if (text.length > CONTEXT_CHARS) text = `${text.slice(0, CONTEXT_CHARS)}\n[trimmed]`
  return text
}
