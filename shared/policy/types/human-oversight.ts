/** human_oversight: matching actions and tools need an approved, unused approval of the agent. */
import type { PolicyTypeDef } from './common.js'
import { V, quoted } from './common.js'

export const humanOversight: PolicyTypeDef = {
  type: 'human_oversight',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['require_approval_for'])
    if (cfg === undefined) return
    if (cfg.require_approval_for === undefined) c.fail('config.require_approval_for', 'is required')
    else c.stringList(cfg.require_approval_for, 'config.require_approval_for', { nonEmpty: true })
  },
  toLogic (config) {
    const globs = config.require_approval_for
    const subject = { if: [V('tool'), { cat: ['tool ', quoted(V('tool'))] }, { cat: ['action ', quoted(V('action'))] }] }
    return {
      if: [
        { or: [{ glob: [V('action'), globs] }, { glob: [V('tool'), globs] }] },
        {
          if: [
            { approval_missing: [V('context.approval_id'), V('agent.id')] },
            { cat: [subject, ' requires human approval: context.approval_id must name an approved, unused approval'] },
            null
          ]
        },
        null
      ]
    }
  }
}
