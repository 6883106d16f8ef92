/**
 * Test helpers for the control plane: an app on a fresh SQLite file (or memory), its bootstrap token,
 * and small wrappers over `app.inject` for the two contracts.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request as httpRequest } from 'node:http'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../control-plane/app.js'
import { loadConfig, type ControlPlaneConfig } from '../../control-plane/config.js'
import { DEFAULT_TENANT_ID } from '../../control-plane/agents/service.js'
import { bootstrapToken, hashKey, mintKey } from '../../shared/keys.js'

export const TEST_BOOTSTRAP_SECRET = 'test-bootstrap-secret-0123456789'
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString('base64')
export { DEFAULT_TENANT_ID }

export interface TestApp {
  app: FastifyInstance
  config: ControlPlaneConfig
  dir: string
  dbFile: string
  /** Bootstrap token of the default tenant. */
  token: string
  /** A tenant API key (tk_live_) of the default tenant. */
  tenantKey: string
  v1: (method: 'GET' | 'POST', path: string, opts?: { key?: string, body?: unknown, headers?: Record<string, string> }) => Promise<LightMyRequestResponse>
  legacy: (method: 'GET' | 'POST', path: string, opts?: { key?: string, body?: unknown, headers?: Record<string, string> }) => Promise<LightMyRequestResponse>
  /** Registers a v1 agent; returns its id and key. */
  registerV1: (body?: Record<string, unknown>) => Promise<{ agentId: string, key: string }>
  registerLegacy: (body?: Record<string, unknown>) => Promise<{ agentId: string, key: string }>
  close: () => Promise<void>
}

export interface TestAppOptions {
  env?: Record<string, string>
  argv?: string[]
}

/** Starts an app (ready, not listening) on a new data folder. Close it with `close()`. */
export async function testApp (opts: TestAppOptions = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'agentgov-test-'))
  const env = {
    SERVICE_DATA_DIR: dir,
    SERVICE_BOOTSTRAP_SECRET: TEST_BOOTSTRAP_SECRET,
    SERVICE_MASTER_KEY: TEST_MASTER_KEY,
    LOG_LEVEL: 'silent',
    ...opts.env
  }
  const config = loadConfig(opts.argv ?? [], env)
  const app = await buildApp(config, { logger: false })
  await app.ready()
  const { store } = app.services
  await store.createTenant({ id: DEFAULT_TENANT_ID, name: 'default' })
  const tk = mintKey('tenant')
  await store.addTenantKey(DEFAULT_TENANT_ID, tk.hash, tk.prefix)
  const base = `/api/${config.apiName}`
  const keyHeader = `x-${config.apiName}-key`
  const token = bootstrapToken(config.bootstrapSecret, DEFAULT_TENANT_ID)

  const v1: TestApp['v1'] = async (method, path, o = {}) => await app.inject({
    method,
    url: `${base}/v1${path}`,
    headers: { ...(o.key === undefined ? {} : { [keyHeader]: o.key }), ...o.headers },
    ...(o.body === undefined ? {} : { payload: o.body as Record<string, unknown> })
  })
  const legacy: TestApp['legacy'] = async (method, path, o = {}) => await app.inject({
    method,
    url: `${base}${path}`,
    headers: { ...(o.key === undefined ? {} : { authorization: `Bearer ${o.key}` }), ...o.headers },
    ...(o.body === undefined ? {} : { payload: o.body as Record<string, unknown> })
  })
  const registerV1: TestApp['registerV1'] = async (body = { agent_type: 'custom' }) => {
    const res = await v1('POST', '/register', { body, headers: { [`x-${config.apiName}-bootstrap`]: token } })
    if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`)
    const json = res.json() as { agent_id: string, api_key: string }
    return { agentId: json.agent_id, key: json.api_key }
  }
  const registerLegacy: TestApp['registerLegacy'] = async (body = { name: 'legacy agent' }) => {
    const res = await legacy('POST', '/register', { body, key: tk.key })
    if (res.statusCode !== 201) throw new Error(`legacy register failed: ${res.statusCode} ${res.body}`)
    const json = res.json() as { agent_id: string, api_key: string }
    return { agentId: json.agent_id, key: json.api_key }
  }
  return {
    app,
    config,
    dir,
    dbFile: join(dir, 'agentgov.db'),
    token,
    tenantKey: tk.key,
    v1,
    legacy,
    registerV1,
    registerLegacy,
    close: async () => {
      await app.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export { hashKey }

/** An answer as the lane tests compare them: status, the headers that matter, and the exact bytes (as text). */
export interface RawAnswer { status: number, type: string | undefined, retryAfter: string | undefined, body: string }

/** POSTs a JSON text over a real connection to a listening server (where the fast lane may answer). */
export async function postOverHttp (url: string, path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers }
    }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => { text += c })
      res.on('end', () => resolve({ status: res.statusCode as number, type: res.headers['content-type'], retryAfter: res.headers['retry-after'] as string | undefined, body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** The same POST through fastify alone (`inject` never takes the fast lane). */
export async function postThroughFastify (app: FastifyInstance, path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  const res = await app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', ...headers }, payload: body })
  return { status: res.statusCode, type: res.headers['content-type'] as string | undefined, retryAfter: res.headers['retry-after'] as string | undefined, body: res.body }
}
