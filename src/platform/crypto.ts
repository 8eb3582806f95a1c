import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import canonicalize from 'canonicalize';

export function sha256Hex(input: string | Buffer): string {
  return createHash('sha256').update(input).digest('hex');
}

export function hmacSha256Hex(secret: string | Buffer, input: string | Buffer): string {
  return createHmac('sha256', secret).update(input).digest('hex');
}

/** Constant-time comparison of two strings; unequal lengths compare false without leaking where. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** URL-safe random text carrying `bytes * 8` bits of randomness. */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}

/** RFC 8785 canonical JSON: the one serialisation every hash and signature in the service uses. */
export function canonicalJson(value: unknown): string {
  const out = canonicalize(value);
  if (out === undefined) throw new TypeError('value has no canonical JSON form');
  return out;
}

/**
 * A key for one purpose, derived from a deployment secret with HKDF-SHA256 (RFC 5869): each
 * purpose gets a key of its own, and none of them tells the secret or another purpose's key.
 */
export function derivedKey(secret: string | Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'observatory derived key v1', purpose, 32));
}
