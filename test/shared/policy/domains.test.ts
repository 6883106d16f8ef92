import t from 'tap'
import { compileDomains, hostOf, normalizeDomain } from '../../../shared/policy/domains.js'

t.test('normalizeDomain: lower-cases, strips a trailing dot, keeps the *. prefix, punycodes', async (t) => {
  t.equal(normalizeDomain('Example.COM'), 'example.com')
  t.equal(normalizeDomain('example.com.'), 'example.com')
  t.equal(normalizeDomain('*.Example.com'), '*.example.com')
  t.equal(normalizeDomain('bücher.de'), 'xn--bcher-kva.de')
})

t.test('normalizeDomain: refuses what is not a host name with an empty string', async (t) => {
  for (const bad of ['', '*.', 'a*.com', 'http://x.com', 'x.com/path', 'x.com:80', 'us er@x.com', 'a b.com', '*']) {
    t.equal(normalizeDomain(bad), '', `refuses ${JSON.stringify(bad)}`)
  }
})

t.test('hostOf: URLs with and without a scheme give their lower-case host', async (t) => {
  t.equal(hostOf('https://API.GitHub.com/repos?x=1'), 'api.github.com')
  t.equal(hostOf('docs.example.com/path'), 'docs.example.com')
  t.equal(hostOf('http://user:pw@evil.example.com:8080/'), 'evil.example.com')
  t.equal(hostOf('https://example.com./'), 'example.com')
  t.equal(hostOf('http://[::1]:80/'), '::1')
  t.equal(hostOf('http://127.0.0.1/'), '127.0.0.1')
  t.equal(hostOf('https://bücher.de/'), 'xn--bcher-kva.de')
})

t.test('hostOf: unparseable URLs give undefined', async (t) => {
  t.equal(hostOf('http://'), undefined)
  t.equal(hostOf('https://exa mple.com'), undefined)
  t.equal(hostOf(''), undefined)
  t.equal(hostOf('file:///etc/passwd'), undefined)
})

t.test('compileDomains: example.com matches itself only; *.example.com its subdomains only', async (t) => {
  const set = compileDomains(['example.com', '*.corp.example'])
  t.equal(set.match('example.com'), 'example.com')
  t.equal(set.match('www.example.com'), undefined)
  t.equal(set.match('a.corp.example'), '*.corp.example')
  t.equal(set.match('a.b.corp.example'), '*.corp.example')
  t.equal(set.match('corp.example'), undefined)
  t.equal(set.match('evilcorp.example'), undefined)
})

t.test('compileDomains: entries are normalised; invalid ones are ignored', async (t) => {
  const set = compileDomains(['API.GitHub.com.', 'not a domain', '*.Example.ORG'])
  t.equal(set.match('api.github.com'), 'API.GitHub.com.')
  t.equal(set.match('x.example.org'), '*.Example.ORG')
  t.equal(set.match('not a domain'), undefined)
})

t.test('normalizeDomain: a name punycode cannot encode is refused', async (t) => {
  t.equal(normalizeDomain('xn--a'), '')
  t.equal(normalizeDomain('*.xn--zz'), '')
})

t.test('hostOf: answers stay right when the cache of hosts fills and starts again', async (t) => {
  let wrong = 0
  for (let i = 0; i < 1100; i++) if (hostOf(`https://h${i}.example.com/p`) !== `h${i}.example.com`) wrong++
  t.equal(wrong, 0, "1,100 different hosts, each right")
  t.equal(hostOf('https://h5.example.com/p'), 'h5.example.com')
})
