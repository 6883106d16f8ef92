/**
 * Streaming chat with an LLM provider, over undici with timeouts: OpenAI's chat completions (also
 * every OpenAI-compatible server: Ollama, vLLM, LM Studio) and Anthropic's messages API, each read in
 * its own server-sent event format. The text arrives through `onText` as it streams; an upstream
 * error (a refusal, a broken stream) is thrown with a message that never holds the API key.
 */
import { request } from 'undici'
import type { ToolSet } from './tools.js'
import { readEvents } from '../../shared/sse.js'

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
  /** Read-only tools the model may call (when it supports them). */
  tools?: ToolSet
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

/** Rounds of tool calls one answer may take before it must answer in words. */
export const MAX_TOOL_ROUNDS = 4

/** POSTs one round and returns the streaming body; a refusal is thrown with the provider's message. */
async function post (call: ChatCall, body: unknown): Promise<AsyncIterable<Buffer>> {
  const openai = call.kind === 'openai'
  const url = openai ? `${call.baseUrl}/chat/completions` : `${call.baseUrl}/v1/messages`
  const headers: Record<string, string> = openai
    ? { authorization: `Bearer ${call.apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' }
    : { 'x-api-key': call.apiKey, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', accept: 'text/event-stream' }
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
  return res.body
}

/** Reads a round's stream; errors inside it are reported as a broken stream (the key blanked). */
async function read (call: ChatCall, body: AsyncIterable<Buffer>, onEvent: (event: string, data: string) => boolean | undefined): Promise<void> {
  try {
    await readEvents(body, onEvent)
  } catch (err) {
    if (call.signal.aborted) throw err
    throw new Error(scrub(`the stream broke: ${(err as Error).message}`, call.apiKey))
  }
}

function parseArgs (text: string): unknown {
  try {
    return JSON.parse(text === '' ? '{}' : text)
  } catch {
    return {}
  }
}

async function openaiChat (call: ChatCall): Promise<void> {
  const messages: unknown[] = [{ role: 'system', content: call.system }, ...call.messages]
  const tools = call.tools === undefined ? {} : { tools: call.tools.definitions.map((d) => ({ type: 'function', function: d })) }
  for (let round = 0; ; round++) {
    const calls = new Map<number, { id: string, name: string, args: string }>()
    let complete = false
    await read(call, await post(call, { model: call.model, stream: true, messages, ...tools }), (_event, data) => {
      if (data.trim() === '[DONE]') { complete = true; return true }
      const parsed = JSON.parse(data) as {
        choices?: Array<{ delta?: { content?: unknown, tool_calls?: Array<{ index?: number, id?: string, function?: { name?: string, arguments?: string } }> } }>
        error?: { message?: string }
      }
      if (parsed.error !== undefined) throw new Error(parsed.error.message ?? 'the provider reported an error')
      const delta = parsed.choices?.[0]?.delta
      if (typeof delta?.content === 'string' && delta.content !== '') call.onText(delta.content)
      for (const tc of delta?.tool_calls ?? []) {
        const i = tc.index ?? 0
        const c = calls.get(i) ?? { id: '', name: '', args: '' }
        if (tc.id !== undefined) c.id = tc.id
        if (tc.function?.name !== undefined) c.name += tc.function.name
        if (tc.function?.arguments !== undefined) c.args += tc.function.arguments
        calls.set(i, c)
      }
      return undefined
    })
    if (!complete) throw new Error('the stream ended before the answer was complete')
    if (calls.size === 0 || call.tools === undefined) return
    if (round >= MAX_TOOL_ROUNDS) throw new Error(`the model kept calling tools (${MAX_TOOL_ROUNDS} rounds); ask again more precisely`)
    const list = [...calls.values()]
    messages.push({ role: 'assistant', content: null, tool_calls: list.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.args } })) })
    for (const c of list) messages.push({ role: 'tool', tool_call_id: c.id, content: await call.tools.run(c.name, parseArgs(c.args)) })
  }
}

async function anthropicChat (call: ChatCall): Promise<void> {
  const messages: unknown[] = [...call.messages]
  const tools = call.tools === undefined ? {} : { tools: call.tools.definitions.map((d) => ({ name: d.name, description: d.description, input_schema: d.parameters })) }
  for (let round = 0; ; round++) {
    const blocks = new Map<number, { type: 'text', text: string } | { type: 'tool_use', id: string, name: string, json: string }>()
    let complete = false
    await read(call, await post(call, { model: call.model, stream: true, max_tokens: 2048, system: call.system, messages, ...tools }), (event, data) => {
      const parsed = JSON.parse(data) as {
        type?: string
        index?: number
        content_block?: { type?: string, id?: string, name?: string }
        delta?: { type?: string, text?: unknown, partial_json?: unknown }
        error?: { message?: string }
      }
      if (event === 'error' || parsed.type === 'error') throw new Error(parsed.error?.message ?? 'the provider reported an error')
      const i = parsed.index ?? 0
      if (parsed.type === 'content_block_start') {
        const b = parsed.content_block
        blocks.set(i, b?.type === 'tool_use' ? { type: 'tool_use', id: b.id ?? '', name: b.name ?? '', json: '' } : { type: 'text', text: '' })
      } else if (parsed.type === 'content_block_delta') {
        const b = blocks.get(i) ?? { type: 'text' as const, text: '' }
        blocks.set(i, b)
        if (parsed.delta?.type === 'text_delta' && typeof parsed.delta.text === 'string') {
          call.onText(parsed.delta.text)
          if (b.type === 'text') b.text += parsed.delta.text
        } else if (parsed.delta?.type === 'input_json_delta' && typeof parsed.delta.partial_json === 'string' && b.type === 'tool_use') {
          b.json += parsed.delta.partial_json
        }
      } else if (parsed.type === 'message_stop') {
        complete = true
        return true
      }
      return undefined
    })
    if (!complete) throw new Error('the stream ended before the answer was complete')
    const ordered = [...blocks.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1])
    const uses = ordered.filter((b): b is { type: 'tool_use', id: string, name: string, json: string } => b.type === 'tool_use')
    if (uses.length === 0 || call.tools === undefined) return
    if (round >= MAX_TOOL_ROUNDS) throw new Error(`the model kept calling tools (${MAX_TOOL_ROUNDS} rounds); ask again more precisely`)
    messages.push({
      role: 'assistant',
      content: ordered.flatMap((b): unknown[] => b.type === 'text' ? (b.text === '' ? [] : [{ type: 'text', text: b.text }]) : [{ type: 'tool_use', id: b.id, name: b.name, input: parseArgs(b.json) }])
    })
    const results: unknown[] = []
    for (const u of uses) results.push({ type: 'tool_result', tool_use_id: u.id, content: await call.tools.run(u.name, parseArgs(u.json)) })
    messages.push({ role: 'user', content: results })
  }
}

/**
 * Streams one answer; resolves when the provider says it is complete. With `tools`, the model may
 * call them: their answers are sent back and the model goes on, up to MAX_TOOL_ROUNDS rounds.
 */
export async function streamChat (call: ChatCall): Promise<void> {
  if (call.kind === 'openai') await openaiChat(call)
  else await anthropicChat(call)
}
