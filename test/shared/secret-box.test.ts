import t from 'tap'
import { SecretBox } from '../../shared/secret-box.js'

const box = new SecretBox(Buffer.alloc(32, 9))

t.test('SecretBox: round trip, unicode, a fresh nonce each time', async (t) => {
  for (const v of ['', 'sk-live-123', 'πß🙂 \u0000 end', 'x'.repeat(100_000)]) {
    const sealed = box.seal(v, 'tenant:a')
    t.equal(box.open(sealed, 'tenant:a'), v)
    t.notMatch(sealed, v.length > 3 ? v : /^$/, 'no plaintext in the sealed form')
  }
  t.not(box.seal('same', 'x'), box.seal('same', 'x'), 'two seals of one value differ')
  t.match(box.seal('v', 'x'), /^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]*$/)
})

t.test('SecretBox: a wrong owner, key, tag or ciphertext does not open', async (t) => {
  const sealed = box.seal('secret value', 'tenant:a:agent:x:NAME')
  t.throws(() => box.open(sealed, 'tenant:b:agent:x:NAME'), 'another owner')
  t.throws(() => new SecretBox(Buffer.alloc(32, 1)).open(sealed, 'tenant:a:agent:x:NAME'), 'another key')
  const [v, nonce, tag, body] = sealed.split(':') as [string, string, string, string]
  const flip = (b64: string): string => { const b = Buffer.from(b64, 'base64'); b[0] = (b[0] as number) ^ 1; return b.toString('base64') }
  t.throws(() => box.open([v, nonce, flip(tag), body].join(':'), 'tenant:a:agent:x:NAME'), 'tampered tag')
  t.throws(() => box.open([v, nonce, tag, flip(body)].join(':'), 'tenant:a:agent:x:NAME'), 'tampered ciphertext')
  t.throws(() => box.open('plaintext', 'x'), /not a sealed value/)
  t.throws(() => box.open('v2:a:b:c', 'x'), /not a sealed value/)
  t.throws(() => new SecretBox(Buffer.alloc(16)), /32 bytes/)
})
