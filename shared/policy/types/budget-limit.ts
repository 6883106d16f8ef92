/** budget_limit: a ceiling on recorded spend (cost_usd) per agent, user or tenant, per UTC day or month. */
import type { PolicyTypeDef } from './common.js'
import { V, failIf } from './common.js'

export const budgetLimit: PolicyTypeDef = {
  type: 'budget_limit',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['max_cost_usd', 'period', 'per'])
    if (cfg === undefined) return
    if (cfg.max_cost_usd === undefined) c.fail('config.max_cost_usd', 'is required')
    else c.number(cfg.max_cost_usd, 'config.max_cost_usd', 0)
    if (cfg.period !== undefined) c.oneOf(cfg.period, 'config.period', ['day', 'month'])
    if (cfg.per !== undefined) c.oneOf(cfg.per, 'config.per', ['agent', 'user', 'tenant'])
  },
  toLogic (config) {
    const per = typeof config.per === 'string' ? config.per : 'agent'
    const period = config.period === 'day' ? 'day' : 'month'
    const subject = per === 'user' ? V('user_id') : per === 'tenant' ? '*' : V('agent.id')
    const max = config.max_cost_usd as number
    return failIf({ budget_reached: [per, subject, period, max] }, `budget of $${max} per ${period} for the ${per} is spent`)
  }
}
