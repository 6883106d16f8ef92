/**
 * Streaming chat with an LLM provider, over undici with timeouts: OpenAI's chat completions (also
 * every OpenAI-compatible server: Ollama, vLLM, LM Studio) and Anthropic's messages API, each read in
 * its own server-sent event format. The text arrives through `onText` as it streams; an upstream
 * error (a refusal, a broken stream) is thrown with a message that never holds the API key.
 */
import { request } from 'undici'

export interface ChatMessage {
  role: 'user' | 'assistant'
  content: string
}

export interface ChatCall {
  kind: 'openai' | 'anthropic'
  baseUrl: string
  apiKey: string
  model: string
  system: string
  messages: ChatMessage[]
  signal: AbortSignal
  onText: (text: string) => void
}

export const ANTHROPIC_BASE_URL = 'https://api.anthropic.com'
export const OPENAI_BASE_URL = 'https://api.openai.com/v1'
const CONNECT_TIMEOUT_MS = 10_000
/** Longest silence within a stream (a model thinking) before it counts as broken. */
const STREAM_IDLE_MS = 60_000

/** A message that is safe to show and log: the key, if the provider echoed it, is blanked. */
function scrub (text: string, apiKey: string): string {
  return apiKey.length >= 4 ? text.split(apiKey).join('[key]') : text
}

/** Reads a server-sent event body, calling `onEvent` with each event's name and data. */
async function readEvents (body: AsyncIterable<Buffer | string>, onEvent: (event: string, data: string) => boolean | undefined): Promise<void> {
  let buf = ''
  for await (const chunk of body) {
    buf += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    let cut: number
    while ((cut = buf.search(/\r?\n\r?\n/)) !== -1) {
      const block = buf.slice(0, cut)
      buf = buf.slice(cut).replace(/^\r?\n\r?\n/, '')
      let event = 'message'
      const data: string[] = []
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim()
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      }
      if (data.length > 0 && onEvent(event, data.join('\n')) === true) return
    }
  }
}

/** Streams one answer; resolves when the provider says it is complete. */
export async function streamChat (call: ChatCall): Promise<void> {
  const openai = call.kind === 'openai'
  const url = openai ? `${call.baseUrl}/chat/completions` : `${call.baseUrl}/v1/messages`
  const headers: Record<string, string> = openai
    ? { authorization: `Bearer ${call.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' }
    : { 'x-api-key': call.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', accept: 'text/event-stream' }
  const body = openai
    ? { model: call.model, stream: true, messages: [{ role: 'system', content: call.system }, ...call.messages] }
    : { model: call.model, stream: true, max_tokens: 2048, system: call.system, messages: call.messages }
  let res
  try {
    res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), signal: call.signal, headersTimeout: CONNECT_TIMEOUT_MS, bodyTimeout: STREAM_IDLE_MS })
  } catch (err) {
    throw new Error(scrub(`cannot reach the provider: ${(err as Error).message}`, call.apiKey))
  }
  if (res.statusCode !== 200) {
    const text = await res.body.text().catch(() => '')
    let detail = text.slice(0, 300)
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } | string }
      const m = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message
      if (typeof m === 'string') detail = m
    } catch {}
    throw new Error(scrub(`the provider answered ${res.statusCode}: ${detail}`, call.apiKey))
  }
  let complete = false
  try {
    await readEvents(res.body, (event, data) => {
      if (openai) {
        if (data.trim() === '[DONE]') { complete = true; return true }
        const parsed = JSON.parse(data) as { choices?: Array<{ delta?: { content?: unknown } }>, error?: { message?: string } }
        if (parsed.error !== undefined) throw new Error(parsed.error.message ?? 'the provider reported an error')
        const text = parsed.choices?.[0]?.delta?.content
        if (typeof text === 'string' && text !== '') call.onText(text)
        return undefined
      }
      const parsed = JSON.parse(data) as { type?: string, delta?: { type?: string, text?: unknown }, error?: { message?: string } }
      if (event === 'error' || parsed.type === 'error') throw new Error(parsed.error?.message ?? 'the provider reported an error')
      if (parsed.type === 'content_block_delta' && parsed.delta?.type === 'text_delta' && typeof parsed.delta.text === 'string') call.onText(parsed.delta.text)
      if (parsed.type === 'message_stop') { complete = true; return true }
      return undefined
    })
  } catch (err) {
    if (call.signal.aborted) throw err
    throw new Error(scrub(`the stream broke: ${(err as Error).message}`, call.apiKey))
  }
  if (!complete && !call.signal.aborted) throw new Error('the stream ended before the answer was complete')
}
