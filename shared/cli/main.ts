/**
 * The `agentgov` command line: one binary, subcommands dispatched from here.
 * bin/agentgov.js imports the compiled form of this file.
 */
import { readFileSync } from 'node:fs'
import { policyCommand, POLICY_HELP } from './policy.js'

export const HELP = `agentgov: governance back end for LLM agents

Usage: agentgov <command> [options]

Commands:
  control-plane          start the control plane (see agentgov control-plane --help)
  sidecar                start a sidecar beside an agent (see agentgov sidecar --help)
  admin ...              tenants, tokens, policies, secrets, agents (see agentgov admin --help)
  policy validate FILE   check a JSON file of policies; prints every error with its config path
  policy compile FILE    print the JSON-logic each policy of FILE compiles to
  policy eval FILE INPUT decide INPUT (a v1 or legacy /evaluate body, JSON) against the policies of FILE

Options:
  -h, --help     this text (every command also takes --help)
  -v, --version  the version
`

/** The package version, from the package.json above this file (dist/shared/cli or shared/cli). */
function version (): string {
  for (const up of ['../../../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string, version: string }
      if (pkg.name === 'agentgov') return pkg.version
    } catch {
      // not there: try the next level
    }
  }
  return 'unknown'
}

/** Runs the command line; resolves to the process exit code. */
export async function main (argv: string[], out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const [command, ...rest] = argv
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    out.write(HELP)
    return command === undefined ? 1 : 0
  }
  if (command === '-v' || command === '--version') {
    out.write(`${version()}\n`)
    return 0
  }
  try {
    if (command === 'policy') return await policyCommand(rest, out, err)
    if (command === 'control-plane') {
      const { controlPlaneCommand } = await import('../../control-plane/main.js')
      return await controlPlaneCommand(rest, out, err)
    }
    if (command === 'sidecar') {
      // V8's memory settings go first, before loading the sidecar grows the young generation.
      const { limitSidecarMemory } = await import('../../sidecar/memory.js')
      limitSidecarMemory()
      const { sidecarCommand } = await import('../../sidecar/main.js')
      return await sidecarCommand(rest, out, err)
    }
    if (command === 'admin') {
      const { adminCommand } = await import('../../control-plane/cli/admin.js')
      return await adminCommand(rest, out, err)
    }
  } catch (e) {
    err.write(`agentgov ${command}: ${(e as Error).message}\n`)
    return 1
  }
  err.write(`agentgov: unknown command "${command}"\n\n${HELP}`)
  return 2
}

export { POLICY_HELP }
