/**
 * UTF-8 bytes of answers, written into shared slabs rather than one new buffer each. `Buffer.from`
 * measures a text's UTF-8 length in one pass and encodes it in a second; `write` into a slab with
 * room for the worst case encodes in one, and runs of bytes already encoded (the cached JSON of a
 * policy's result) are copied, not encoded again. A slab is never written twice: each answer gets
 * the next free range, and a full slab is left to the garbage collector once the answers that view
 * it are written out.
 */
const SLAB_BYTES = 64 * 1024

export class ByteSlab {
  private slab = Buffer.allocUnsafe(SLAB_BYTES)
  private used = 0

  /** The UTF-8 bytes of `parts` (texts, and byte runs copied as they are), one after the other. */
  join (parts: ReadonlyArray<string | Uint8Array>): Uint8Array {
    let max = 0
    for (const p of parts) max += typeof p === 'string' ? p.length * 3 : p.length
    if (max > SLAB_BYTES / 4) return Buffer.concat(parts.map((p) => typeof p === 'string' ? Buffer.from(p, 'utf8') : p))
    if (this.used + max > SLAB_BYTES) {
      this.slab = Buffer.allocUnsafe(SLAB_BYTES)
      this.used = 0
    }
    const slab = this.slab
    const start = this.used
    let at = start
    for (const p of parts) {
      if (typeof p === 'string') {
        at += slab.write(p, at, 'utf8')
      } else {
        slab.set(p, at)
        at += p.length
      }
    }
    // The next answer starts on an 8-byte boundary.
    this.used = (at + 7) & ~7
    return new Uint8Array(slab.buffer, slab.byteOffset + start, at - start)
  }
}
