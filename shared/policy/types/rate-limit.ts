/** rate_limit: sliding-window limits on requests per minute / hour and tokens per day. */
import type { PolicyTypeDef } from './common.js'
import { V, failIf, firstFailure } from './common.js'

const LIMITS = [
  ['requests_per_minute', 'minute', 'requests per minute'],
  ['requests_per_hour', 'hour', 'requests per hour'],
  ['tokens_per_day', 'day', 'tokens per day']
] as const

export const rateLimit: PolicyTypeDef = {
  type: 'rate_limit',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['requests_per_minute', 'requests_per_hour', 'tokens_per_day', 'per', 'actions'])
    if (cfg === undefined) return
    let limits = 0
    for (const [field] of LIMITS) {
      if (cfg[field] === undefined) continue
      limits++
      c.integer(cfg[field], `config.${field}`, 1)
    }
    if (limits === 0) c.fail('config', 'needs at least one of requests_per_minute, requests_per_hour, tokens_per_day')
    if (cfg.per !== undefined) c.oneOf(cfg.per, 'config.per', ['agent', 'user'])
    if (cfg.actions !== undefined) c.stringList(cfg.actions, 'config.actions', { nonEmpty: true })
  },
  toLogic (config, id) {
    const per = config.per === 'user' ? 'user' : 'agent'
    const [namespace, subject] = per === 'user' ? [`${id}|user:`, V('user_id')] : [`${id}|agent:`, V('agent.id')]
    const checks: unknown[] = []
    for (const [field, window, label] of LIMITS) {
      const limit = config[field]
      if (typeof limit !== 'number') continue
      const amount = window === 'day' ? V('tokens') : 1
      checks.push(failIf({ rate_exceeded: [namespace, subject, window, limit, amount] }, `more than ${limit} ${label} per ${per}`))
    }
    const rule = firstFailure(checks)
    return Array.isArray(config.actions) ? { if: [{ glob: [V('action'), config.actions] }, rule, null] } : rule
  }
}
