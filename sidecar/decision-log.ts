/**
 * Decisions the sidecar made, sent on to the control plane as audit events (issue 4: "decision
 * outcomes are sent on as audit events, policy.blocked for blocks"). A block becomes a `policy.blocked`
 * event of the agent. The hot path only queues in memory; the queue goes into the spool in one
 * transaction every `intervalMs` (or at `maxQueued`), and from there to the control plane with the
 * agent's other events. A crash can lose what was queued in the last interval: these events are the
 * sidecar's own record, never something an agent was told is stored.
 */
import type { Decision } from '../shared/policy/index.js'
import { blockedPayload } from '../shared/contracts/v1.js'
import type { Spool, SpoolContract } from './spool.js'

interface Queued {
  keyHash: string
  contract: SpoolContract
  agentId: string
  event: Record<string, unknown>
}

export interface DecisionLogOptions {
  intervalMs: number
  maxQueued: number
}

export const DEFAULT_DECISION_LOG_OPTIONS: DecisionLogOptions = {
  intervalMs: 200,
  maxQueued: 1_000
}

export class DecisionLog {
  private queue: Queued[] = []
  private timer: NodeJS.Timeout | null = null
  private readonly opts: DecisionLogOptions

  constructor (private readonly spool: Spool, options: Partial<DecisionLogOptions> = {}) {
    this.opts = { ...DEFAULT_DECISION_LOG_OPTIONS, ...options }
  }

  /** Notes a v1 decision; only blocks are sent on. */
  record (keyHash: string, agentId: string, body: Record<string, unknown>, d: Pick<Decision, 'allowed' | 'reason' | 'policies_evaluated'>): void {
    if (d.allowed) return
    const context = (body.context ?? {}) as Record<string, unknown>
    this.enqueue({
      keyHash,
      contract: 'v1',
      agentId,
      event: {
        type: 'policy.blocked',
        category: 'audit',
        timestamp: new Date().toISOString(),
        user_id: typeof body.user_id === 'string' ? body.user_id : null,
        payload: blockedPayload(body.action, context.tool ?? context.tool_name, context.model, d, 'sidecar')
      }
    })
  }

  /**
   * A legacy block: a legacy `policy.blocked` event carrying the decision's `evaluation_id`, so the
   * agent's own events that cite that id are linked to it.
   */
  recordLegacy (keyHash: string, agentId: string, body: Record<string, unknown>, d: Pick<Decision, 'allowed' | 'reason' | 'policies_evaluated'>, evaluationId: string): void {
    if (d.allowed) return
    const context = (body.context ?? {}) as Record<string, unknown>
    this.enqueue({
      keyHash,
      contract: 'legacy',
      agentId,
      event: {
        type: 'policy.blocked',
        timestamp: new Date().toISOString(),
        evaluation_id: evaluationId,
        data: { ...blockedPayload(body.request_type, context.tool, body.model, d, 'sidecar'), ...(typeof context.user_id === 'string' ? { user_id: context.user_id } : {}) }
      }
    })
  }

  private enqueue (q: Queued): void {
    this.queue.push(q)
    if (this.queue.length >= this.opts.maxQueued) this.flush()
    else if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), this.opts.intervalMs)
      this.timer.unref()
    }
  }

  /** Writes the queue into the spool (grouped by agent); returns how many events. */
  flush (): number {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
    const queued = this.queue
    this.queue = []
    const byAgent = new Map<string, Queued[]>()
    for (const q of queued) {
      const group = `${q.contract} ${q.keyHash}`
      const list = byAgent.get(group)
      if (list === undefined) byAgent.set(group, [q])
      else list.push(q)
    }
    for (const list of byAgent.values()) {
      const first = list[0] as Queued
      this.spool.append(first.keyHash, first.contract, first.agentId, list.map((q) => q.event))
    }
    return queued.length
  }

  get queued (): number {
    return this.queue.length
  }
}
