import t from 'tap'
import { createHash, createHmac } from 'node:crypto'
import {
  KEY_PREFIXES, KEY_PREFIX_LENGTH, bootstrapSignature, bootstrapToken, hashKey, isUuid, keyKind, mintKey, safeEqual,
  verifyBootstrapToken, type KeyKind
} from '../../shared/keys.js'

const TENANT = '00000000-0000-0000-0000-000000000001'
const SECRET = 'test-bootstrap-secret-0123456789'

t.test('mintKey: each kind has its prefix followed by 43 base64url characters (32 random bytes)', async (t) => {
  const expected: Record<KeyKind, RegExp> = {
    agentV1: /^sk_agent_[A-Za-z0-9_-]{43}$/,
    agentLegacy: /^zk_live_[A-Za-z0-9_-]{43}$/,
    tenant: /^tk_live_[A-Za-z0-9_-]{43}$/
  }
  for (const kind of Object.keys(expected) as KeyKind[]) {
    const m = mintKey(kind)
    t.match(m.key, expected[kind], `${kind} key format`)
    const body = m.key.slice(KEY_PREFIXES[kind].length)
    t.equal(Buffer.from(body, 'base64url').length, 32, `${kind} body decodes to 32 bytes`)
    t.equal(keyKind(m.key), kind, `${kind} key is recognised as its own kind`)
  }
})

t.test('mintKey: hash is the lower-case sha256 hex of the whole key, prefix its first 12 characters', async (t) => {
  const m = mintKey('agentV1')
  t.equal(m.hash, createHash('sha256').update(m.key).digest('hex'))
  t.match(m.hash, /^[0-9a-f]{64}$/)
  t.equal(m.hash, hashKey(m.key), 'hashKey agrees with the minted hash')
  t.equal(KEY_PREFIX_LENGTH, 12)
  t.equal(m.prefix.length, 12)
  t.equal(m.prefix, m.key.slice(0, 12))
  t.equal(m.prefix.slice(0, 9), 'sk_agent_', 'the prefix holds the kind marker and only 3 secret characters')
})

t.test('mintKey: fifty keys of the same kind are all different, and so are their hashes', async (t) => {
  const keys = new Set<string>()
  const hashes = new Set<string>()
  for (let i = 0; i < 50; i++) {
    const m = mintKey('tenant')
    keys.add(m.key)
    hashes.add(m.hash)
  }
  t.equal(keys.size, 50)
  t.equal(hashes.size, 50)
})

t.test('hashKey: the sha256 test vector, and different keys give different hashes', async (t) => {
  t.equal(hashKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  t.not(hashKey('sk_agent_a'), hashKey('sk_agent_b'))
})

t.test('keyKind: well-formed keys of each prefix, using every base64url character class, are recognised', async (t) => {
  const body = 'A'.repeat(21) + '-_' + 'z9'.repeat(10)
  t.equal(body.length, 43)
  t.equal(keyKind('sk_agent_' + body), 'agentV1')
  t.equal(keyKind('zk_live_' + body), 'agentLegacy')
  t.equal(keyKind('tk_live_' + body), 'tenant')
})

t.test('keyKind: truncated, over-long, bad-alphabet, other-prefix and empty keys are undefined', async (t) => {
  const good = mintKey('agentV1').key
  t.equal(keyKind(good.slice(0, -1)), undefined, 'one character short')
  t.equal(keyKind(good + 'A'), undefined, 'one character too many')
  t.equal(keyKind('sk_agent_'), undefined, 'prefix only')
  t.equal(keyKind('sk_agent_' + 'A'.repeat(42) + '='), undefined, 'padding is not base64url')
  t.equal(keyKind('sk_agent_' + 'A'.repeat(42) + '+'), undefined, 'standard base64 "+" is rejected')
  t.equal(keyKind('sk_agent_' + 'A'.repeat(42) + '/'), undefined, 'standard base64 "/" is rejected')
  t.equal(keyKind(good + '\n'), undefined, 'trailing newline')
  t.equal(keyKind(' ' + good), undefined, 'leading space')
  t.equal(keyKind('sk_live_' + 'A'.repeat(43)), undefined, 'unknown prefix sk_live_')
  t.equal(keyKind('SK_AGENT_' + 'A'.repeat(43)), undefined, 'upper-case prefix')
  t.equal(keyKind('pk_live_' + 'A'.repeat(43)), undefined, 'other prefix')
  t.equal(keyKind('A'.repeat(52)), undefined, 'no prefix at all')
  t.equal(keyKind(''), undefined, 'empty string')
  t.equal(keyKind('bt_' + TENANT + '_' + 'a'.repeat(64)), undefined, 'a bootstrap token is not a key')
  t.equal(keyKind('sk_agent_' + 'é'.repeat(43)), undefined, 'non-ASCII characters')
})

t.test('safeEqual: equal strings are equal; any difference, including length, is not', async (t) => {
  const a = 'f'.repeat(64)
  t.equal(safeEqual(a, a), true)
  t.equal(safeEqual(a, 'f'.repeat(64)), true, 'equal content in different string objects')
  t.equal(safeEqual('', ''), true, 'two empty strings')
  t.equal(safeEqual(a, 'e' + a.slice(1)), false, 'first character differs')
  t.equal(safeEqual(a, a.slice(0, -1) + 'e'), false, 'last character differs')
  t.equal(safeEqual(a, a.slice(0, -1)), false, 'shorter')
  t.equal(safeEqual(a, a + 'f'), false, 'longer')
  t.equal(safeEqual('abc', 'ABC'), false, 'case matters')
  t.equal(safeEqual('', 'a'), false)
  t.equal(safeEqual('ā', 'ā'), true, 'non-ASCII equal')
  t.equal(safeEqual('ā', 'ă'), false, 'non-ASCII differ')
})

t.test('bootstrapToken: bt_<tenant>_<hex HMAC-SHA256(secret, tenant)>', async (t) => {
  const expected = createHmac('sha256', SECRET).update(TENANT).digest('hex')
  t.equal(bootstrapSignature(SECRET, TENANT), expected)
  t.equal(bootstrapToken(SECRET, TENANT), `bt_${TENANT}_${expected}`)
  t.not(bootstrapToken(SECRET, TENANT), bootstrapToken(SECRET + 'x', TENANT), 'the secret changes the token')
  t.not(bootstrapToken(SECRET, TENANT), bootstrapToken(SECRET, '00000000-0000-0000-0000-000000000002'), 'the tenant changes the token')
})

t.test('verifyBootstrapToken: a valid token gives its tenant id', async (t) => {
  t.equal(verifyBootstrapToken(SECRET, bootstrapToken(SECRET, TENANT)), TENANT)
  const other = '3f1c2a9e-7b4d-4e8a-9c1f-0a2b3c4d5e6f'
  t.equal(verifyBootstrapToken(SECRET, bootstrapToken(SECRET, other)), other, 'a tenant id that does not exist yet')
})

t.test('verifyBootstrapToken: a token signed with another secret is refused', async (t) => {
  t.equal(verifyBootstrapToken(SECRET, bootstrapToken('another-secret-0123456789abcdef', TENANT)), undefined)
  t.equal(verifyBootstrapToken(SECRET + ' ', bootstrapToken(SECRET, TENANT)), undefined, 'a secret differing by a trailing space')
})

t.test('verifyBootstrapToken: a tampered signature or a swapped tenant id is refused', async (t) => {
  const token = bootstrapToken(SECRET, TENANT)
  const last = token.at(-1) as string
  t.equal(verifyBootstrapToken(SECRET, token.slice(0, -1) + (last === '0' ? '1' : '0')), undefined, 'last hex digit changed')
  const sigStart = token.lastIndexOf('_') + 1
  const first = token[sigStart] as string
  t.equal(verifyBootstrapToken(SECRET, token.slice(0, sigStart) + (first === 'a' ? 'b' : 'a') + token.slice(sigStart + 1)), undefined,
    'first hex digit changed')
  t.equal(verifyBootstrapToken(SECRET, `bt_00000000-0000-0000-0000-000000000002_${bootstrapSignature(SECRET, TENANT)}`), undefined,
    'another tenant id with this tenant\'s signature')
  t.equal(verifyBootstrapToken(SECRET, `bt_${TENANT}_${'0'.repeat(64)}`), undefined, 'all-zero signature')
})

t.test('verifyBootstrapToken: a tenant id that is not a UUID is refused even when correctly signed', async (t) => {
  for (const bad of [
    '------------------------------------', // 36 dashes: passes the character class, not the UUID shape
    '0000000000000000000000000000000000-1', // right length, wrong grouping
    '00000000-0000-0000-0000-00000000001', // 35 characters
    '00000000-0000-0000-0000-0000000000001', // 37 characters
    'default',
    ''
  ]) {
    t.equal(verifyBootstrapToken(SECRET, bootstrapToken(SECRET, bad)), undefined, JSON.stringify(bad))
  }
})

t.test('verifyBootstrapToken: upper-case hex in the tenant id or the signature is refused', async (t) => {
  t.equal(verifyBootstrapToken(SECRET, bootstrapToken(SECRET, 'ABCDEF00-0000-0000-0000-000000000001')), undefined,
    'upper-case tenant id, correctly signed')
  const sig = bootstrapSignature(SECRET, TENANT)
  t.match(sig, /[a-f]/, 'the signature has letters to upper-case')
  t.equal(verifyBootstrapToken(SECRET, `bt_${TENANT}_${sig.toUpperCase()}`), undefined, 'upper-case signature')
  t.equal(verifyBootstrapToken(SECRET, `BT_${TENANT}_${sig}`), undefined, 'upper-case prefix')
})

t.test('verifyBootstrapToken: extra, missing or surrounding characters are refused', async (t) => {
  const token = bootstrapToken(SECRET, TENANT)
  t.equal(verifyBootstrapToken(SECRET, token + '0'), undefined, 'one extra hex digit')
  t.equal(verifyBootstrapToken(SECRET, token + '\n'), undefined, 'trailing newline')
  t.equal(verifyBootstrapToken(SECRET, token + ' '), undefined, 'trailing space')
  t.equal(verifyBootstrapToken(SECRET, ' ' + token), undefined, 'leading space')
  t.equal(verifyBootstrapToken(SECRET, 'x' + token), undefined, 'leading character')
  t.equal(verifyBootstrapToken(SECRET, token.slice(0, -1)), undefined, 'one hex digit short')
  t.equal(verifyBootstrapToken(SECRET, token.slice(3)), undefined, 'without bt_')
  t.equal(verifyBootstrapToken(SECRET, token.replace(`_${TENANT}_`, `-${TENANT}-`)), undefined, 'wrong separators')
  t.equal(verifyBootstrapToken(SECRET, token + '_' + 'a'.repeat(64)), undefined, 'a second signature appended')
  t.equal(verifyBootstrapToken(SECRET, ''), undefined, 'empty token')
  t.equal(verifyBootstrapToken(SECRET, mintKey('agentV1').key), undefined, 'an agent key')
})

t.test('isUuid: lower-case canonical UUIDs only', async (t) => {
  t.equal(isUuid(TENANT), true)
  t.equal(isUuid('3f1c2a9e-7b4d-4e8a-9c1f-0a2b3c4d5e6f'), true)
  t.equal(isUuid('3F1C2A9E-7B4D-4E8A-9C1F-0A2B3C4D5E6F'), false, 'upper case')
  t.equal(isUuid('3f1c2a9e7b4d4e8a9c1f0a2b3c4d5e6f'), false, 'no dashes')
  t.equal(isUuid('{3f1c2a9e-7b4d-4e8a-9c1f-0a2b3c4d5e6f}'), false, 'braces')
  t.equal(isUuid('3f1c2a9e-7b4d-4e8a-9c1f-0a2b3c4d5e6g'), false, 'non-hex')
  t.equal(isUuid(''), false, 'empty')
})
