/** model_restriction: allow and deny lists of model globs, and a token ceiling, for LLM actions. */
import type { PolicyTypeDef, Restrictions } from './common.js'
import { V, isLlmAction, quoted } from './common.js'

export const modelRestriction: PolicyTypeDef = {
  type: 'model_restriction',
  validate (config, c) {
    const cfg = c.object(config, 'config', ['allowed_models', 'denied_models', 'max_tokens'])
    if (cfg === undefined) return
    if (cfg.allowed_models === undefined && cfg.denied_models === undefined && cfg.max_tokens === undefined) {
      c.fail('config', 'needs at least one of allowed_models, denied_models, max_tokens')
    }
    if (cfg.allowed_models !== undefined) c.stringList(cfg.allowed_models, 'config.allowed_models')
    if (cfg.denied_models !== undefined) c.stringList(cfg.denied_models, 'config.denied_models')
    if (cfg.max_tokens !== undefined) c.integer(cfg.max_tokens, 'config.max_tokens', 1)
  },
  toLogic (config) {
    const model = V('model')
    const branches: unknown[] = []
    if (Array.isArray(config.denied_models) && config.denied_models.length > 0) {
      branches.push({ glob: [model, config.denied_models] }, { cat: ['model ', quoted(model), ' is denied'] })
    }
    if (Array.isArray(config.allowed_models)) {
      branches.push({ '!': model }, 'LLM action names no model, and only allowed_models may be used')
      branches.push({ '!': { glob: [model, config.allowed_models] } }, { cat: ['model ', quoted(model), ' is not in allowed_models'] })
    }
    if (typeof config.max_tokens === 'number') {
      branches.push(
        { '>': [V('tokens'), config.max_tokens] },
        { cat: [V('tokens'), ` tokens requested, more than max_tokens ${config.max_tokens}`] }
      )
    }
    return { if: [isLlmAction, { if: [...branches, null] }, null] }
  },
  restrictions (config) {
    const r: Restrictions = {}
    if (typeof config.max_tokens === 'number') r.max_tokens = config.max_tokens
    if (Array.isArray(config.allowed_models)) r.allowed_models = [...config.allowed_models as string[]]
    return r
  }
}
