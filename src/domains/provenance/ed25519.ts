import { createPublicKey, type KeyObject, verify } from 'node:crypto';

/**
 * Ed25519 with node:crypto: public keys travel as the standard base64 of their raw 32 bytes, and
 * signatures as the standard base64 of their 64 bytes (spec A, D4).
 */

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The bytes of `text` when it is canonical RFC 4648 base64 (standard alphabet, padded, no
 * whitespace, unused bits zero: the one spelling that re-encodes to itself); otherwise null.
 */
export function canonicalBase64Bytes(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

export type PublicKeyProblem = 'invalid-public-key-encoding' | 'invalid-public-key-length' | 'invalid-public-key';

/** A usable Ed25519 public key from its base64, or why not. */
export function parsePublicKey(publicKeyB64: string): { key: KeyObject } | { problem: PublicKeyProblem } {
  const bytes = canonicalBase64Bytes(publicKeyB64);
  if (bytes === null) return { problem: 'invalid-public-key-encoding' };
  if (bytes.length !== 32) return { problem: 'invalid-public-key-length' };
  try {
    return { key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: bytes.toString('base64url') }, format: 'jwk' }) };
  } catch {
    return { problem: 'invalid-public-key' };
  }
}

/** True when `signatureB64` is a valid Ed25519 signature of `message` under `key`; malformed input is false, never a throw. */
export function verifySignature(key: KeyObject, message: Buffer, signatureB64: string): boolean {
  const signature = canonicalBase64Bytes(signatureB64);
  if (signature === null || signature.length !== 64) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
