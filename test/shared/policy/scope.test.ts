/**
 * scope.ts (decisions.md, ScopeType): ORG (every agent), TEAM (metadata.team / team equals scopeId),
 * DEPLOYMENT (deployment_id or metadata.deployment equals scopeId), ENDPOINT (agent_id equals scopeId),
 * USER (decided per request). Effective policies: active ones whose scope matches, ordered by priority
 * (higher first), then name.
 */
import t from 'tap'
import { SCOPE_TYPES, byPriorityThenName, effectivePolicies, normalizeScopeType, scopeMatches, type ScopedPolicy } from '../../../shared/policy/scope.js'
import type { AgentInfo } from '../../../shared/policy/input.js'

const BARE: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }

const scoped = (scope_type: string | undefined, scope_id?: string): ScopedPolicy =>
  ({ name: 'p', ...(scope_type === undefined ? {} : { scope_type }), ...(scope_id === undefined ? {} : { scope_id }) })

t.test('normalizeScopeType: the five scope types in any case; absent or null is ORG; anything else undefined', async (t) => {
  t.same([...SCOPE_TYPES], ['ORG', 'TEAM', 'DEPLOYMENT', 'ENDPOINT', 'USER'])
  for (const s of SCOPE_TYPES) {
    t.equal(normalizeScopeType(s), s, s)
    t.equal(normalizeScopeType(s.toLowerCase()), s, s.toLowerCase())
  }
  t.equal(normalizeScopeType('Deployment'), 'DEPLOYMENT')
  t.equal(normalizeScopeType(undefined), 'ORG')
  t.equal(normalizeScopeType(null), 'ORG')
  for (const v of ['', 'PLANET', ' ORG', 'ORGS', 5, true, {}, ['ORG']]) t.equal(normalizeScopeType(v), undefined, JSON.stringify(v))
})

t.test('scopeMatches ORG: every agent of the tenant, whatever its scope_id', async (t) => {
  t.ok(scopeMatches(scoped(undefined), BARE), 'no scope_type')
  t.ok(scopeMatches(scoped('ORG', 'anything'), BARE))
  t.ok(scopeMatches(scoped('org'), { ...BARE, id: 'other', team: 't' }))
})

t.test('scopeMatches TEAM: the agent\'s team or metadata.team equals scope_id', async (t) => {
  t.ok(scopeMatches(scoped('TEAM', 'support'), { ...BARE, team: 'support' }), 'team field')
  t.ok(scopeMatches(scoped('TEAM', 'support'), { ...BARE, metadata: { team: 'support' } }), 'metadata.team')
  t.notOk(scopeMatches(scoped('TEAM', 'support'), { ...BARE, team: 'sales', metadata: { team: 'sales' } }), 'another team')
  t.notOk(scopeMatches(scoped('TEAM', 'support'), BARE), 'no team')
  t.notOk(scopeMatches(scoped('TEAM', 'Support'), { ...BARE, team: 'support' }), 'ids compare exactly')
  t.notOk(scopeMatches(scoped('TEAM'), BARE), 'a TEAM scope without scope_id takes in no team-less agent')
})

t.test('scopeMatches DEPLOYMENT: deployment_id or metadata.deployment equals scope_id', async (t) => {
  t.ok(scopeMatches(scoped('DEPLOYMENT', 'eu'), { ...BARE, deployment_id: 'eu' }), 'deployment_id')
  t.ok(scopeMatches(scoped('DEPLOYMENT', 'eu'), { ...BARE, metadata: { deployment: 'eu' } }), 'metadata.deployment')
  t.notOk(scopeMatches(scoped('DEPLOYMENT', 'eu'), { ...BARE, deployment_id: 'us', metadata: { deployment: 'us' } }))
  t.notOk(scopeMatches(scoped('DEPLOYMENT', 'eu'), BARE))
  t.notOk(scopeMatches(scoped('DEPLOYMENT', 'eu'), { ...BARE, team: 'eu', id: 'eu' }), 'team and id are not the deployment')
})

t.test('scopeMatches ENDPOINT: the agent whose agent_id equals scope_id', async (t) => {
  t.ok(scopeMatches(scoped('ENDPOINT', 'bot-1'), BARE))
  t.notOk(scopeMatches(scoped('ENDPOINT', 'bot-2'), BARE))
  t.notOk(scopeMatches(scoped('ENDPOINT', 'bot-1'), { ...BARE, id: 'bot-10' }), 'exact id, not a prefix')
})

t.test('scopeMatches USER: kept for every agent (the request\'s user_id decides later)', async (t) => {
  t.ok(scopeMatches(scoped('USER', 'alice'), BARE))
  t.ok(scopeMatches(scoped('user', 'bob'), { ...BARE, id: 'other' }))
})

t.test('scopeMatches: an unknown scope type takes in no agent (fail safe for stored bad data)', async (t) => {
  t.notOk(scopeMatches(scoped('PLANET', 'bot-1'), BARE))
  t.notOk(scopeMatches({ name: 'p', scope_type: '' }, BARE))
})

t.test('effectivePolicies: keeps active policies whose scope matches the agent', async (t) => {
  const agent: AgentInfo = { ...BARE, team: 'support', deployment_id: 'eu' }
  const list: ScopedPolicy[] = [
    { name: 'org' },
    { name: 'org-explicit', scope_type: 'ORG', scope_id: 't1', is_active: true },
    { name: 'my-team', scope_type: 'TEAM', scope_id: 'support' },
    { name: 'other-team', scope_type: 'TEAM', scope_id: 'sales' },
    { name: 'my-deployment', scope_type: 'DEPLOYMENT', scope_id: 'eu' },
    { name: 'other-deployment', scope_type: 'DEPLOYMENT', scope_id: 'us' },
    { name: 'me', scope_type: 'ENDPOINT', scope_id: 'bot-1' },
    { name: 'someone-else', scope_type: 'ENDPOINT', scope_id: 'bot-2' },
    { name: 'a-user', scope_type: 'USER', scope_id: 'alice' },
    { name: 'inactive', is_active: false },
    { name: 'inactive-mine', scope_type: 'ENDPOINT', scope_id: 'bot-1', is_active: false },
    { name: 'bad-scope', scope_type: 'GALAXY' }
  ]
  t.same(effectivePolicies(list, agent).map((p) => p.name), ['a-user', 'me', 'my-deployment', 'my-team', 'org', 'org-explicit'])
})

t.test('effectivePolicies: ordered by priority (higher first, absent = 0), then by name', async (t) => {
  const list: ScopedPolicy[] = [
    { name: 'b', priority: 1 },
    { name: 'a', priority: 1 },
    { name: 'zero' },
    { name: 'high', priority: 100 },
    { name: 'neg', priority: -5 },
    { name: 'explicit-zero', priority: 0 }
  ]
  t.same(effectivePolicies(list, BARE).map((p) => p.name), ['high', 'a', 'b', 'explicit-zero', 'zero', 'neg'])
})

t.test('effectivePolicies: names compare by code unit (upper case before lower case); the input list is left as it was', async (t) => {
  const list: ScopedPolicy[] = [{ name: 'b' }, { name: 'B' }, { name: 'a' }, { name: 'A' }]
  t.same(effectivePolicies(list, BARE).map((p) => p.name), ['A', 'B', 'a', 'b'])
  t.same(list.map((p) => p.name), ['b', 'B', 'a', 'A'], 'not sorted in place')
})

t.test('effectivePolicies: keeps the caller\'s objects (and their extra fields) and an empty list gives an empty list', async (t) => {
  const p = { name: 'x', id: 'pol_1', config: { deny_if: true } }
  const out = effectivePolicies([p], BARE)
  t.equal(out[0], p)
  t.same(effectivePolicies([], BARE), [])
})

t.test('byPriorityThenName: negative, zero or positive as the order requires', async (t) => {
  t.ok(byPriorityThenName({ name: 'a', priority: 2 }, { name: 'a', priority: 1 }) < 0, 'higher priority first')
  t.ok(byPriorityThenName({ name: 'a' }, { name: 'b', priority: 1 }) > 0)
  t.ok(byPriorityThenName({ name: 'a' }, { name: 'b' }) < 0, 'then by name')
  t.ok(byPriorityThenName({ name: 'b' }, { name: 'a' }) > 0)
  t.equal(byPriorityThenName({ name: 'a', priority: 3 }, { name: 'a', priority: 3 }), 0, 'equal')
})
