/** `agentgov policy ...`: check, show and try policy files without a server. */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import {
  buildInputLegacy, buildInputV1, compilePolicySet, effectivePolicies, policyLogic, validatePolicy,
  type AgentInfo, type PolicyInput, type ValidationError
} from '../policy/index.js'

export const POLICY_HELP = `Usage: agentgov policy <validate|compile|eval> FILE [INPUT]

  validate FILE         check every policy of FILE; prints each error with its path, exit 1 on errors
  compile FILE          print each policy of FILE with the JSON-logic it compiles to
  eval FILE INPUT       decide INPUT, a JSON /evaluate body (v1, or legacy when it has request_type
                        or messages), against the policies of FILE; prints the decision

FILE is JSON or YAML: a list of policies, or an object with a "policies" list. A policy is
{name, type, config, enforcement?, priority?, scope_type?, scope_id?, is_active?}.
`

/** Reads a policy file: a list, or {policies: [...]}, JSON or YAML. */
export function readPolicyFile (path: string): unknown[] {
  const text = readFileSync(path, 'utf8')
  let doc: unknown
  try {
    doc = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text)
  } catch (err) {
    throw new Error(`${path}: cannot parse: ${(err as Error).message}`)
  }
  const list = Array.isArray(doc) ? doc : (doc as { policies?: unknown } | null)?.policies
  if (!Array.isArray(list)) throw new Error(`${path}: expected a list of policies or an object with a "policies" list`)
  return list
}

/** Every error of every policy, paths prefixed with the policy's index: `[2].config.allowed_tools[0]`. */
export function validatePolicyList (list: unknown[]): ValidationError[] {
  const errors: ValidationError[] = []
  list.forEach((p, i) => {
    for (const e of validatePolicy(p)) errors.push({ path: `[${i}]${e.path === '' ? '' : '.'}${e.path}`, message: e.message })
  })
  return errors
}

/** Reads an /evaluate body: a JSON object, or an error that names the file. */
function readInputFile (path: string): Record<string, unknown> {
  const text = readFileSync(path, 'utf8')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (err) {
    throw new Error(`${path}: cannot parse: ${(err as Error).message}`)
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error(`${path}: expected a JSON object (an /evaluate body)`)
  return body as Record<string, unknown>
}

function withIds (list: unknown[]): PolicyInput[] {
  return list.map((p, i) => {
    const policy = p as PolicyInput
    return { ...policy, id: typeof policy.id === 'string' ? policy.id : `pol_${i}` }
  })
}

export async function policyCommand (args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const [sub, file, inputFile] = args
  if (sub === undefined || sub === '--help' || sub === '-h' || args.includes('--help')) {
    out.write(POLICY_HELP)
    return sub === undefined ? 1 : 0
  }
  if (!['validate', 'compile', 'eval'].includes(sub) || file === undefined || (sub === 'eval' && inputFile === undefined)) {
    err.write(POLICY_HELP)
    return 2
  }
  const list = readPolicyFile(file)
  const errors = validatePolicyList(list)
  if (errors.length > 0) {
    for (const e of errors) err.write(`${file}: ${e.path}: ${e.message}\n`)
    err.write(`${errors.length} error${errors.length === 1 ? '' : 's'}\n`)
    return 1
  }
  const policies = withIds(list)
  if (sub === 'validate') {
    out.write(`${file}: ${policies.length} valid polic${policies.length === 1 ? 'y' : 'ies'}\n`)
    return 0
  }
  if (sub === 'compile') {
    const shown = policies.map((p) => ({ id: p.id, name: p.name, type: p.type, logic: policyLogic(p) }))
    out.write(`${JSON.stringify(shown, null, 2)}\n`)
    return 0
  }
  const body = readInputFile(inputFile as string)
  const legacy = 'request_type' in body || 'messages' in body
  const agent: AgentInfo = {
    id: typeof body.agent_id === 'string' ? body.agent_id : 'cli-agent',
    type: 'custom',
    capabilities: [],
    metadata: {},
    deployment_id: null,
    team: null
  }
  const input = legacy ? buildInputLegacy(body, agent) : buildInputV1(body, agent)
  // As a server would: only the policies whose scope takes in the agent (USER scope: per request).
  const decision = compilePolicySet(effectivePolicies(policies, agent)).evaluate(input)
  out.write(`${JSON.stringify(decision, null, 2)}\n`)
  return decision.allowed ? 0 : 3
}
