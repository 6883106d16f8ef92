/** content_filter: denied regular expressions and PII detectors over the request text. */
import type { PolicyTypeDef } from './common.js'
import { V, failIf } from './common.js'
import { PII_KINDS } from '../pii.js'
import { checkPatternSafety } from '../regex-safety.js'

export const contentFilter: PolicyTypeDef = {
  type: 'content_filter',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['deny_patterns', 'pii', 'on_match'])
    if (cfg === undefined) return
    if (cfg.deny_patterns === undefined && cfg.pii === undefined) c.fail('config', 'needs deny_patterns or pii')
    if (cfg.deny_patterns !== undefined) {
      c.stringList(cfg.deny_patterns, 'config.deny_patterns', { max: 200, each: checkPatternSafety })
    }
    if (cfg.pii !== undefined) {
      c.stringList(cfg.pii, 'config.pii', {
        each: (k) => (PII_KINDS as readonly string[]).includes(k) ? null : `must be one of: ${PII_KINDS.join(', ')}`
      })
    }
    if (cfg.on_match !== undefined) c.oneOf(cfg.on_match, 'config.on_match', ['block', 'warn'])
  },
  toLogic (config) {
    const text = V('text')
    const checks: unknown[] = []
    if (Array.isArray(config.deny_patterns) && config.deny_patterns.length > 0) {
      const match = { regex_match: [text, config.deny_patterns] }
      checks.push(failIf(match, { cat: ['text matches denied pattern ', match] }))
    }
    if (Array.isArray(config.pii) && config.pii.length > 0) {
      const found = { pii: [text, config.pii] }
      checks.push(failIf(found, { cat: ['text contains PII (', found, ')'] }))
    }
    return checks.length === 0 ? null : checks.length === 1 ? checks[0] : { or: checks }
  },
  onMatch (config) {
    return config.on_match === 'warn' ? 'warn' : 'block'
  }
}
