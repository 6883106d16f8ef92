/** tool_permission: allow and deny lists of tool globs, and argument rules, for tool actions. */
import type { PolicyTypeDef } from './common.js'
import { V, isToolAction, quoted } from './common.js'

export const toolPermission: PolicyTypeDef = {
  type: 'tool_permission',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['allowed_tools', 'denied_tools', 'argument_rules'])
    if (cfg === undefined) return
    if (cfg.allowed_tools === undefined && cfg.denied_tools === undefined && cfg.argument_rules === undefined) {
      c.fail('config', 'needs at least one of allowed_tools, denied_tools, argument_rules')
    }
    if (cfg.allowed_tools !== undefined) c.stringList(cfg.allowed_tools, 'config.allowed_tools')
    if (cfg.denied_tools !== undefined) c.stringList(cfg.denied_tools, 'config.denied_tools')
    if (cfg.argument_rules === undefined) return
    if (!Array.isArray(cfg.argument_rules)) {
      c.fail('config.argument_rules', 'must be a list of {tool, deny_if, message}')
      return
    }
    cfg.argument_rules.forEach((r, i) => {
      const path = `config.argument_rules[${i}]`
      const rule = c.object(r, path, ['tool', 'deny_if', 'message'])
      if (rule === undefined) return
      c.string(rule.tool, `${path}.tool`)
      c.logic(rule.deny_if, `${path}.deny_if`)
      if (rule.message !== undefined) c.string(rule.message, `${path}.message`)
    })
  },
  toLogic (config) {
    const tool = V('tool')
    const branches: unknown[] = []
    if (Array.isArray(config.denied_tools) && config.denied_tools.length > 0) {
      branches.push({ glob: [tool, config.denied_tools] }, { cat: ['tool ', quoted(tool), ' is denied'] })
    }
    if (Array.isArray(config.allowed_tools)) {
      branches.push({ '!': tool }, 'tool action names no tool, and only allowed_tools may run')
      branches.push({ '!': { glob: [tool, config.allowed_tools] } }, { cat: ['tool ', quoted(tool), ' is not in allowed_tools'] })
    }
    const rules = Array.isArray(config.argument_rules) ? config.argument_rules as Array<Record<string, unknown>> : []
    rules.forEach((r, i) => {
      branches.push(
        { and: [{ glob: [tool, [r.tool]] }, r.deny_if] },
        typeof r.message === 'string' ? r.message : { cat: ['arguments of tool ', quoted(tool), ` are denied by argument_rules[${i}]`] }
      )
    })
    return { if: [isToolAction, { if: [...branches, null] }, null] }
  }
}
