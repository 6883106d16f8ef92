/** custom: a JSON-logic rule over the input document, `deny_if` or `allow_if`. */
import type { PolicyTypeDef } from './common.js'

export const custom: PolicyTypeDef = {
  type: 'custom',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['deny_if', 'allow_if', 'message'])
    if (cfg === undefined) return
    const hasDeny = cfg.deny_if !== undefined
    const hasAllow = cfg.allow_if !== undefined
    if (hasDeny === hasAllow) c.fail('config', 'needs exactly one of deny_if, allow_if')
    if (hasDeny) c.logic(cfg.deny_if, 'config.deny_if')
    if (hasAllow) c.logic(cfg.allow_if, 'config.allow_if')
    if (cfg.message !== undefined) c.string(cfg.message, 'config.message')
  },
  toLogic (config) {
    if (config.deny_if !== undefined) {
      return { if: [config.deny_if, typeof config.message === 'string' ? config.message : 'deny_if rule matched', null] }
    }
    return { if: [config.allow_if, null, typeof config.message === 'string' ? config.message : 'allow_if rule not satisfied'] }
  }
}
