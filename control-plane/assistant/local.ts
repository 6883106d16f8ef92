/**
 * The built-in `local` assistant provider: no model and no network. It recognises the common
 * questions about a tenant (how many agents, which are unhealthy, which policies apply to an agent,
 * what was blocked recently and why, what a policy does) and answers them from the store, so that a
 * fresh `npm start` has a working assistant. Anything else gets the list of what it can answer.
 * Answers never hold a secret or a key: they are built from agents, policies and events only.
 */
import type { AgentRecord, EventRow, PolicyRecord, Store } from '../store/store.js'
import type { Directory } from '../policies/directory.js'

export interface LocalContext {
  store: Store
  directory: Directory
  tenantId: string
}

const BLOCKS_SHOWN = 10

/** What each policy type checks, in a sentence. */
const TYPE_TEXT: Record<string, string> = {
  rate_limit: 'limits how many requests (or tokens) an agent may make per minute, hour or day',
  tool_permission: 'decides which tools an agent may call (allow and deny lists, argument rules)',
  model_restriction: 'decides which models an agent may use, and caps max_tokens',
  content_filter: 'scans prompts and tool input for PII, secrets and denied patterns',
  budget_limit: 'caps the money spent (cost_usd of events) per day or month',
  network_policy: 'decides which domains an agent may reach',
  human_oversight: 'makes matching actions wait for an approval by a human',
  custom: 'runs a JSON-logic rule of your own over the request'
}

function listOf (items: string[]): string {
  if (items.length <= 1) return items.join('')
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] as string}`
}

function mentioned<T> (message: string, items: T[], name: (item: T) => string): T | undefined {
  const text = message.toLowerCase()
  // The longest name first: "support-bot-eu" before "support-bot".
  return [...items].sort((a, b) => name(b).length - name(a).length).find((i) => {
    const n = name(i).toLowerCase()
    return n !== '' && new RegExp(`(^|[^a-z0-9_-])${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^a-z0-9_-])`).test(text)
  })
}

async function agentCount (ctx: LocalContext): Promise<string> {
  const agents = await ctx.store.listAgents(ctx.tenantId)
  const live = agents.filter((a) => a.status !== 'terminated')
  if (live.length === 0) return 'There are no agents registered yet. Register one with the bootstrap token (POST /api/service/v1/register).'
  const byStatus = new Map<string, number>()
  for (const a of live) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1)
  const parts = [...byStatus].sort((a, b) => b[1] - a[1]).map(([s, n]) => `${n} ${s}`)
  return `There ${live.length === 1 ? 'is 1 agent' : `are ${live.length} agents`}: ${listOf(parts)}.`
}

async function unhealthy (ctx: LocalContext): Promise<string> {
  const agents = (await ctx.store.listAgents(ctx.tenantId)).filter((a) => a.status !== 'terminated')
  const bad = agents.filter((a) => a.health === 'unhealthy' || a.health === 'degraded')
  if (bad.length === 0) return agents.length === 0 ? 'There are no agents yet.' : `None of the ${agents.length} agents is unhealthy or degraded.`
  const lines = bad.map((a) => `- ${a.agent_id}: ${a.health}, last heartbeat ${a.last_heartbeat ?? 'never'}`)
  return `${bad.length} of ${agents.length} agents ${bad.length === 1 ? 'is' : 'are'} unhealthy or degraded:\n${lines.join('\n')}`
}

function describe (p: PolicyRecord): string {
  const what = TYPE_TEXT[p.type] ?? 'is a policy of an unknown type'
  const scope = p.scope_type === 'ORG' ? 'the whole tenant' : `${p.scope_type.toLowerCase()} ${p.scope_id}`
  return `"${p.name}" (${p.type}) ${what}. It applies to ${scope}, is ${p.is_active ? 'active' : 'inactive'}, ` +
    `enforcement ${p.enforcement}, priority ${p.priority}, version ${p.version}. Config: ${JSON.stringify(p.config)}`
}

async function policiesOf (ctx: LocalContext, agent: AgentRecord): Promise<string> {
  const compiled = await ctx.directory.forAgent(agent)
  const names = compiled.set.policies.map((p) => `${p.name} (${p.type}${p.enforcement === 'enforce' ? '' : `, ${p.enforcement}`})`)
  if (names.length === 0) return `No policy applies to ${agent.agent_id}: every action it asks about is allowed.`
  return `${names.length} ${names.length === 1 ? 'policy applies' : 'policies apply'} to ${agent.agent_id}, in evaluation order: ${listOf(names)}.`
}

async function recentBlocks (ctx: LocalContext, agent: AgentRecord | undefined): Promise<string> {
  const q = { limit: BLOCKS_SHOWN, eventType: 'policy.blocked', ...(agent === undefined ? {} : { agentUuid: agent.id }) }
  const { rows, total } = await ctx.store.queryEvents(ctx.tenantId, q)
  const evaluations = (await ctx.store.queryEvaluations(ctx.tenantId, { limit: BLOCKS_SHOWN, allowed: false, ...(agent === undefined ? {} : { agentUuid: agent.id }) }))
  const who = agent === undefined ? '' : ` for ${agent.agent_id}`
  if (total === 0 && evaluations.total === 0) return `Nothing was blocked recently${who}.`
  const lines = rows.map((e: EventRow) => {
    const p = (e.payload ?? {}) as { reason?: unknown, tool?: unknown, action?: unknown }
    const what = typeof p.tool === 'string' ? `tool ${p.tool}` : `action ${String(p.action ?? '?')}`
    return `- ${e.received_at} ${e.agent_id}: ${what}: ${String(p.reason ?? 'no reason recorded')}`
  })
  for (const e of evaluations.rows) lines.push(`- ${e.created_at} (legacy ${e.id}): ${e.reason ?? 'no reason recorded'}`)
  return `${total + evaluations.total} blocked decision${total + evaluations.total === 1 ? '' : 's'}${who}; the latest:\n${lines.slice(0, BLOCKS_SHOWN).join('\n')}`
}

const HELP = 'I am the built-in assistant (no language model is configured: add one under Settings, LLM providers). ' +
  'I can answer: how many agents there are; which agents are unhealthy; which policies apply to an agent (name it); ' +
  'what was blocked recently and why (for all agents or one); what a policy does (name it).'

/** The answer to one question, from the store. */
export async function localAnswer (message: string, ctx: LocalContext): Promise<string> {
  const text = message.toLowerCase()
  const agents = (await ctx.store.listAgents(ctx.tenantId)).filter((a) => a.status !== 'terminated')
  const agent = mentioned(message, agents, (a) => a.agent_id)
  const policies = await ctx.store.listPolicies(ctx.tenantId)
  const policy = mentioned(message, policies, (p) => p.name)
  if (/\bblock|denied|refused|rejected/.test(text)) return await recentBlocks(ctx, agent)
  if (/unhealthy|health|degraded|down\b|failing/.test(text)) return await unhealthy(ctx)
  if (/polic(y|ies)|rules?\b|apply|applies/.test(text)) {
    if (agent !== undefined) return await policiesOf(ctx, agent)
    if (policy !== undefined) return describe(policy)
    if (policies.length === 0) return 'There are no policies yet: every action is allowed.'
    return `There ${policies.length === 1 ? 'is 1 policy' : `are ${policies.length} policies`}: ${listOf(policies.map((p) => `${p.name} (${p.type})`))}. Name an agent to see which apply to it, or a policy to see what it does.`
  }
  if (policy !== undefined && /what|explain|does|do\b|mean/.test(text)) return describe(policy)
  if (/how many|number of|count|agents?\b/.test(text)) return await agentCount(ctx)
  return HELP
}

/** An answer as the chunks of a stream: its lines, each with its line break. */
export function chunksOf (answer: string): string[] {
  return answer.split(/(?<=\n)/).flatMap((line) => line.length <= 200 ? [line] : line.match(/.{1,200}(\s|$)|.{1,200}/g) ?? [line])
}
