import { createPublicKey, type KeyObject } from 'node:crypto';
import { canonicalBase64Bytes } from '../../platform/ed25519-pool.ts';

/** Ed25519 public keys travel as the standard base64 of their raw 32 bytes (spec A, D4). */

export { canonicalBase64Bytes };

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
