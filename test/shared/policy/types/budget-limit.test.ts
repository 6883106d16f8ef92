/**
 * budget_limit (policy-types.md): max_cost_usd, period day or month (UTC), per agent, user or tenant.
 * Fails when the spend recorded in the period has reached the limit. Spend comes from a BudgetLedger.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'
import { MemoryBudgetLedger, periodStart, type BudgetLedger } from '../../../../shared/policy/counters.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0) // 22 Nov 2026, 10:00 UTC

const bl = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'bl-id', name: 'budget', type: 'budget_limit', config, ...extra })

const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'budget_limit', config }).map((e) => `${e.path}: ${e.message}`)

const v1 = (user: string | null = 'u1', agent = AGENT) =>
  buildInputV1({ agent_id: agent.id, action: 'llm_call', user_id: user, context: {} }, agent, T0)

t.test('budget_limit validation: accepts a limit alone and with every period and subject', async (t) => {
  t.same(errors({ max_cost_usd: 10 }), [])
  t.same(errors({ max_cost_usd: 0 }), [], 'zero is a valid limit')
  t.same(errors({ max_cost_usd: 0.25, period: 'day', per: 'user' }), [])
  t.same(errors({ max_cost_usd: 1000, period: 'month', per: 'tenant' }), [])
  t.same(errors({ max_cost_usd: 1, per: 'agent' }), [])
})

t.test('budget_limit validation: max_cost_usd is required and must be a finite number >= 0', async (t) => {
  t.same(errors({}), ['config.max_cost_usd: is required'])
  t.same(errors({ period: 'day' }), ['config.max_cost_usd: is required'])
  t.same(errors({ max_cost_usd: -0.01 }), ['config.max_cost_usd: must be at least 0'])
  t.same(errors({ max_cost_usd: '5' }), ['config.max_cost_usd: must be a number'])
  t.same(errors({ max_cost_usd: null }), ['config.max_cost_usd: must be a number'])
  t.same(errors({ max_cost_usd: Number.POSITIVE_INFINITY }), ['config.max_cost_usd: must be a number'])
  t.same(errors({ max_cost_usd: Number.NaN }), ['config.max_cost_usd: must be a number'])
})

t.test('budget_limit validation: period is day or month; per is agent, user or tenant', async (t) => {
  t.same(errors({ max_cost_usd: 1, period: 'week' }), ['config.period: must be one of: day, month'])
  t.same(errors({ max_cost_usd: 1, period: 'DAY' }), ['config.period: must be one of: day, month'], 'case matters')
  t.same(errors({ max_cost_usd: 1, per: 'team' }), ['config.per: must be one of: agent, user, tenant'])
  t.same(errors({ max_cost_usd: 1, per: null }), ['config.per: must be one of: agent, user, tenant'])
  t.same(errors({ max_cost_usd: -1, period: 'year', per: 'org' }), [
    'config.max_cost_usd: must be at least 0', 'config.period: must be one of: day, month', 'config.per: must be one of: agent, user, tenant'
  ], 'every problem is reported')
})

t.test('budget_limit validation: unknown fields and non-object configs are refused', async (t) => {
  t.same(errors({ max_cost_usd: 1, currency: 'EUR' }), ['config.currency: unknown field (expected one of: max_cost_usd, period, per)'])
  t.same(errors(5), ['config: must be an object'])
  t.same(errors([]), ['config: must be an object'])
})

t.test('budget_limit decision: per agent per month by default; fails once the spend has reached the limit', async (t) => {
  const budget = new MemoryBudgetLedger()
  const set = compilePolicySet([bl({ max_cost_usd: 5 })], { budget, now: () => T0 })
  t.same(set.evaluate(v1()).policies_evaluated, [{ id: 'bl-id', name: 'budget', type: 'budget_limit', result: 'pass', message: null }], 'nothing spent')
  budget.record({ agentId: 'bot-1', userId: 'u1', usd: 4.99, at: T0 - 1000 })
  t.equal(set.evaluate(v1()).allowed, true, '4.99 of 5 spent')
  budget.record({ agentId: 'bot-1', userId: 'u2', usd: 0.01, at: T0 - 1000 })
  const d = set.evaluate(v1())
  t.equal(d.allowed, false, '5 of 5 spent: reached')
  t.equal(d.reason, 'budget: budget of $5 per month for the agent is spent')
  t.same(d.policies_evaluated, [{ id: 'bl-id', name: 'budget', type: 'budget_limit', result: 'fail', message: 'budget of $5 per month for the agent is spent' }])
  t.equal(set.evaluate(v1(null, { ...AGENT, id: 'bot-2' })).allowed, true, 'another agent has spent nothing')
})

t.test('budget_limit decision: per user counts each user_id apart; a request without a user is not charged to one', async (t) => {
  const budget = new MemoryBudgetLedger()
  const set = compilePolicySet([bl({ max_cost_usd: 3, per: 'user' })], { budget, now: () => T0 })
  budget.record({ agentId: 'bot-1', userId: 'alice', usd: 3, at: T0 })
  budget.record({ agentId: 'bot-9', userId: 'bob', usd: 1, at: T0 })
  t.equal(set.evaluate(v1('alice')).reason, 'budget: budget of $3 per month for the user is spent')
  t.equal(set.evaluate(v1('bob')).allowed, true, 'bob has spent 1 of 3')
  t.equal(set.evaluate(v1(null)).allowed, true, 'no user_id: no user budget applies')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', context: { user_id: 'alice' } }, AGENT, T0)).allowed, false, 'legacy: context.user_id')
})

t.test('budget_limit decision: per tenant sums every agent and user', async (t) => {
  const budget = new MemoryBudgetLedger()
  const set = compilePolicySet([bl({ max_cost_usd: 10, per: 'tenant' })], { budget, now: () => T0 })
  budget.record({ agentId: 'a', usd: 6, at: T0 })
  t.equal(set.evaluate(v1()).allowed, true)
  budget.record({ agentId: 'b', userId: 'x', usd: 4, at: T0 })
  t.equal(set.evaluate(v1(null)).reason, 'budget: budget of $10 per month for the tenant is spent', 'other agents\' spend reaches the tenant limit')
})

t.test('budget_limit decision: period day is the UTC day; period month the UTC month', async (t) => {
  const budget = new MemoryBudgetLedger()
  const lateYesterday = Date.UTC(2026, 10, 21, 23, 59, 59)
  const justAfterMidnight = Date.UTC(2026, 10, 22, 0, 0, 0)
  budget.record({ agentId: 'bot-1', usd: 5, at: lateYesterday })
  const day = compilePolicySet([bl({ max_cost_usd: 5, period: 'day' })], { budget, now: () => lateYesterday })
  t.equal(day.evaluate(v1()).reason, 'budget: budget of $5 per day for the agent is spent', 'the same day')
  const nextDay = compilePolicySet([bl({ max_cost_usd: 5, period: 'day' })], { budget, now: () => justAfterMidnight })
  t.equal(nextDay.evaluate(v1()).allowed, true, 'a new UTC day starts with nothing spent')
  const month = compilePolicySet([bl({ max_cost_usd: 5, period: 'month' })], { budget, now: () => justAfterMidnight })
  t.equal(month.evaluate(v1()).allowed, false, 'yesterday is in the same month')
  const nextMonth = compilePolicySet([bl({ max_cost_usd: 5, period: 'month' })], { budget, now: () => Date.UTC(2026, 11, 1) })
  t.equal(nextMonth.evaluate(v1()).allowed, true, '1 December starts a new month')
})

t.test('budget_limit decision: a limit of 0 is reached at once when spend is recorded; without a ledger nothing is spent', async (t) => {
  const zero = compilePolicySet([bl({ max_cost_usd: 0 })], { budget: new MemoryBudgetLedger(), now: () => T0 })
  t.equal(zero.evaluate(v1()).reason, 'budget: budget of $0 per month for the agent is spent')
  const noLedger = compilePolicySet([bl({ max_cost_usd: 0 })], { now: () => T0 })
  t.equal(noLedger.evaluate(v1()).allowed, true)
})

t.test('budget_limit decision: reads the ledger with the subject, period and time of the decision', async (t) => {
  const asked: string[] = []
  const ledger: BudgetLedger = {
    spent (per, subject, period, now) {
      asked.push(`${per}|${subject}|${period}|${now}`)
      return 0
    }
  }
  const set = compilePolicySet([
    bl({ max_cost_usd: 1 }, { id: '1', name: 'a' }),
    bl({ max_cost_usd: 1, per: 'user', period: 'day' }, { id: '2', name: 'b' }),
    bl({ max_cost_usd: 1, per: 'tenant' }, { id: '3', name: 'c' })
  ], { budget: ledger, now: () => T0 })
  t.equal(set.evaluate(v1('alice')).allowed, true)
  t.same(asked, [`agent|bot-1|month|${T0}`, `user|alice|day|${T0}`, `tenant|*|month|${T0}`])
})

t.test('budget_limit in audit mode: a spent budget is a warning, not a block', async (t) => {
  const budget = new MemoryBudgetLedger()
  budget.record({ agentId: 'bot-1', usd: 2, at: T0 })
  const d = compilePolicySet([bl({ max_cost_usd: 1 }, { enforcement: 'audit' })], { budget, now: () => T0 }).evaluate(v1())
  t.equal(d.allowed, true)
  t.same(d.warnings, ['[audit] budget: budget of $1 per month for the agent is spent'])
})

t.test('MemoryBudgetLedger: ignores costs that are not positive finite numbers', async (t) => {
  const budget = new MemoryBudgetLedger()
  for (const usd of [0, -3, Number.NaN, Number.POSITIVE_INFINITY]) budget.record({ agentId: 'bot-1', usd, at: T0 })
  t.equal(budget.spent('agent', 'bot-1', 'month', T0), 0)
  t.equal(budget.spent('tenant', '*', 'day', T0), 0)
})

t.test('MemoryBudgetLedger: a cost is charged to its agent, the tenant, and its user when it has one', async (t) => {
  const budget = new MemoryBudgetLedger()
  budget.record({ agentId: 'bot-1', userId: 'alice', usd: 2, at: T0 })
  budget.record({ agentId: 'bot-1', userId: '', usd: 1, at: T0 })
  budget.record({ agentId: 'bot-1', userId: null, usd: 1, at: T0 })
  t.equal(budget.spent('agent', 'bot-1', 'day', T0), 4)
  t.equal(budget.spent('tenant', '*', 'month', T0), 4)
  t.equal(budget.spent('user', 'alice', 'day', T0), 2)
  t.equal(budget.spent('user', '', 'day', T0), 0, 'an empty user id is no user')
})

t.test('MemoryBudgetLedger: a newer period replaces the held one; a late cost of an older period is dropped', async (t) => {
  const budget = new MemoryBudgetLedger()
  const oct = Date.UTC(2026, 9, 15)
  budget.record({ agentId: 'bot-1', usd: 7, at: oct })
  t.equal(budget.spent('agent', 'bot-1', 'month', oct), 7)
  budget.record({ agentId: 'bot-1', usd: 1, at: T0 })
  t.equal(budget.spent('agent', 'bot-1', 'month', T0), 1, 'November starts from its own costs')
  t.equal(budget.spent('agent', 'bot-1', 'month', oct), 0, 'October is no longer held')
  budget.record({ agentId: 'bot-1', usd: 100, at: oct })
  t.equal(budget.spent('agent', 'bot-1', 'month', T0), 1, 'a late October cost does not count in November')
})

t.test('periodStart: UTC day and month starts; an invalid time gives NaN without disturbing later answers', async (t) => {
  t.equal(periodStart('day', T0), Date.UTC(2026, 10, 22))
  t.equal(periodStart('month', T0), Date.UTC(2026, 10, 1))
  t.equal(periodStart('day', T0 + 1000), Date.UTC(2026, 10, 22), 'same day again')
  t.ok(Number.isNaN(periodStart('day', Number.NaN)))
  t.equal(periodStart('day', Date.UTC(2026, 0, 1, 5)), Date.UTC(2026, 0, 1))
  t.equal(periodStart('month', Date.UTC(2026, 11, 31, 23, 59)), Date.UTC(2026, 11, 1), 'December')
})
