/**
 * A load generator in a process of its own: `node sequential-client.js URL AMOUNT` sends AMOUNT
 * requests one after another on one connection, with the method, headers and body given as JSON on
 * standard input, and exits non-zero on any error or non-2xx answer. The instruction benchmark runs
 * it apart from its own process so that the server sees the same request pacing whatever the
 * benchmark process is doing.
 */
import autocannon from 'autocannon'

const [url, amount] = process.argv.slice(2)
let input = ''
for await (const chunk of process.stdin) input += String(chunk)
const { headers, body } = JSON.parse(input) as { headers: Record<string, string>, body: string }
const r = await autocannon({ url: url as string, method: 'POST', connections: 1, amount: Number(amount), headers, body })
if (r.non2xx > 0 || r.errors > 0) {
  process.stderr.write(`${url}: ${r.non2xx} non-2xx answers, ${r.errors} errors\n`)
  process.exit(1)
}
