/**
 * Reading a server-sent event stream (the WHATWG event-stream format): blocks separated by a blank
 * line, `event:` and `data:` fields (several data lines joined by a line break), comments ignored.
 * Used for the control plane's config watch (by the sidecar) and for LLM providers' streams.
 */

/**
 * Reads a server-sent event body, calling `onEvent` with each event's name (`message` when the block
 * names none) and data; a block without data is skipped. Stops when `onEvent` returns true.
 */
export async function readEvents (body: AsyncIterable<Buffer | string>, onEvent: (event: string, data: string) => boolean | undefined): Promise<void> {
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
