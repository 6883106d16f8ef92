import t from 'tap'
import { ByteSlab } from '../../shared/bytes.js'

t.test('ByteSlab.join: texts encoded as UTF-8 and byte runs copied, one after the other', async (t) => {
  const slab = new ByteSlab()
  const out = slab.join(['{"a":', Buffer.from('"caf\u00e9"'), ',"b":"\u{1F600} \u4e2d"}'])
  t.equal(Buffer.from(out).toString('utf8'), '{"a":"caf\u00e9","b":"\u{1F600} \u4e2d"}')
  t.equal(out.length, Buffer.byteLength('{"a":"caf\u00e9","b":"\u{1F600} \u4e2d"}'), 'exactly the bytes, no slack')
  t.equal(slab.join([]).length, 0, 'nothing joined: no bytes')
  t.equal(Buffer.from(slab.join(['', new Uint8Array(0), 'x'])).toString(), 'x', 'empty parts add nothing')
})

t.test('ByteSlab.join: earlier answers are never overwritten, across many slabs', async (t) => {
  const slab = new ByteSlab()
  const kept: Array<[Uint8Array, string]> = []
  for (let i = 0; i < 2000; i++) {
    const text = `{"n":${i},"pad":"${'x'.repeat(i % 97)}","u":"\u00e9${i}"}`
    kept.push([slab.join([text]), text])
  }
  const bad = kept.filter(([bytes, text]) => Buffer.from(bytes).toString('utf8') !== text)
  t.equal(bad.length, 0, 'every answer still holds its own bytes')
})

t.test('ByteSlab.join: a text larger than a quarter of a slab gets a buffer of its own', async (t) => {
  const slab = new ByteSlab()
  const big = 'y'.repeat(20_000) + '\u00e9'
  const out = slab.join(['[', big, Buffer.from(']')])
  t.equal(Buffer.from(out).toString('utf8'), `[${big}]`)
  const small = slab.join(['ok'])
  t.equal(Buffer.from(small).toString(), 'ok', 'the slab still serves small answers')
})
