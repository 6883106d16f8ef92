import t from 'tap'
import { createHmac } from 'node:crypto'
import {
  bootstrapSignature, bootstrapToken, hashKey, isUuid, keyKind, mintKey, safeEqual, verifyBootstrapToken
} from '../../shared/keys.js'

const SECRET = 'a-bootstrap-secret-for-tests'
const TENANT = '00000000-0000-0000-0000-000000000001'

t.test('mintKey: prefix + 43 base64url characters, SHA-256 hex hash, 12-character prefix, never the same twice', async (t) => {
  for (const [kind, prefix] of [['agentV1', 'sk_agent_'], ['agentLegacy', 'zk_live_'], ['tenant', 'tk_live_']] as const) {
    const k = mintKey(kind)
    t.match(k.key, new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`), `${kind} format`)
    t.equal(k.hash, hashKey(k.key))
    t.match(k.hash, /^[0-9a-f]{64}$/)
    t.equal(k.prefix, k.key.slice(0, 12))
    t.equal(keyKind(k.key), kind)
    t.not(mintKey(kind).key, k.key)
  }
})

t.test('keyKind: anything but a whole, well-formed key is undefined', async (t) => {
  const good = mintKey('agentV1').key
  for (const bad of ['', 'sk_agent_', good.slice(0, -1), good + 'x', good.replace(/.$/, '!'), 'pk_live_' + good.slice(9), `Bearer ${good}`]) {
    t.equal(keyKind(bad), undefined, JSON.stringify(bad.slice(0, 20)))
  }
})

t.test('safeEqual: equal strings only; a length difference is false', async (t) => {
  t.ok(safeEqual('abc', 'abc'))
  t.notOk(safeEqual('abc', 'abd'))
  t.notOk(safeEqual('abc', 'ab'))
  t.ok(safeEqual('', ''))
})

t.test('bootstrap tokens: bt_<tenant>_<hex HMAC-SHA256(secret, tenant)>, verified in full', async (t) => {
  const token = bootstrapToken(SECRET, TENANT)
  t.equal(token, `bt_${TENANT}_${createHmac('sha256', SECRET).update(TENANT).digest('hex')}`)
  t.equal(bootstrapSignature(SECRET, TENANT), token.slice(-64))
  t.equal(verifyBootstrapToken(SECRET, token), TENANT)
  t.equal(verifyBootstrapToken('another-secret-entirely', token), undefined, 'wrong secret')
  t.equal(verifyBootstrapToken(SECRET, token.slice(0, -1) + (token.endsWith('0') ? '1' : '0')), undefined, 'tampered signature')
  t.equal(verifyBootstrapToken(SECRET, token.toUpperCase()), undefined, 'upper-case hex')
  t.equal(verifyBootstrapToken(SECRET, token + 'a'), undefined, 'extra characters')
  const other = '11111111-2222-4333-8444-555555555555'
  t.equal(verifyBootstrapToken(SECRET, `bt_${other}_${token.slice(-64)}`), undefined, 'signature of another tenant')
  t.equal(verifyBootstrapToken(SECRET, bootstrapToken(SECRET, 'not-a-uuid-----------------------xx')), undefined, 'not a UUID')
  t.equal(verifyBootstrapToken(SECRET, ''), undefined)
  t.ok(isUuid(TENANT))
  t.notOk(isUuid('nope'))
})
