import t from 'tap'
import { readEvents } from '../../shared/sse.js'

async function * chunks (...parts: string[]): AsyncIterable<string> { for (const p of parts) yield p }

t.test('readEvents: events split across chunks, CRLF or LF, several data lines, comments and empty blocks skipped, unnamed events are "message"', async (t) => {
  const seen: Array<[string, string]> = []
  await readEvents(chunks('event: config\ndata: {"a"', ':1}\n\n: keep-alive\n\n', 'data: one\r\ndata:two\r\n\r\n', 'event: x\n\n', 'event: end\ndata: [DONE]\n\n'), (e, d) => { seen.push([e, d]); return undefined })
  t.strictSame(seen, [['config', '{"a":1}'], ['message', 'one\ntwo'], ['end', '[DONE]']])
})

t.test('readEvents: returning true stops the reading; a trailing block without its blank line is not delivered', async (t) => {
  const seen: string[] = []
  await readEvents(chunks('data: 1\n\ndata: 2\n\ndata: 3\n\n'), (_e, d) => { seen.push(d); return d === '2' })
  t.strictSame(seen, ['1', '2'])
  const partial: string[] = []
  await readEvents(chunks('data: whole\n\ndata: cut off'), (_e, d) => { partial.push(d); return undefined })
  t.strictSame(partial, ['whole'])
})
