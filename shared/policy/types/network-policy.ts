/** network_policy: allowed and denied domains for the URLs a request names. */
import type { PolicyTypeDef } from './common.js'
import { V } from './common.js'
import { normalizeDomain } from '../domains.js'

const domainProblem = (d: string): string | null =>
  normalizeDomain(d) === '' ? 'must be a domain name, optionally prefixed by "*."' : null

export const networkPolicy: PolicyTypeDef = {
  type: 'network_policy',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['allowed_domains', 'denied_domains'])
    if (cfg === undefined) return
    if (cfg.allowed_domains === undefined && cfg.denied_domains === undefined) {
      c.fail('config', 'needs allowed_domains or denied_domains')
    }
    if (cfg.allowed_domains !== undefined) c.stringList(cfg.allowed_domains, 'config.allowed_domains', { each: domainProblem })
    if (cfg.denied_domains !== undefined) c.stringList(cfg.denied_domains, 'config.denied_domains', { each: domainProblem })
  },
  toLogic (config) {
    const urls = [V('context.url'), V('tool_input.url'), V('tool_input.urls')]
    return {
      network_violation: [
        urls,
        Array.isArray(config.allowed_domains) ? config.allowed_domains : null,
        Array.isArray(config.denied_domains) ? config.denied_domains : null
      ]
    }
  }
}
