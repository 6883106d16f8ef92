/**
 * The approvals human_oversight policies consult (ApprovalSource of the engine). A decision blocked
 * by such a policy requests one (`apr_...`, told to the agent in a warning); an admin approves or
 * rejects it (GraphQL decideApproval); the agent's retry with `context.approval_id` is then allowed
 * once, and the approval is used. Decisions read a memory mirror of the open approvals (no I/O on the
 * decision path); writes go to the store, and the mirror is reloaded when the store's change counter
 * moves (another process decided one).
 */
import { randomBytes } from 'node:crypto'
import type { ApprovalSource, ApprovalState, Decision } from '../../shared/policy/index.js'
import type { AgentRecord, ApprovalRecord, Store } from '../store/store.js'

interface Entry {
  agentId: string
  state: ApprovalState
  agentUuid: string
  subject: string
}

export class Approvals implements ApprovalSource {
  private entries = new Map<string, Entry>()

  constructor (private readonly store: Store, private readonly onError: (err: unknown) => void) {}

  /** Reads the open approvals (pending and approved) from the store into the mirror. */
  async reload (): Promise<void> {
    const open = await this.store.openApprovals()
    const next = new Map<string, Entry>()
    for (const a of open) next.set(a.id, { agentId: a.agent_id, state: a.status, agentUuid: a.agent_uuid, subject: a.subject })
    // Requests made since the read began are kept (their write may not have landed yet).
    for (const [id, e] of this.entries) if (!next.has(id) && e.state === 'pending') next.set(id, e)
    this.entries = next
  }

  state (approvalId: string, agentId: string): ApprovalState {
    const e = this.entries.get(approvalId)
    return e === undefined || e.agentId !== agentId ? 'unknown' : e.state
  }

  consume (approvalId: string, agentId: string): void {
    const e = this.entries.get(approvalId)
    if (e === undefined || e.agentId !== agentId || e.state !== 'approved') return
    e.state = 'used'
    this.entries.delete(approvalId)
    this.store.markApprovalUsed(approvalId).catch(this.onError)
  }

  /**
   * The approval a blocked request needs: the agent's pending one for the same subject, or a new
   * one (returned at once; written to the store in the background).
   */
  request (agent: AgentRecord, subject: string, request: unknown, reason: string | null): string {
    for (const [id, e] of this.entries) {
      if (e.agentUuid === agent.id && e.subject === subject && e.state === 'pending') return id
    }
    const id = `apr_${randomBytes(12).toString('base64url')}`
    this.entries.set(id, { agentId: agent.agent_id, state: 'pending', agentUuid: agent.id, subject })
    const record: ApprovalRecord = {
      id,
      tenant_id: agent.tenant_id,
      agent_uuid: agent.id,
      agent_id: agent.agent_id,
      status: 'pending',
      subject,
      request,
      reason,
      created_at: new Date().toISOString(),
      decided_at: null,
      decided_by: null
    }
    this.store.createApproval(record).catch((err: unknown) => {
      this.entries.delete(id)
      this.onError(err)
    })
    return id
  }

  /**
   * A blocked decision: when a human_oversight policy failed, the approval it needs is requested and
   * named in a warning (a new decision object; `d` is not changed). Other decisions come back as they are.
   */
  forBlocked<D extends Decision> (agent: AgentRecord, d: D, tool: unknown, action: unknown, request: unknown): D {
    const failed = d.policies_evaluated.find((p) => p.result === 'fail' && p.type === 'human_oversight')
    if (d.allowed || failed === undefined) return d
    const id = this.request(agent, approvalSubject(tool, action), request, failed.message)
    return { ...d, warnings: [...d.warnings, approvalWarning(id)] }
  }

  /** An approval decided in this process: the mirror follows at once. */
  decided (approval: ApprovalRecord, state: 'approved' | 'rejected'): void {
    if (state === 'rejected') this.entries.delete(approval.id)
    else this.entries.set(approval.id, { agentId: approval.agent_id, state, agentUuid: approval.agent_uuid, subject: approval.subject })
  }
}

/** What a blocked request asked for, as an approval's subject: `tool <name>` or `action <name>`. */
export function approvalSubject (tool: unknown, action: unknown): string {
  return typeof tool === 'string' && tool !== '' ? `tool ${tool}` : `action ${typeof action === 'string' ? action : ''}`
}

/** The warning that tells an agent which approval to wait for and send back. */
export function approvalWarning (id: string): string {
  return `approval ${id} requested: once an admin approves it, send the request again with context.approval_id = "${id}"`
}
