/** Realistic policies and requests for the benchmarks (and for tests that want a full mix). */
import type { AgentInfo, PolicyInput } from '../../shared/policy/index.js'

export const AGENT: AgentInfo = {
  id: 'support-bot',
  type: 'langchain',
  capabilities: ['chat', 'tool:search_docs', 'tool:http_get'],
  metadata: { team: 'support', version: '1.4.2' },
  deployment_id: 'prod-eu',
  team: 'support'
}

/** 200 characters of an ordinary prompt with no PII and no denied phrase. */
export const PROMPT_200 = 'Please summarise the quarterly report for the ACME account and list the three largest ' +
  'risks it mentions. Keep it short, use bullet points, and cite the page number for each risk you name. Ok?'

let n = 0
const id = (): string => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`

/** 20 policies of every type, as a production agent might carry them. */
export function mixedPolicies (): PolicyInput[] {
  return [
    { id: id(), name: 'rpm', type: 'rate_limit', config: { requests_per_minute: 10_000_000 } },
    { id: id(), name: 'per-user-hourly', type: 'rate_limit', config: { requests_per_hour: 10_000_000, per: 'user' } },
    { id: id(), name: 'daily-tokens', type: 'rate_limit', config: { tokens_per_day: 1e15, actions: ['llm_*', 'chat'] } },
    {
      id: id(),
      name: 'tools',
      type: 'tool_permission',
      priority: 10,
      config: {
        allowed_tools: ['search_*', 'read_file', 'write_file', 'http_get', 'calculator'],
        denied_tools: ['shell*', 'exec*'],
        argument_rules: [{ tool: 'write_file', deny_if: { in: ['/etc/', { var: 'tool_input.path' }] }, message: 'no writes under /etc' }]
      }
    },
    { id: id(), name: 'no-admin-tools', type: 'tool_permission', config: { denied_tools: ['admin_*', '*_delete'] } },
    { id: id(), name: 'models', type: 'model_restriction', config: { allowed_models: ['gpt-4o*', 'claude-*'], max_tokens: 8000 } },
    { id: id(), name: 'no-preview-models', type: 'model_restriction', config: { denied_models: ['*-preview'] } },
    { id: id(), name: 'daily-budget', type: 'budget_limit', config: { max_cost_usd: 50, period: 'day' } },
    { id: id(), name: 'monthly-tenant-budget', type: 'budget_limit', config: { max_cost_usd: 1000, period: 'month', per: 'tenant' } },
    {
      id: id(),
      name: 'prompt-injection',
      type: 'content_filter',
      priority: 5,
      config: { deny_patterns: ['(?i)ignore (all )?previous instructions', '(?i)\\bjailbreak\\b', '(?i)DAN mode'] }
    },
    { id: id(), name: 'pii', type: 'content_filter', config: { pii: ['email', 'credit_card', 'us_ssn', 'secret'] } },
    { id: id(), name: 'phone-warning', type: 'content_filter', config: { pii: ['phone'], on_match: 'warn' } },
    { id: id(), name: 'egress', type: 'network_policy', config: { allowed_domains: ['*.example.com', 'api.github.com'], denied_domains: ['evil.example.com'] } },
    { id: id(), name: 'approvals', type: 'human_oversight', config: { require_approval_for: ['delete_*', 'payments.*'] } },
    { id: id(), name: 'business-hours-writes', type: 'custom', config: { deny_if: { and: [{ '==': [{ var: 'tool' }, 'write_file'] }, { '<': [{ var: 'now.hour' }, 6] }] }, message: 'no writes at night' } },
    { id: id(), name: 'user-required', type: 'custom', config: { allow_if: { '!!': { var: 'user_id' } }, message: 'requests need a user_id' } },
    { id: id(), name: 'team-only', type: 'custom', enforcement: 'audit', config: { allow_if: { in: [{ var: 'agent.team' }, ['support', 'sales']] } } },
    { id: id(), name: 'big-prompts', type: 'custom', enforcement: 'audit', config: { deny_if: { '>': [{ var: 'tokens' }, 6000] }, message: 'large request' } },
    { id: id(), name: 'tool-input-size', type: 'custom', config: { deny_if: { some: [{ var: 'tool_input.urls' }, { '>': [{ var: '' }, 'zzzz'] }] } } },
    { id: id(), name: 'metadata-version', type: 'custom', enforcement: 'audit', config: { deny_if: { '!': { var: 'agent.metadata.version' } }, message: 'agent reports no version' } }
  ]
}

/** An LLM call and a tool call of the kind the agent above makes. */
export const V1_BODIES: Array<Record<string, unknown>> = [
  { agent_id: 'support-bot', action: 'llm_call', user_id: 'u-1042', context: { model: 'gpt-4o-mini', tokens: 1200, prompt: PROMPT_200 } },
  { agent_id: 'support-bot', action: 'tool_call', user_id: 'u-1042', context: { tool: 'http_get', tool_input: { url: 'https://docs.example.com/report?q=risks' }, prompt: PROMPT_200 } }
]

/** `count` custom rules of realistic size, each a deny_if over the input document. */
export function customRules (count: number): unknown[] {
  const rules: unknown[] = []
  for (let i = 0; i < count; i++) {
    switch (i % 5) {
      case 0: rules.push({ and: [{ '==': [{ var: 'action' }, 'tool_call'] }, { in: [{ var: 'tool' }, ['shell', 'exec', `tool_${i}`, 'rm']] }] }); break
      case 1: rules.push({ or: [{ '>': [{ var: 'tokens' }, 100_000 + i] }, { '==': [{ var: 'model' }, `banned-model-${i}`] }] }); break
      case 2: rules.push({ if: [{ '==': [{ var: 'agent.team' }, 'support'] }, { in: [{ var: 'user_id' }, [`blocked-${i}`, 'u-0']] }, false] }); break
      case 3: rules.push({ and: [{ '<': [{ var: 'now.hour' }, 24] }, { in: [`secret-word-${i}`, { var: 'text' }] }] }); break
      default: rules.push({ '!': { and: [{ var: 'agent.id' }, { '!=': [{ var: 'agent.type' }, `forbidden-${i}`] }] } })
    }
  }
  return rules
}
