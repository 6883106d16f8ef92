/** Starts the real `agentgov` processes for end-to-end tests. */
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const BIN = fileURLToPath(new URL('../../bin/agentgov.js', import.meta.url))

export interface Proc {
  child: ChildProcess
  url: string
  token: string
  out: () => string
  exited: Promise<number | null>
}

/**
 * Spawns `agentgov <command> --port 0 ...` and waits until `ready` finds what it needs in the
 * process's output; rejects with that output if the process exits first.
 */
async function spawnAgentgov<T> (command: string, args: string[], env: Record<string, string>,
  ready: (text: string) => T | undefined): Promise<{ child: ChildProcess, found: T, out: () => string, exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, command, '--port', '0', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let text = ''
  child.stdout?.on('data', (c: Buffer) => { text += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { text += c.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return await new Promise((resolve, reject) => {
    const check = (): void => {
      const found = ready(text)
      if (found !== undefined) {
        child.stdout?.off('data', check)
        resolve({ child, found, out: () => text, exited })
      }
    }
    child.stdout?.on('data', check)
    void exited.then((code) => reject(new Error(`${command} exited (${code}) before listening:\n${text}`)))
  })
}

/** Spawns `agentgov control-plane --port 0 ...` and waits until it prints its address and token. */
export async function startControlPlane (args: string[], env: Record<string, string> = {}): Promise<Proc> {
  const p = await spawnAgentgov('control-plane', args, env, (text) => {
    const url = /listening on (http:\/\/\S+)/.exec(text)?.[1]
    const token = /bootstrap token: (bt_\S+)/.exec(text)?.[1]
    return url !== undefined && token !== undefined ? { url, token } : undefined
  })
  return { child: p.child, url: p.found.url, token: p.found.token, out: p.out, exited: p.exited }
}

/** Spawns `agentgov sidecar --port 0 ...` and waits until it prints its address. */
export async function startSidecar (args: string[], env: Record<string, string> = {}): Promise<Omit<Proc, 'token'>> {
  const p = await spawnAgentgov('sidecar', args, env, (text) => /sidecar listening on (http:\/\/\S+)/.exec(text)?.[1])
  return { child: p.child, url: p.found, out: p.out, exited: p.exited }
}
