/**
 * Resolvers of the management API. Every read and write is by the caller's tenant (from its JWT), so
 * an id of another tenant finds nothing; viewers read, admins also write. Policy configs are checked
 * with the engine's validatePolicy, and each problem comes back with its path. Writes go through the
 * store, which bumps the change counter: the directory (and the config watch streams of sidecars)
 * see them at once in this process, within the change poll in others.
 */
import mercurius from 'mercurius'
import type { AgentRecord, PolicyRecord, PolicyWrite, Store } from '../store/store.js'
import { AGENT_STATUSES, HEALTH_STATUSES, NameTakenError } from '../store/store.js'
import type { Directory } from '../policies/directory.js'
import { validatePolicy } from '../../shared/policy/index.js'
import type { User } from './auth.js'
import { secretAad, type AgentService } from '../agents/service.js'
import type { SecretBox } from '../../shared/secret-box.js'
import { mintKey } from '../../shared/keys.js'
import { createHash } from 'node:crypto'
import { AGENT_ID_PATTERN } from '../../shared/contracts/common.js'
import type { ApprovalRecord, ApprovalStatus, EvaluationQuery, EvaluationRow, EventQuery, EventRow, SecretRecord, SecretScope, TenantKeyRecord } from '../store/store.js'

export interface GqlContext {
  user: User
}

export interface ResolverDeps {
  store: Store
  directory: Directory
  agents: AgentService
  box: SecretBox
}

const MAX_PAGE = 200
const DEFAULT_PAGE = 50

type Args = Record<string, unknown>

const { ErrorWithProps, withFilter } = mercurius

function gqlError (code: string, message: string, extra: Record<string, unknown> = {}): InstanceType<typeof ErrorWithProps> {
  return new ErrorWithProps(message, { code, ...extra })
}

function requireAdmin (ctx: GqlContext): void {
  if (ctx.user.role !== 'admin') throw gqlError('FORBIDDEN', 'this needs the admin role; the token\'s role is viewer')
}

const upper = (v: string): string => v.toUpperCase()
const lower = (v: string): string => v.toLowerCase()

/** A cursor names the item a page ended on (opaque to clients). */
const cursorOf = (id: string): string => Buffer.from(`id:${id}`).toString('base64url')
function idOfCursor (cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!text.startsWith('id:')) throw gqlError('BAD_USER_INPUT', 'after: not a cursor this API gave out')
  return text.slice(3)
}

/** One page of `items` (already filtered and ordered, held whole) after the cursor `after`. */
function page<T extends { id: string }> (items: T[], args: Args, node: (item: T) => unknown): unknown {
  const { first, after } = pageArgs(args)
  let start = 0
  if (after !== undefined) {
    const at = items.findIndex((i) => i.id === after)
    if (at === -1) throw gqlError('BAD_USER_INPUT', 'after: the item of this cursor is no longer in the list')
    start = at + 1
  }
  return connection(items.slice(start, start + first + 1), items.length, first, node)
}

function agentNode (a: AgentRecord): Record<string, unknown> {
  return {
    id: a.id,
    agentId: a.agent_id,
    apiKeyPrefix: a.key_prefix,
    tenantId: a.tenant_id,
    status: upper(a.status),
    health: upper(a.health),
    capabilities: a.capabilities,
    lastHeartbeat: a.last_heartbeat,
    createdAt: a.created_at
  }
}

function policyNode (p: PolicyRecord): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    policyType: upper(p.type),
    scopeType: upper(p.scope_type),
    scopeId: p.scope_id,
    config: JSON.stringify(p.config),
    enforcement: upper(p.enforcement),
    priority: p.priority,
    isActive: p.is_active,
    version: p.version,
    tenantId: p.tenant_id,
    createdAt: p.created_at,
    updatedAt: p.updated_at
  }
}

const parseConfig = (text: unknown): Record<string, unknown> => jsonObject(text, 'config')

/** The write as the store takes it, checked by the engine; every problem is listed with its path. */
function checkedWrite (tenantId: string, w: PolicyWrite): PolicyWrite {
  const errors = validatePolicy({ name: w.name, type: w.type, enforcement: w.enforcement, priority: w.priority, is_active: w.is_active, scope_type: w.scope_type, scope_id: w.scope_id, config: w.config })
  if (w.name.trim() === '') errors.unshift({ path: 'name', message: 'must not be empty' })
  if (errors.length > 0) {
    throw gqlError('BAD_USER_INPUT', `invalid policy: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors })
  }
  return { ...w, scope_id: w.scope_type === 'ORG' && w.scope_id === '' ? tenantId : w.scope_id }
}

async function agentById (deps: ResolverDeps, tenantId: string, id: string): Promise<AgentRecord | undefined> {
  return (await deps.store.listAgents(tenantId)).find((a) => a.id === id)
}

const SECRET_NAME = /^[A-Za-z0-9_.-]{1,200}$/

/** A secret's id: its scope and name, which identify it within the tenant. */
const secretId = (s: Pick<SecretRecord, 'scope_type' | 'scope_id' | 'name'>): string =>
  Buffer.from(JSON.stringify([s.scope_type, s.scope_id, s.name])).toString('base64url')

function secretKeyOf (id: string): { scope_type: SecretScope, scope_id: string, name: string } {
  try {
    const [scopeType, scopeId, name] = JSON.parse(Buffer.from(id, 'base64url').toString('utf8')) as unknown[]
    if ((scopeType === 'tenant' || scopeType === 'deployment' || scopeType === 'agent') && typeof scopeId === 'string' && typeof name === 'string') {
      return { scope_type: scopeType, scope_id: scopeId, name }
    }
  } catch {}
  throw gqlError('NOT_FOUND', `no secret with id ${id}`)
}

function secretNode (s: SecretRecord): Record<string, unknown> {
  return { id: secretId(s), name: s.name, scopeType: upper(s.scope_type), scopeId: s.scope_id, updatedAt: s.updated_at }
}

function jsonObject (text: unknown, field: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text as string)
  } catch (err) {
    throw gqlError('BAD_USER_INPUT', `${field} is not JSON: ${(err as Error).message}`, { path: field })
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw gqlError('BAD_USER_INPUT', `${field} must be a JSON object`, { path: field })
  return value as Record<string, unknown>
}

function capabilitiesOf (value: unknown): string[] {
  const list = value as string[]
  if (list.length > 200 || list.some((c) => c.trim() === '' || c.length > 200)) throw gqlError('BAD_USER_INPUT', 'capabilities: at most 200, each 1 to 200 characters', { path: 'capabilities' })
  return list
}

/** An event as EventType; agentEndpoint is resolved by a loader from the hidden agent UUID. */
export function eventNode (e: EventRow): Record<string, unknown> {
  return { id: e.id, eventType: e.event_type, payload: JSON.stringify(e.payload ?? {}), timestamp: e.timestamp, agentUuid: e.agent_uuid, agentSlug: e.agent_id }
}

function isoArg (value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined
  const ms = Date.parse(value as string)
  if (!Number.isFinite(ms)) throw gqlError('BAD_USER_INPUT', `${field}: not a date and time`, { path: field })
  return new Date(ms).toISOString()
}

/** A tenant key's id: part of its hash's hash, which identifies it and tells nothing of the key. */
const tenantKeyId = (k: Pick<TenantKeyRecord, 'key_hash'>): string => `tkey_${createHash('sha256').update(k.key_hash).digest('hex').slice(0, 24)}`

function tenantKeyNode (k: TenantKeyRecord): Record<string, unknown> {
  return { id: tenantKeyId(k), keyPrefix: k.prefix, createdAt: k.created_at }
}

function approvalNode (a: ApprovalRecord): Record<string, unknown> {
  return {
    id: a.id, status: upper(a.status), subject: a.subject, request: JSON.stringify(a.request), reason: a.reason,
    createdAt: a.created_at, decidedAt: a.decided_at, decidedBy: a.decided_by, agentUuid: a.agent_uuid
  }
}

function evaluationNode (e: EvaluationRow): Record<string, unknown> {
  return { id: e.id, allowed: e.allowed, reason: e.reason, request: JSON.stringify(e.request), decision: JSON.stringify(e.decision), createdAt: e.created_at, agentUuid: e.agent_uuid }
}

/** The arguments of a paginated list: the page size (1 to 200) and the item id the previous page ended on. */
function pageArgs (args: Args): { first: number, after: string | undefined } {
  const first = args.first === undefined || args.first === null ? DEFAULT_PAGE : args.first as number
  if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE) throw gqlError('BAD_USER_INPUT', `first must be 1 to ${MAX_PAGE}`)
  return { first, after: typeof args.after === 'string' ? idOfCursor(args.after) : undefined }
}

/** A connection from a store page fetched with limit first + 1 (the extra row says a next page exists). */
function connection<T extends { id: string }> (rows: T[], total: number, first: number, node: (row: T) => unknown): unknown {
  const pageRows = rows.slice(0, first)
  return {
    edges: pageRows.map((r) => ({ cursor: cursorOf(r.id), node: node(r) })),
    pageInfo: { hasNextPage: rows.length > first, endCursor: pageRows.length === 0 ? null : cursorOf((pageRows[pageRows.length - 1] as T).id) },
    totalCount: total
  }
}

const EMPTY_CONNECTION = { edges: [], pageInfo: { hasNextPage: false, endCursor: null }, totalCount: 0 }

/** The topic of a tenant's new events (the management API's live feed). */
export const eventsTopic = (tenantId: string): string => `events:${tenantId}`

/**
 * Loaders: every agentEndpoint of one query's events comes from one read of the tenant's agents,
 * not one read per event.
 */
export function loaders (deps: Pick<ResolverDeps, 'store'>): Record<string, Record<string, unknown>> {
  const agentEndpoint = async (queries: Array<{ obj: { agentUuid: string } }>, ctx: GqlContext): Promise<unknown[]> => {
    const byId = new Map((await deps.store.listAgents(ctx.user.tenantId)).map((a) => [a.id, a]))
    return queries.map((q) => {
      const a = byId.get(q.obj.agentUuid)
      if (a === undefined) throw gqlError('NOT_FOUND', 'the agent endpoint is gone')
      return agentNode(a)
    })
  }
  return { EventType: { agentEndpoint }, EvaluationType: { agentEndpoint }, ApprovalType: { agentEndpoint } }
}

export function resolvers (deps: ResolverDeps): Record<string, Record<string, unknown>> {
  const { store, directory, agents, box } = deps
  /**
   * What events and evaluations are filtered by alike: the agent (by agentId; undefined when the
   * tenant has no such agent, so the list is empty), the time range, and the page.
   */
  const listFilter = async (tenantId: string, f: Record<string, unknown>, first: number, after: string | undefined):
  Promise<{ agentUuid?: string, from?: string, to?: string, after?: string, limit: number } | undefined> => {
    const q: { agentUuid?: string, from?: string, to?: string, after?: string, limit: number } = { limit: first + 1 }
    if (typeof f.agentId === 'string') {
      const agent = await store.getAgent(tenantId, f.agentId)
      if (agent === undefined) return undefined
      q.agentUuid = agent.id
    }
    const from = isoArg(f.from, 'from')
    const to = isoArg(f.to, 'to')
    if (from !== undefined) q.from = from
    if (to !== undefined) q.to = to
    if (after !== undefined) q.after = after
    return q
  }
  const agentOr404 = async (tenantId: string, id: string): Promise<AgentRecord> => {
    const a = await agentById(deps, tenantId, id)
    if (a === undefined) throw gqlError('NOT_FOUND', `no agent endpoint with id ${id}`)
    return a
  }
  const findSecret = async (tenantId: string, id: string): Promise<SecretRecord> => {
    const k = secretKeyOf(id)
    const s = (await store.listSecrets(tenantId)).find((x) => x.scope_type === k.scope_type && x.scope_id === k.scope_id && x.name === k.name)
    if (s === undefined) throw gqlError('NOT_FOUND', `no secret with id ${id}`)
    return s
  }
  const storeSecret = async (record: Omit<SecretRecord, 'value_sealed' | 'updated_at'>, value: string): Promise<SecretRecord> => {
    if (value.length > 64 * 1024) throw gqlError('BAD_USER_INPUT', 'value: at most 64 KiB', { path: 'value' })
    const saved: SecretRecord = { ...record, value_sealed: box.seal(value, secretAad(record)), updated_at: new Date().toISOString() }
    await store.setSecret(saved)
    await directory.changed()
    return saved
  }
  const policyOr404 = async (tenantId: string, id: string): Promise<PolicyRecord> => {
    const p = await store.getPolicy(tenantId, id)
    if (p === undefined) throw gqlError('NOT_FOUND', `no policy with id ${id}`)
    return p
  }
  const save = async (tenantId: string, id: string, w: PolicyWrite): Promise<PolicyRecord> => {
    let saved: PolicyRecord | undefined
    try {
      saved = await store.updatePolicy(tenantId, id, checkedWrite(tenantId, w))
    } catch (err) {
      if (err instanceof NameTakenError) throw gqlError('CONFLICT', err.message, { path: 'name' })
      throw err
    }
    if (saved === undefined) throw gqlError('NOT_FOUND', `no policy with id ${id}`)
    await directory.changed()
    return saved
  }
  const setStatus = async (ctx: GqlContext, id: string, status: 'active' | 'suspended'): Promise<unknown> => {
    requireAdmin(ctx)
    const agent = await agentById(deps, ctx.user.tenantId, id)
    if (agent === undefined) throw gqlError('NOT_FOUND', `no agent endpoint with id ${id}`)
    if (agent.status === 'terminated') throw gqlError('CONFLICT', 'the agent endpoint is terminated')
    await store.setAgentStatus(agent.id, status, agent.health)
    await directory.changed()
    return agentNode((await agentById(deps, ctx.user.tenantId, id)) as AgentRecord)
  }

  return {
    Query: {
      agentEndpoints: async (_: unknown, args: Args, ctx: GqlContext) => {
        const f = (args.filter ?? {}) as Record<string, string | undefined | null>
        const search = typeof f.search === 'string' ? f.search.toLowerCase() : undefined
        const agents = (await store.listAgents(ctx.user.tenantId))
          .filter((a) => (f.status == null || a.status === lower(f.status)) &&
            (f.health == null || a.health === lower(f.health)) &&
            (f.agentType == null || a.agent_type === f.agentType) &&
            (search === undefined || a.agent_id.toLowerCase().includes(search) || a.name.toLowerCase().includes(search)))
          .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.id.localeCompare(b.id))
        return page(agents, args, agentNode)
      },
      agentEndpoint: async (_: unknown, args: Args, ctx: GqlContext) => {
        const a = await agentById(deps, ctx.user.tenantId, args.id as string)
        return a === undefined ? null : agentNode(a)
      },
      policies: async (_: unknown, args: Args, ctx: GqlContext) => {
        const f = (args.filter ?? {}) as Record<string, string | boolean | undefined | null>
        const search = typeof f.search === 'string' ? f.search.toLowerCase() : undefined
        const policies = (await store.listPolicies(ctx.user.tenantId))
          .filter((p) => (f.policyType == null || p.type === lower(f.policyType as string)) &&
            (f.scopeType == null || p.scope_type === f.scopeType) &&
            (f.scopeId == null || p.scope_id === f.scopeId) &&
            (f.isActive == null || p.is_active === f.isActive) &&
            (search === undefined || p.name.toLowerCase().includes(search)))
          .sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id))
        return page(policies, args, policyNode)
      },
      policy: async (_: unknown, args: Args, ctx: GqlContext) => {
        const p = await store.getPolicy(ctx.user.tenantId, args.id as string)
        return p === undefined ? null : policyNode(p)
      },
      secrets: async (_: unknown, _args: Args, ctx: GqlContext) => (await store.listSecrets(ctx.user.tenantId)).map(secretNode),
      events: async (_: unknown, args: Args, ctx: GqlContext) => {
        const f = (args.filter ?? {}) as Record<string, unknown>
        const { first, after } = pageArgs(args)
        const common = await listFilter(ctx.user.tenantId, f, first, after)
        if (common === undefined) return EMPTY_CONNECTION
        const q: EventQuery = { ...common }
        if (typeof f.eventType === 'string') q.eventType = f.eventType
        if (typeof f.category === 'string') q.category = f.category
        const { rows, total } = await store.queryEvents(ctx.user.tenantId, q)
        return connection(rows, total, first, eventNode)
      },
      evaluations: async (_: unknown, args: Args, ctx: GqlContext) => {
        const f = (args.filter ?? {}) as Record<string, unknown>
        const { first, after } = pageArgs(args)
        const common = await listFilter(ctx.user.tenantId, f, first, after)
        if (common === undefined) return EMPTY_CONNECTION
        const q: EvaluationQuery = { ...common }
        if (typeof f.allowed === 'boolean') q.allowed = f.allowed
        const { rows, total } = await store.queryEvaluations(ctx.user.tenantId, q)
        return connection(rows, total, first, evaluationNode)
      },
      effectivePolicies: async (_: unknown, args: Args, ctx: GqlContext) => {
        const tenantId = ctx.user.tenantId
        const agent = await store.getAgent(tenantId, args.agentId as string)
        if (agent === undefined) throw gqlError('NOT_FOUND', `no agent endpoint with agentId ${String(args.agentId)}`)
        const compiled = await directory.forAgent(agent)
        const byId = new Map((await store.listPolicies(tenantId)).map((p) => [p.id, p]))
        return compiled.set.policies.flatMap((c) => {
          const record = byId.get(c.id)
          return record === undefined ? [] : [{ policy: policyNode(record), logic: JSON.stringify(c.logic), error: c.error ?? null }]
        })
      },
      tenantApiKeys: async (_: unknown, _args: Args, ctx: GqlContext) => (await store.listTenantKeys(ctx.user.tenantId)).map(tenantKeyNode),
      approvals: async (_: unknown, args: Args, ctx: GqlContext) => {
        const status = typeof args.status === 'string' ? lower(args.status) as ApprovalStatus : undefined
        return (await store.listApprovals(ctx.user.tenantId, status)).map(approvalNode)
      },
      overview: async (_: unknown, _args: Args, ctx: GqlContext) => {
        const tenantId = ctx.user.tenantId
        const agentsList = await store.listAgents(tenantId)
        const count = <T extends string>(values: readonly T[], of: (a: AgentRecord) => T, list: AgentRecord[]): unknown[] =>
          values.map((v) => ({ value: upper(v), count: list.filter((a) => of(a) === v).length }))
        const hourMs = 3_600_000
        const currentHour = Math.floor(Date.now() / hourMs) * hourMs
        const hours = Array.from({ length: 24 }, (_, i) => new Date(currentHour - (23 - i) * hourMs).toISOString())
        const { events, blocked } = await store.hourlyCounts(tenantId, hours[0] as string)
        const series = (m: Map<string, number>): unknown[] => hours.map((h) => ({ hour: h, count: m.get(h.slice(0, 13)) ?? 0 }))
        return {
          agentsByStatus: count(AGENT_STATUSES, (a) => a.status, agentsList),
          agentsByHealth: count(HEALTH_STATUSES, (a) => a.health, agentsList.filter((a) => a.status !== 'terminated')),
          eventsPerHour: series(events),
          blockedPerHour: series(blocked)
        }
      }
    },
    Subscription: {
      eventAdded: {
        subscribe: withFilter(
          async (_: unknown, _args: Args, ctx: GqlContext & { pubsub: { subscribe: (topic: string) => Promise<unknown> } }) => await ctx.pubsub.subscribe(eventsTopic(ctx.user.tenantId)),
          (payload: { eventAdded: { agentSlug: string } }, args: Args) => args.agentId === undefined || args.agentId === null || payload.eventAdded.agentSlug === args.agentId
        )
      }
    },
    Mutation: {
      createPolicy: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const input = args.input as Record<string, unknown>
        const tenantId = ctx.user.tenantId
        const w = checkedWrite(tenantId, {
          name: input.name as string,
          type: lower(input.policyType as string),
          scope_type: input.scopeType as string,
          scope_id: typeof input.scopeId === 'string' ? input.scopeId : '',
          config: parseConfig(input.config),
          enforcement: typeof input.enforcement === 'string' ? lower(input.enforcement) : 'enforce',
          priority: typeof input.priority === 'number' ? input.priority : 0,
          is_active: input.isActive !== false
        })
        if ((await store.listPolicies(tenantId)).some((p) => p.name === w.name)) throw gqlError('CONFLICT', `a policy named "${w.name}" exists already`, { path: 'name' })
        const [created] = await store.upsertPolicies(tenantId, [w])
        await directory.changed()
        return policyNode(created as PolicyRecord)
      },
      updatePolicy: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const tenantId = ctx.user.tenantId
        const id = args.id as string
        const current = await policyOr404(tenantId, id)
        const input = args.input as Record<string, unknown>
        const saved = await save(tenantId, id, {
          name: typeof input.name === 'string' ? input.name : current.name,
          type: typeof input.policyType === 'string' ? lower(input.policyType) : current.type,
          scope_type: typeof input.scopeType === 'string' ? input.scopeType : current.scope_type,
          scope_id: typeof input.scopeId === 'string' ? input.scopeId : current.scope_id,
          config: input.config === undefined || input.config === null ? current.config : parseConfig(input.config),
          enforcement: typeof input.enforcement === 'string' ? lower(input.enforcement) : current.enforcement,
          priority: typeof input.priority === 'number' ? input.priority : current.priority,
          is_active: typeof input.isActive === 'boolean' ? input.isActive : current.is_active
        })
        return policyNode(saved)
      },
      deletePolicy: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const deleted = await store.deletePolicy(ctx.user.tenantId, args.id as string)
        if (deleted) await directory.changed()
        return deleted
      },
      setPolicyActive: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const tenantId = ctx.user.tenantId
        const id = args.id as string
        const current = await policyOr404(tenantId, id)
        return policyNode(await save(tenantId, id, { ...current, is_active: args.isActive as boolean }))
      },
      suspendAgentEndpoint: async (_: unknown, args: Args, ctx: GqlContext) => await setStatus(ctx, args.id as string, 'suspended'),
      activateAgentEndpoint: async (_: unknown, args: Args, ctx: GqlContext) => await setStatus(ctx, args.id as string, 'active'),
      createAgentEndpoint: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const input = args.input as Record<string, unknown>
        const agentId = typeof input.agentId === 'string' ? input.agentId : undefined
        if (agentId !== undefined && !new RegExp(AGENT_ID_PATTERN).test(agentId)) {
          throw gqlError('BAD_USER_INPUT', 'agentId: lower-case letters, digits, _ and -, at most 100, starting with a letter or digit', { path: 'agentId' })
        }
        const name = typeof input.name === 'string' ? input.name.trim() : undefined
        if (name !== undefined && (name === '' || name.length > 200)) throw gqlError('BAD_USER_INPUT', 'name: 1 to 200 characters', { path: 'name' })
        const agentType = (input.agentType as string).trim()
        if (agentType === '' || agentType.length > 100) throw gqlError('BAD_USER_INPUT', 'agentType: 1 to 100 characters', { path: 'agentType' })
        let created
        try {
          created = await agents.register({
            tenantId: ctx.user.tenantId,
            agentId,
            slugBase: name ?? agentType,
            name,
            agentType,
            capabilities: Array.isArray(input.capabilities) ? capabilitiesOf(input.capabilities) : [],
            metadata: input.metadata === undefined || input.metadata === null ? {} : jsonObject(input.metadata, 'metadata'),
            deploymentId: typeof input.deploymentId === 'string' && input.deploymentId !== '' ? input.deploymentId : null,
            contract: input.contract === 'LEGACY' ? 'legacy' : 'v1'
          })
        } catch (err) {
          if ((err as { statusCode?: number }).statusCode === 409) throw gqlError('CONFLICT', (err as Error).message, { path: 'agentId' })
          throw err
        }
        return { agentEndpoint: agentNode(created.agent), apiKey: created.key.key }
      },
      updateAgentEndpoint: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const tenantId = ctx.user.tenantId
        const current = await agentOr404(tenantId, args.id as string)
        const input = args.input as Record<string, unknown>
        const name = typeof input.name === 'string' ? input.name.trim() : current.name
        if (name === '' || name.length > 200) throw gqlError('BAD_USER_INPUT', 'name: 1 to 200 characters', { path: 'name' })
        await store.updateAgent(tenantId, current.id, {
          name,
          capabilities: Array.isArray(input.capabilities) ? capabilitiesOf(input.capabilities) : current.capabilities,
          metadata: input.metadata === undefined || input.metadata === null ? current.metadata : jsonObject(input.metadata, 'metadata'),
          deployment_id: input.deploymentId === undefined ? current.deployment_id : (input.deploymentId === null || input.deploymentId === '' ? null : input.deploymentId as string)
        })
        await directory.changed()
        return agentNode(await agentOr404(tenantId, current.id))
      },
      deleteAgentEndpoint: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const agent = await agentById(deps, ctx.user.tenantId, args.id as string)
        if (agent === undefined || agent.status === 'terminated') return false
        await agents.deregister(agent)
        return true
      },
      rotateAgentApiKey: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const tenantId = ctx.user.tenantId
        const agent = await agentOr404(tenantId, args.id as string)
        if (agent.status === 'terminated') throw gqlError('CONFLICT', 'the agent endpoint is terminated')
        const key = mintKey(agent.contract === 'v1' ? 'agentV1' : 'agentLegacy')
        await store.setAgentKey(tenantId, agent.id, key.hash, key.prefix)
        await directory.changed()
        return { agentEndpoint: agentNode(await agentOr404(tenantId, agent.id)), apiKey: key.key }
      },
      createSecret: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const input = args.input as Record<string, unknown>
        const name = input.name as string
        if (!SECRET_NAME.test(name)) throw gqlError('BAD_USER_INPUT', 'name: letters, digits, _ . - (1 to 200)', { path: 'name' })
        const scopeType = lower(input.scopeType as string) as SecretScope
        const scopeId = scopeType === 'tenant' ? '' : typeof input.scopeId === 'string' ? input.scopeId.trim() : ''
        if (scopeType !== 'tenant' && (scopeId === '' || scopeId.length > 200)) throw gqlError('BAD_USER_INPUT', `scopeId: the ${scopeType} it is granted to (1 to 200 characters)`, { path: 'scopeId' })
        const record = { tenant_id: ctx.user.tenantId, scope_type: scopeType, scope_id: scopeId, name }
        if ((await store.listSecrets(record.tenant_id)).some((x) => x.scope_type === scopeType && x.scope_id === scopeId && x.name === name)) {
          throw gqlError('CONFLICT', `a secret named "${name}" exists already in this scope; use updateSecret`, { path: 'name' })
        }
        return secretNode(await storeSecret(record, input.value as string))
      },
      updateSecret: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const current = await findSecret(ctx.user.tenantId, args.id as string)
        const { value_sealed: _sealed, updated_at: _at, ...record } = current
        return secretNode(await storeSecret(record, (args.input as { value: string }).value))
      },
      createTenantApiKey: async (_: unknown, _args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const key = mintKey('tenant')
        await store.addTenantKey(ctx.user.tenantId, key.hash, key.prefix)
        const stored = (await store.listTenantKeys(ctx.user.tenantId)).find((k) => k.key_hash === key.hash) as TenantKeyRecord
        return { tenantApiKey: tenantKeyNode(stored), apiKey: key.key }
      },
      revokeTenantApiKey: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const key = (await store.listTenantKeys(ctx.user.tenantId)).find((k) => tenantKeyId(k) === args.id)
        return key === undefined ? false : await store.deleteTenantKey(ctx.user.tenantId, key.key_hash)
      },
      decideApproval: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        const tenantId = ctx.user.tenantId
        const id = args.id as string
        const current = await store.getApproval(tenantId, id)
        if (current === undefined) throw gqlError('NOT_FOUND', `no approval with id ${id}`)
        const state = args.approve === true ? 'approved' : 'rejected'
        if (!await store.decideApproval(tenantId, id, state, ctx.user.sub)) {
          throw gqlError('CONFLICT', `the approval is ${current.status} already`)
        }
        directory.approvals.decided(current, state)
        return approvalNode(await store.getApproval(tenantId, id) as ApprovalRecord)
      },
      deleteSecret: async (_: unknown, args: Args, ctx: GqlContext) => {
        requireAdmin(ctx)
        let k
        try {
          k = secretKeyOf(args.id as string)
        } catch {
          return false
        }
        const deleted = await store.deleteSecret(ctx.user.tenantId, k.scope_type, k.scope_id, k.name)
        if (deleted) await directory.changed()
        return deleted
      }
    }
  }
}
