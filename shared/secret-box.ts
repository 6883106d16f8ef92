/**
 * Encryption at rest for secrets and provider keys: AES-256-GCM under the master key, a fresh 12-byte
 * nonce per value. The stored form is `v1:<nonce b64>:<tag b64>:<ciphertext b64>`; the associated data
 * binds a value to its owner (tenant and name), so a ciphertext moved to another row does not decrypt.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

export class SecretBox {
  private readonly key: Buffer
  constructor (masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('master key must be 32 bytes')
    this.key = Buffer.from(masterKey)
  }

  seal (plaintext: string, aad: string): string {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce)
    cipher.setAAD(Buffer.from(aad))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return `v1:${nonce.toString('base64')}:${cipher.getAuthTag().toString('base64')}:${body.toString('base64')}`
  }

  open (sealed: string, aad: string): string {
    const parts = sealed.split(':')
    if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('not a sealed value')
    const nonce = Buffer.from(parts[1] as string, 'base64')
    const tag = Buffer.from(parts[2] as string, 'base64')
    // A full-length tag only: GCM would otherwise accept a truncated one, and a forgery gets cheap.
    if (nonce.length !== 12 || tag.length !== 16) throw new Error('not a sealed value')
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce, { authTagLength: 16 })
    decipher.setAAD(Buffer.from(aad))
    decipher.setAuthTag(tag)
    return Buffer.concat([decipher.update(Buffer.from(parts[3] as string, 'base64')), decipher.final()]).toString('utf8')
  }
}
