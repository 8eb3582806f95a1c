'use strict';
/**
 * One Ed25519 signature check (platform/ed25519-pool.ts). CommonJS and plain JavaScript so that a
 * worker thread can run this file with no TypeScript loader; the pool's inline mode requires the
 * same file, so there is one implementation. As a worker it answers `{id, checks}` messages with
 * `{id, results}`.
 */
const { createPublicKey, verify } = require('node:crypto');
const { isMainThread, parentPort } = require('node:worker_threads');

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const KEYS_MAX = 10_000;
const keys = new Map();

/** The public key of a raw 32-byte key in base64, parsed once; null when it is not one. */
function keyOf(publicKeyB64) {
  let key = keys.get(publicKeyB64);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyB64, 'base64').toString('base64url') }, format: 'jwk' });
    } catch {
      key = null;
    }
    if (keys.size >= KEYS_MAX) keys.clear();
    keys.set(publicKeyB64, key);
  }
  return key;
}

/**
 * The bytes of `text` when it is canonical RFC 4648 base64 (standard alphabet, padded, no
 * whitespace, unused bits zero: the one spelling that re-encodes to itself); otherwise null.
 */
function canonicalBase64Bytes(text) {
  if (typeof text !== 'string' || !BASE64.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

/** True when `signatureB64` (canonical base64 of 64 bytes) verifies `message` under the key; never throws. */
function check({ publicKeyB64, message, signatureB64 }) {
  const signature = canonicalBase64Bytes(signatureB64);
  if (signature === null || signature.length !== 64) return false;
  const key = keyOf(publicKeyB64);
  if (key === null) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

if (!isMainThread && parentPort) {
  parentPort.on('message', ({ id, checks }) => parentPort.postMessage({ id, results: checks.map(check) }));
}

module.exports = { check, canonicalBase64Bytes };
