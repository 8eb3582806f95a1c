import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { type Ed25519Jwk, jwkThumbprint } from '../../src/domains/honeypot/vendors/web-bot-auth.ts';

/** Helpers shared by the vendor tests (src/domains/honeypot/vendors/): addresses inside a prefix, Web Bot Auth keys and signatures made by hand. */

/** An address inside a prefix: its network address, plus one for IPv4 prefixes shorter than /31. */
export function addressInside(cidr: string): string {
  const [addr, bits] = ipaddr.parseCIDR(cidr);
  const bytes = addr.toByteArray();
  const masked = bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
  if (addr.kind() === 'ipv4' && bits < 31) masked[3] = masked[3]! + 1;
  return ipaddr.fromByteArray(masked).toString();
}

export interface TestKey {
  keyid: string;
  publicJwk: Ed25519Jwk;
  privateJwk: JsonWebKey;
  privateKey: KeyObject;
}

/** A fresh Ed25519 key pair made by node:crypto, with its JWK thumbprint as keyid. */
export function makeTestKey(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string };
  const publicJwk: Ed25519Jwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  return { keyid: jwkThumbprint(publicJwk), publicJwk, privateJwk: privateKey.export({ format: 'jwk' }), privateKey };
}

/**
 * Signs a request by hand, writing the RFC 9421 signature base literally (independent of the
 * verifier's own base builder): covers `@method`, `@path` and `@authority`.
 */
export function signByHand(
  key: TestKey,
  request: { method: string; path: string; authority: string },
  params: { created: number; expires: number; keyid?: string; tag?: string; label?: string },
): { 'signature-input': string; signature: string } {
  const label = params.label ?? 'sig1';
  const inner =
    `("@method" "@path" "@authority");created=${params.created};expires=${params.expires}` +
    `;keyid="${params.keyid ?? key.keyid}";tag="${params.tag ?? 'web-bot-auth'}"`;
  const base = `"@method": ${request.method}\n"@path": ${request.path}\n"@authority": ${request.authority}\n"@signature-params": ${inner}`;
  const signature = sign(null, Buffer.from(base), key.privateKey).toString('base64');
  return { 'signature-input': `${label}=${inner}`, signature: `${label}=:${signature}:` };
}
