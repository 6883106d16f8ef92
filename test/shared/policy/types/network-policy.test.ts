/**
 * network_policy (policy-types.md): allowed_domains, denied_domains (`example.com` matches itself;
 * `*.example.com` its subdomains). Fails when a URL in context.url, tool_input.url or tool_input.urls
 * has a denied host, or a host outside a present allow-list.
 */
import t from 'tap'
import { validatePolicy } from '../../../../shared/policy/registry.js'
import { compilePolicySet, type PolicyInput } from '../../../../shared/policy/policy-set.js'
import { buildInputLegacy, buildInputV1, type AgentInfo } from '../../../../shared/policy/input.js'

const AGENT: AgentInfo = { id: 'bot-1', type: 'custom', capabilities: [], metadata: {}, deployment_id: null, team: null }
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0)
const BAD_DOMAIN = 'must be a domain name, optionally prefixed by "*."'

const np = (config: unknown, extra: Partial<PolicyInput> = {}): PolicyInput =>
  ({ id: 'np-id', name: 'net', type: 'network_policy', config, ...extra })

const errors = (config: unknown): string[] =>
  validatePolicy({ name: 'p', type: 'network_policy', config }).map((e) => `${e.path}: ${e.message}`)

const req = (context: Record<string, unknown>, action = 'tool_call') =>
  buildInputV1({ agent_id: AGENT.id, action, user_id: 'u1', context }, AGENT, T0)
const url = (u: unknown) => req({ url: u })

t.test('network_policy validation: accepts either list, both, wildcards, IP addresses and IDNs', async (t) => {
  t.same(errors({ allowed_domains: ['example.com', '*.example.com'] }), [])
  t.same(errors({ denied_domains: ['evil.org'] }), [])
  t.same(errors({ allowed_domains: [], denied_domains: ['10.0.0.1', 'bücher.de', 'Example.COM.'] }), [])
})

t.test('network_policy validation: a config with neither list is refused at "config"', async (t) => {
  t.same(errors({}), ['config: needs allowed_domains or denied_domains'])
})

t.test('network_policy validation: each entry that is not a host name or *.host is named by index', async (t) => {
  t.same(errors({ allowed_domains: 'example.com' }), ['config.allowed_domains: must be a list of strings'])
  t.same(errors({ denied_domains: [5, '*.', '*.ok.com', 'ex ample.com', 'a@b.com', 'x.com:80', 'x.com/path', '*.*.com', '*', 'ok.com'] }), [
    'config.denied_domains[0]: must be a string',
    `config.denied_domains[1]: ${BAD_DOMAIN}`,
    `config.denied_domains[3]: ${BAD_DOMAIN}`,
    `config.denied_domains[4]: ${BAD_DOMAIN}`,
    `config.denied_domains[5]: ${BAD_DOMAIN}`,
    `config.denied_domains[6]: ${BAD_DOMAIN}`,
    `config.denied_domains[7]: ${BAD_DOMAIN}`,
    `config.denied_domains[8]: ${BAD_DOMAIN}`
  ])
  t.same(errors({ allowed_domains: ['https://example.com'] }), [`config.allowed_domains[0]: ${BAD_DOMAIN}`], 'a URL is not a domain')
  t.same(errors({ allowed_domains: [''] }), ['config.allowed_domains[0]: must not be empty'])
})

t.test('network_policy validation: unknown fields and non-object configs are refused', async (t) => {
  t.same(errors({ denied_domains: ['x.com'], allowed_ips: [] }), ['config.allowed_ips: unknown field (expected one of: allowed_domains, denied_domains)'])
  t.same(errors('example.com'), ['config: must be an object'])
})

t.test('network_policy decision: a denied host fails, naming the host and the entry that matched', async (t) => {
  const set = compilePolicySet([np({ denied_domains: ['evil.com', '*.tracker.net'] })])
  t.same(set.evaluate(url('https://good.com/x')).policies_evaluated, [{ id: 'np-id', name: 'net', type: 'network_policy', result: 'pass', message: null }])
  const d = set.evaluate(url('https://evil.com/path?q=1'))
  t.equal(d.allowed, false)
  t.equal(d.reason, 'net: host evil.com is denied (evil.com)')
  t.same(d.policies_evaluated, [{ id: 'np-id', name: 'net', type: 'network_policy', result: 'fail', message: 'host evil.com is denied (evil.com)' }])
  t.equal(set.evaluate(url('https://a.b.tracker.net')).reason, 'net: host a.b.tracker.net is denied (*.tracker.net)')
})

t.test('network_policy decision: example.com matches itself only; *.example.com its subdomains only', async (t) => {
  const exact = compilePolicySet([np({ denied_domains: ['example.com'] })])
  t.equal(exact.evaluate(url('https://example.com')).allowed, false)
  t.equal(exact.evaluate(url('https://api.example.com')).allowed, true, 'a subdomain is not example.com')
  t.equal(exact.evaluate(url('https://notexample.com')).allowed, true, 'a suffix that is not a label boundary')
  const wild = compilePolicySet([np({ denied_domains: ['*.example.com'] })])
  t.equal(wild.evaluate(url('https://api.example.com')).allowed, false)
  t.equal(wild.evaluate(url('https://example.com')).allowed, true, '*.example.com does not match example.com itself')
  t.equal(wild.evaluate(url('https://badexample.com')).allowed, true)
})

t.test('network_policy decision: hosts compare case-insensitively, without a trailing dot, schemes and ports aside', async (t) => {
  const set = compilePolicySet([np({ denied_domains: ['Evil.COM'] })])
  t.equal(set.evaluate(url('HTTPS://EVIL.com/X')).allowed, false)
  t.equal(set.evaluate(url('https://evil.com.')).allowed, false)
  t.equal(set.evaluate(url('evil.com/path')).allowed, false, 'a URL without a scheme')
  t.equal(set.evaluate(url('ftp://user:pw@evil.com:2121/f')).allowed, false, 'user info and port')
})

t.test('network_policy decision: with an allow-list, a host outside it fails; a deny entry wins over an allow entry', async (t) => {
  const set = compilePolicySet([np({ allowed_domains: ['example.com', '*.example.com'], denied_domains: ['admin.example.com'] })])
  t.equal(set.evaluate(url('https://example.com')).allowed, true)
  t.equal(set.evaluate(url('https://api.example.com/v1')).allowed, true)
  t.equal(set.evaluate(url('https://evil.org')).reason, 'net: host evil.org is not in the allowed domains')
  t.equal(set.evaluate(url('https://admin.example.com')).reason, 'net: host admin.example.com is denied (admin.example.com)')
  const none = compilePolicySet([np({ allowed_domains: [] })])
  t.equal(none.evaluate(url('https://example.com')).reason, 'net: host example.com is not in the allowed domains', 'an empty allow-list allows no host')
})

t.test('network_policy decision: URLs come from context.url, tool_input.url and tool_input.urls', async (t) => {
  const set = compilePolicySet([np({ denied_domains: ['evil.com'] })])
  t.equal(set.evaluate(req({ tool_input: { url: 'https://evil.com' } })).allowed, false, 'tool_input.url')
  t.equal(set.evaluate(req({ tool_input: { urls: ['https://ok.com', 7, 'https://evil.com'] } })).allowed, false, 'any of tool_input.urls (non-strings skipped)')
  t.equal(set.evaluate(req({ tool_input: { urls: 'https://evil.com' } })).allowed, false, 'a single string in tool_input.urls')
  t.equal(set.evaluate(req({ tool_input: { link: 'https://evil.com' } })).allowed, true, 'other fields are not read')
  t.equal(set.evaluate(req({ url: 5, tool_input: { url: null } })).allowed, true, 'values that are not strings are no URLs')
  t.equal(set.evaluate(req({})).allowed, true, 'no URL: nothing to check')
  t.equal(set.evaluate(req({ url: 'https://ok.com', tool_input: { url: 'https://fine.com', urls: ['https://evil.com'] } })).reason, 'net: host evil.com is denied (evil.com)')
})

t.test('network_policy decision: applies to every action, v1 and legacy', async (t) => {
  const set = compilePolicySet([np({ denied_domains: ['evil.com'] })])
  t.equal(set.evaluate(req({ url: 'https://evil.com' }, 'llm_call')).allowed, false)
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'tool.invoked', context: { tool_input: { url: 'https://evil.com' } } }, AGENT, T0)).allowed, false, 'legacy context.tool_input.url')
  t.equal(set.evaluate(buildInputLegacy({ request_type: 'llm.invoke', context: { url: 'https://evil.com' } }, AGENT, T0)).allowed, false, 'legacy context.url')
})

t.test('network_policy decision: a URL that cannot be parsed fails closed', async (t) => {
  const set = compilePolicySet([np({ denied_domains: ['evil.com'] })])
  t.equal(set.evaluate(url('http://[::1')).reason, 'net: URL "http://[::1" cannot be parsed')
  const long = `http://[${'x'.repeat(300)}`
  t.equal(set.evaluate(url(long)).reason, `net: URL "${long.slice(0, 200)}" cannot be parsed`, 'the URL is cut to 200 characters in the message')
})

t.test('network_policy in audit mode: a denied host is an [audit] warning', async (t) => {
  const d = compilePolicySet([np({ denied_domains: ['evil.com'] }, { enforcement: 'audit' })]).evaluate(url('https://evil.com'))
  t.equal(d.allowed, true)
  t.same(d.warnings, ['[audit] net: host evil.com is denied (evil.com)'])
})
