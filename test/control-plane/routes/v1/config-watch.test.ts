/**
 * GET /api/service/v1/config/{agent_id}/watch: the server-sent event stream sidecars hold open. It
 * opens with the current config, emits on a change to the agent's effective config (and only then),
 * ends with `revoked` when the key stops working, refuses bad keys and other agents' ids, and ends
 * its streams when the server closes.
 */
import t, { type Test } from 'tap'
import { request } from 'undici'
import { testApp, DEFAULT_TENANT_ID, type TestApp } from '../../helpers.js'
import type { PolicyWrite } from '../../../../control-plane/store/store.js'

interface SseEvent {
  event: string
  data: Record<string, unknown>
}

/** Reads server-sent events from a streaming body; `next()` waits for the next one (or times out). */
function sseReader (body: AsyncIterable<Buffer>): { next: (ms?: number) => Promise<SseEvent | 'end' | 'timeout'> } {
  const queue: Array<SseEvent | 'end'> = []
  const waiter: { wake: (() => void) | null } = { wake: null }
  void (async () => {
    let buf = ''
    try {
      for await (const chunk of body) {
        buf += chunk.toString('utf8')
        let cut: number
        while ((cut = buf.indexOf('\n\n')) !== -1) {
          const block = buf.slice(0, cut)
          buf = buf.slice(cut + 2)
          const lines = block.split('\n').filter((l) => !l.startsWith(':'))
          if (lines.length === 0) continue
          const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message'
          const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')
          queue.push({ event, data: JSON.parse(data) as Record<string, unknown> })
          waiter.wake?.()
        }
      }
    } catch {}
    queue.push('end')
    waiter.wake?.()
  })()
  return {
    async next (ms = 3_000) {
      const deadline = Date.now() + ms
      while (queue.length === 0) {
        const left = deadline - Date.now()
        if (left <= 0) return 'timeout'
        await new Promise<void>((resolve) => {
          waiter.wake = resolve
          setTimeout(resolve, left)
        })
        waiter.wake = null
      }
      return queue.shift() as SseEvent | 'end'
    }
  }
}

const policy = (name: string, config: Record<string, unknown>, extra: Partial<PolicyWrite> = {}): PolicyWrite => ({
  name, type: 'tool_permission', scope_type: 'ORG', scope_id: '', config, enforcement: 'enforce', priority: 0, is_active: true, ...extra
})

async function listening (t: Test): Promise<{ ta: TestApp, url: string }> {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => ta.close())
  return { ta, url: `${address}/api/${ta.config.apiName}/v1` }
}

async function watch (url: string, agentId: string, key: string | undefined) {
  return await request(`${url}/config/${agentId}/watch`, { headers: key === undefined ? {} : { 'x-service-key': key } })
}

t.test('the stream opens with the config GET /config answers, then sends a new one after each change that affects the agent', async (t) => {
  const { ta, url } = await listening(t)
  const { agentId, key } = await ta.registerV1({ agent_type: 'custom', agent_id: 'watcher' })
  const res = await watch(url, agentId, key)
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /^text\/event-stream/)
  t.equal(res.headers['cache-control'], 'no-cache, no-transform')
  const events = sseReader(res.body)
  const first = await events.next()
  const current = (await ta.v1('GET', `/config/${agentId}`, { key })).json()
  t.strictSame(first, { event: 'config', data: current }, 'the first event is the current config')

  const { store, directory } = ta.app.services
  await store.upsertPolicies(DEFAULT_TENANT_ID, [policy('tools', { allowed_tools: ['search'] })])
  await directory.changed()
  const second = await events.next()
  t.equal(second !== 'end' && second !== 'timeout' && second.event, 'config')
  if (second === 'end' || second === 'timeout') return
  t.not(second.data.config_hash, current.config_hash, 'a new hash')
  t.strictSame((second.data.policies as Array<{ name: string }>).map((p) => p.name), ['tools'], 'with the new policy')

  await store.upsertPolicies(DEFAULT_TENANT_ID, [policy('other-team', { denied_tools: ['x'] }, { scope_type: 'TEAM', scope_id: 'elsewhere' })])
  await directory.changed()
  t.equal(await events.next(600), 'timeout', 'a change that leaves the agent\'s config as it was sends nothing')

  res.body.destroy()
})

t.test('a change written by another process (the admin CLI) reaches the stream through the change poll', async (t) => {
  const { ta, url } = await listening(t)
  const { agentId, key } = await ta.registerV1({ agent_type: 'custom', agent_id: 'polled' })
  const res = await watch(url, agentId, key)
  const events = sseReader(res.body)
  await events.next()
  // Written to the database without telling this process's directory, as another process would.
  await ta.app.services.store.upsertPolicies(DEFAULT_TENANT_ID, [policy('tools', { denied_tools: ['shell'] })])
  const changed = await events.next(3_000)
  t.equal(changed !== 'end' && changed !== 'timeout' && changed.event, 'config', 'seen within the poll interval')
  res.body.destroy()
})

t.test('deregistering the agent ends its stream with a revoked event', async (t) => {
  const { ta, url } = await listening(t)
  const { agentId, key } = await ta.registerV1({ agent_type: 'custom', agent_id: 'leaving' })
  const res = await watch(url, agentId, key)
  const events = sseReader(res.body)
  await events.next()
  t.equal((await ta.v1('POST', '/deregister', { key, body: {} })).statusCode, 204)
  const revoked = await events.next()
  t.strictSame(revoked, { event: 'revoked', data: { agent_id: 'leaving', reason: 'agent is terminated' } })
  t.equal(await events.next(), 'end', 'and the stream ends')
})

t.test('no key, an unknown key, or another agent\'s id: the usual 401 and 403, no stream', async (t) => {
  const { ta, url } = await listening(t)
  const a = await ta.registerV1({ agent_type: 'custom', agent_id: 'agent-a' })
  await ta.registerV1({ agent_type: 'custom', agent_id: 'agent-b' })
  const none = await watch(url, a.agentId, undefined)
  t.equal(none.statusCode, 401)
  t.equal((await none.body.json() as { error: string }).error, 'unauthorized')
  const unknown = await watch(url, a.agentId, 'sk_agent_' + 'A'.repeat(43))
  t.equal(unknown.statusCode, 401)
  await unknown.body.dump()
  const other = await watch(url, 'agent-b', a.key)
  t.equal(other.statusCode, 403)
  t.equal((await other.body.json() as { error: string }).error, 'forbidden')
})

t.test('closing the server ends the open streams (the close does not wait for them)', async (t) => {
  const ta = await testApp()
  const address = await ta.app.listen({ port: 0, host: '127.0.0.1' })
  const { agentId, key } = await ta.registerV1({ agent_type: 'custom', agent_id: 'until-close' })
  const res = await watch(`${address}/api/${ta.config.apiName}/v1`, agentId, key)
  const events = sseReader(res.body)
  await events.next()
  const started = Date.now()
  await ta.close()
  t.ok(Date.now() - started < 2_000, 'closed promptly')
  t.equal(await events.next(), 'end', 'the stream ended')
})
