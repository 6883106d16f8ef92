/** The assistant's read-only tools answer from the tenant's store, and only from it. */
import t from 'tap'
import { testApp, DEFAULT_TENANT_ID } from '../helpers.js'
import { TOOL_ANSWER_CHARS, TOOL_DEFINITIONS, toolSet } from '../../../control-plane/assistant/tools.js'

t.test('tools: each answers from the store as JSON; unknown agents and tools answer with an error; no secret ever', async (t) => {
  const a = await testApp()
  t.teardown(() => a.close())
  const { store, directory, box } = a.app.services
  const bot = await a.registerV1({ agent_type: 'langchain', agent_id: 'tool-bot', capabilities: ['chat'], metadata: { team: 'ops' } })
  await store.upsertPolicies(DEFAULT_TENANT_ID, [{ name: 'no-shell', type: 'tool_permission', scope_type: 'ORG', scope_id: DEFAULT_TENANT_ID, config: { denied_tools: ['shell'] }, enforcement: 'enforce', priority: 0, is_active: true }])
  await directory.changed()
  await store.setSecret({ tenant_id: DEFAULT_TENANT_ID, scope_type: 'tenant', scope_id: '', name: 'API_TOKEN', value_sealed: box.seal('top-secret', 'x'), updated_at: new Date().toISOString() })
  await a.v1('POST', '/evaluate', { key: bot.key, body: { agent_id: 'tool-bot', action: 'tool_call', context: { tool: 'shell' } } })
  await a.app.services.ingest.flush()
  const tools = toolSet(store, directory, DEFAULT_TENANT_ID)
  t.strictSame(tools.definitions, TOOL_DEFINITIONS)
  const run = async (name: string, args: unknown = {}): Promise<any> => JSON.parse(await tools.run(name, args))

  t.match(await run('list_agents'), [{ agent_id: 'tool-bot', agent_type: 'langchain', status: 'active', health: 'unknown' }])
  t.match(await run('get_agent', { agent_id: 'tool-bot' }), { agent_id: 'tool-bot', capabilities: ['chat'], metadata: { team: 'ops' } })
  t.match(await run('get_agent', { agent_id: 'nobody' }), { error: /no such agent/ })
  t.match(await run('get_agent', {}), { error: /no such agent/ })
  t.match(await run('list_policies'), [{ name: 'no-shell', type: 'tool_permission', config: { denied_tools: ['shell'] } }])
  t.match(await run('effective_policies', { agent_id: 'tool-bot' }), [{ name: 'no-shell', enforcement: 'enforce' }])
  t.match(await run('effective_policies', { agent_id: 'nobody' }), { error: /no such agent/ })
  const blocks = await run('recent_blocks', { agent_id: 'tool-bot' })
  t.match(blocks, [{ agent_id: 'tool-bot', type: 'policy.blocked', payload: { tool: 'shell' } }])
  t.ok((await run('recent_events', { limit: 1 })).length === 1, 'limit is honoured')
  t.ok((await run('recent_events', { limit: 500 })).length <= 50, 'and capped')
  t.match(await run('drop_tables'), { error: /no tool named drop_tables/ })
  for (const def of TOOL_DEFINITIONS) {
    const text = await tools.run(def.name, { agent_id: 'tool-bot' })
    t.notMatch(text, /top-secret|API_TOKEN|v1:/, `${def.name}: no secret`)
    t.ok(text.length <= TOOL_ANSWER_CHARS + 20, `${def.name}: bounded`)
  }
})
