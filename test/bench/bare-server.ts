/** The baseline of the HTTP benchmarks: bare fastify, one POST route parsing JSON and answering a constant body. */
import Fastify from 'fastify'

const app = Fastify({ logger: false })
const body = { allowed: true, reason: null, policies_evaluated: [], warnings: [], restrictions: {}, context: {} }
app.post('/evaluate', async () => body)
const address = await app.listen({ port: 0, host: '127.0.0.1' })
process.stdout.write(`listening on ${address}\n`)
