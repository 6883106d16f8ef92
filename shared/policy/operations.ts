/**
 * The policy engine's own JSON-logic operations, in one table. Each compiles its constant arguments
 * (glob lists, regular expressions, domain lists) once, at compile time.
 *
 *   {"glob": [value, patterns]}                      true when the string value matches a glob
 *   {"regex_match": [text, patterns]}                the first pattern the text matches, else null
 *   {"domain_match": [host, domains]}                the first domain entry matching the host, else null
 *   {"network_violation": [urls, allowed, denied]}   a message for the first URL whose host is refused
 *   {"pii": [text, kinds]}                           the first PII kind found in the text, else null
 *   {"rate_exceeded": [namespace, subject, window, limit, amount]}
 *                                                    true when the count of namespace+subject in the
 *                                                    window, plus amount, exceeds limit
 *   {"budget_reached": [per, subject, period, max]}  true when the recorded spend has reached max
 *   {"approval_missing": [approval_id, agent_id]}    true unless the id names an approved, unused approval
 *
 * Stateful operations read the evaluation context (PolicyContext) and queue their writes in
 * `ctx.pending`; the policy set commits them only when the decision allows the request. Every
 * operation is in the value form (jsonlogic.ts): the generated code evaluates the arguments and calls
 * the operation with their values.
 */
import type { ArgShape, EvalContext, OperationSpec, OperationTable } from './jsonlogic.js'
import { compileGlobs, type GlobSet } from './glob.js'
import { compileDomains, hostOf } from './domains.js'
import { containsPii, isPiiKind, type PiiKind } from './pii.js'
import { compileSafePattern } from './regex-safety.js'
import { WINDOWS, type ApprovalSource, type BudgetLedger, type BudgetPer, type BudgetPeriod, type RateCounterStore } from './counters.js'

/** A write that a stateful operation queues: run with the context and the two values it queued. */
export type PendingWrite = (ctx: PolicyContext, a: unknown, b: unknown) => void

/** What the stateful operations read during one evaluation. */
export interface PolicyContext extends EvalContext {
  readonly now: number
  readonly rates?: RateCounterStore | undefined
  readonly budget?: BudgetLedger | undefined
  readonly approvals?: ApprovalSource | undefined
  /**
   * Writes to run if the decision allows the request, as flat triples `write, a, b` (no closure
   * allocated per write): the policy set runs `write(ctx, a, b)` for each.
   */
  pending: unknown[]
}

/**
 * The context of one policy-set evaluation. The clock is read once, by the first operation that
 * needs the time (most decisions of most agents need none: reading it costs more than a rule).
 */
export class EvalState implements PolicyContext {
  [key: string]: unknown
  private time = 0
  private timeRead = false
  readonly pending: unknown[] = []
  constructor (
    private readonly clock: () => number,
    readonly rates: RateCounterStore | undefined,
    readonly budget: BudgetLedger | undefined,
    readonly approvals: ApprovalSource | undefined
  ) {}

  get now (): number {
    if (!this.timeRead) {
      this.time = this.clock()
      this.timeRead = true
    }
    return this.time
  }
}

/** Runs the writes queued in `ctx.pending`. */
export function commitPending (ctx: PolicyContext): void {
  const p = ctx.pending
  for (let i = 0; i < p.length; i += 3) (p[i] as PendingWrite)(ctx, p[i + 1], p[i + 2])
}

function stringList (value: unknown, what: string): string[] {
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || !list.every((v) => typeof v === 'string')) {
    throw new Error(`${what} must be a string or a list of strings`)
  }
  return list as string[]
}

function constantArg (args: ArgShape[], i: number, op: string, what: string): unknown {
  const a = args[i]
  if (a === undefined || !a.constant) throw new Error(`${op}: ${what} must be written in the rule, not computed`)
  return a.value
}

const glob: OperationSpec = {
  values (args) {
    const second = args[1]
    if (second !== undefined && second.constant) {
      const set = compileGlobs(stringList(second.value, 'glob: patterns'))
      return (_c, v) => typeof v === 'string' && set.match(v) !== undefined
    }
    return (_c, v, p) => {
      if (typeof v !== 'string') return false
      let set: GlobSet
      try {
        set = compileGlobs(stringList(p, 'glob: patterns'))
      } catch {
        return false
      }
      return set.match(v) !== undefined
    }
  }
}

/**
 * One test for many patterns: the patterns of each flag set joined as an alternation (exact, since
 * back-references are refused). Undefined when they cannot be joined (repeated group names).
 */
export function combinedTest (regexes: readonly RegExp[]): ((text: string) => boolean) | undefined {
  try {
    const groups = new Map<string, string[]>()
    for (const r of regexes) groups.set(r.flags, [...(groups.get(r.flags) ?? []), `(?:${r.source})`])
    const joined = [...groups].map(([flags, sources]) => new RegExp(sources.join('|'), flags))
    if (joined.length === 1) {
      const only = joined[0] as RegExp
      return (text) => only.test(text)
    }
    return (text) => joined.some((r) => r.test(text))
  } catch {
    return undefined
  }
}

const regexMatch: OperationSpec = {
  values (args) {
    const sources = stringList(constantArg(args, 1, 'regex_match', 'patterns'), 'regex_match: patterns')
    const regexes = sources.map((s) => compileSafePattern(s))
    // One scan with all patterns first; only a text that matches is scanned again to name the pattern.
    const prefilter = regexes.length > 1 ? combinedTest(regexes) : undefined
    return (_c, t) => {
      if (typeof t !== 'string') return null
      if (prefilter !== undefined && !prefilter(t)) return null
      for (let i = 0; i < regexes.length; i++) {
        if ((regexes[i] as RegExp).test(t)) return sources[i]
      }
      return null
    }
  }
}

const domainMatch: OperationSpec = {
  values (args) {
    const set = compileDomains(stringList(constantArg(args, 1, 'domain_match', 'domains'), 'domain_match: domains'))
    return (_c, h) => typeof h === 'string' ? set.match(h.toLowerCase()) ?? null : null
  }
}

const networkViolation: OperationSpec = {
  values (args) {
    const allowedRaw = constantArg(args, 1, 'network_violation', 'allowed domains')
    const deniedRaw = constantArg(args, 2, 'network_violation', 'denied domains')
    const allowed = allowedRaw === null ? null : compileDomains(stringList(allowedRaw, 'network_violation: allowed domains'))
    const denied = compileDomains(deniedRaw === null ? [] : stringList(deniedRaw, 'network_violation: denied domains'))
    const check = (url: string): string | null => {
      const host = hostOf(url)
      if (host === undefined) return `URL "${url.slice(0, 200)}" cannot be parsed`
      const hit = denied.match(host)
      if (hit !== undefined) return `host ${host} is denied (${hit})`
      if (allowed !== null && allowed.match(host) === undefined) return `host ${host} is not in the allowed domains`
      return null
    }
    return (_c, values) => {
      if (!Array.isArray(values)) return null
      for (const v of values) {
        if (typeof v === 'string') {
          const m = check(v)
          if (m !== null) return m
        } else if (Array.isArray(v)) {
          for (const u of v) {
            if (typeof u !== 'string') continue
            const m = check(u)
            if (m !== null) return m
          }
        }
      }
      return null
    }
  }
}

const pii: OperationSpec = {
  values (args) {
    const kinds = stringList(constantArg(args, 1, 'pii', 'kinds'), 'pii: kinds')
    for (const k of kinds) if (!isPiiKind(k)) throw new Error(`pii: unknown kind "${k}"`)
    const list = kinds as PiiKind[]
    return (_c, t) => {
      if (typeof t !== 'string' || t === '') return null
      // containsPii keeps the profile of the last text, so several PII policies scan a text once.
      for (let i = 0; i < list.length; i++) if (containsPii(list[i] as PiiKind, t)) return list[i]
      return null
    }
  }
}

/**
 * `{"rate_exceeded": [namespace, subject, window, limit, amount?]}`: counted under the key
 * `namespace + subject` (a null subject counts as ''). The key is built only when the subject
 * changes, so an agent's steady stream of requests reuses one string (and its hash).
 */
const rateExceeded: OperationSpec = {
  values (args) {
    const namespace = constantArg(args, 0, 'rate_exceeded', 'namespace')
    if (typeof namespace !== 'string') throw new Error('rate_exceeded: namespace must be a string')
    const windowName = constantArg(args, 2, 'rate_exceeded', 'window')
    const window = typeof windowName === 'string' && Object.hasOwn(WINDOWS, windowName)
      ? WINDOWS[windowName as keyof typeof WINDOWS]
      : undefined
    if (window === undefined) throw new Error('rate_exceeded: window must be "minute", "hour" or "day"')
    const limit = constantArg(args, 3, 'rate_exceeded', 'limit')
    if (typeof limit !== 'number' || !(limit >= 0)) throw new Error('rate_exceeded: limit must be a number >= 0')
    const counted = args.length > 4
    const write: PendingWrite = (ctx, key, amount) => ctx.rates?.add(key as string, window, amount as number, ctx.now)
    let lastSubject: unknown = ''
    let lastKey = namespace
    return (c, _ns, subject, _w, _l, a) => {
      const ctx = c as PolicyContext
      const store = ctx.rates
      if (store === undefined) return false
      if (subject !== lastSubject || typeof subject === 'object') {
        lastSubject = subject
        lastKey = namespace + (subject === null || subject === undefined ? '' : String(subject))
      }
      const amount = typeof a === 'number' && a > 0 ? a : (counted ? 0 : 1)
      if (amount > 0) ctx.pending.push(write, lastKey, amount)
      return store.total(lastKey, window, ctx.now) + amount > limit
    }
  }
}

const budgetReached: OperationSpec = {
  values (args) {
    const per = constantArg(args, 0, 'budget_reached', 'per')
    if (per !== 'agent' && per !== 'user' && per !== 'tenant') throw new Error('budget_reached: per must be "agent", "user" or "tenant"')
    const period = constantArg(args, 2, 'budget_reached', 'period')
    if (period !== 'day' && period !== 'month') throw new Error('budget_reached: period must be "day" or "month"')
    const max = constantArg(args, 3, 'budget_reached', 'max')
    if (typeof max !== 'number' || !(max >= 0)) throw new Error('budget_reached: max must be a number >= 0')
    return (c, _p, subject) => {
      const ctx = c as PolicyContext
      if (ctx.budget === undefined) return false
      const s = per === 'tenant' ? '*' : subject
      if (typeof s !== 'string' || s === '') return false
      return ctx.budget.spent(per as BudgetPer, s, period as BudgetPeriod, ctx.now) >= max
    }
  }
}

const consume: PendingWrite = (ctx, approvalId, agentId) => ctx.approvals?.consume(approvalId as string, agentId as string)

const approvalMissing: OperationSpec = {
  values () {
    return (c, approvalId, agentId) => {
      const ctx = c as PolicyContext
      const source = ctx.approvals
      if (source === undefined || typeof approvalId !== 'string' || typeof agentId !== 'string') return true
      if (source.state(approvalId, agentId) !== 'approved') return true
      ctx.pending.push(consume, approvalId, agentId)
      return false
    }
  }
}

/** Every operation the policy engine adds to JSON-logic. */
export const POLICY_OPERATIONS: OperationTable = new Map<string, OperationSpec>([
  ['glob', glob],
  ['regex_match', regexMatch],
  ['domain_match', domainMatch],
  ['network_violation', networkViolation],
  ['pii', pii],
  ['rate_exceeded', rateExceeded],
  ['budget_reached', budgetReached],
  ['approval_missing', approvalMissing]
])
