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

/** Spawns `agentgov control-plane --port 0 ...` and waits until it prints its address and token. */
export async function startControlPlane (args: string[], env: Record<string, string> = {}): Promise<Proc> {
  const child = spawn(process.execPath, [BIN, 'control-plane', '--port', '0', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let text = ''
  child.stdout?.on('data', (c: Buffer) => { text += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { text += c.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return await new Promise<Proc>((resolve, reject) => {
    const check = (): void => {
      const url = /listening on (http:\/\/\S+)/.exec(text)?.[1]
      const token = /bootstrap token: (bt_\S+)/.exec(text)?.[1]
      if (url !== undefined && token !== undefined) {
        child.stdout?.off('data', check)
        resolve({ child, url, token, out: () => text, exited })
      }
    }
    child.stdout?.on('data', check)
    void exited.then((code) => reject(new Error(`control plane exited (${code}) before listening:\n${text}`)))
  })
}

/** Spawns `agentgov sidecar --port 0 ...` and waits until it prints its address. */
export async function startSidecar (args: string[], env: Record<string, string> = {}): Promise<Omit<Proc, 'token'>> {
  const child = spawn(process.execPath, [BIN, 'sidecar', '--port', '0', ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let text = ''
  child.stdout?.on('data', (c: Buffer) => { text += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { text += c.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return await new Promise((resolve, reject) => {
    const check = (): void => {
      const url = /sidecar listening on (http:\/\/\S+)/.exec(text)?.[1]
      if (url !== undefined) {
        child.stdout?.off('data', check)
        resolve({ child, url, out: () => text, exited })
      }
    }
    child.stdout?.on('data', check)
    void exited.then((code) => reject(new Error(`sidecar exited (${code}) before listening:\n${text}`)))
  })
}
