import { hmacSha256Hex, safeEqual, sha256Hex } from '../../../platform/crypto.ts';

/** A signature whose timestamp is further than this from the server clock is refused (spec D3). */
export const SIGNATURE_WINDOW_SEC = 300;

export interface ParsedSignature {
  t: number;
  v1: string[];
}

/**
 * Parses `X-Observatory-Signature: t=<unix seconds>,v1=<hex>`. Several `v1` values may be sent
 * (a sender rolling its secret signs with both); any one matching is enough.
 */
export function parseSignatureHeader(header: string | undefined): ParsedSignature | null {
  if (!header || header.length > 1024) return null;
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,12}$/.test(value) || t !== null) return null;
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return null;
      v1.push(value);
    }
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

export function signPayload(secret: string, t: number, rawBody: string): string {
  return hmacSha256Hex(secret, `${t}.${rawBody}`);
}

export function signatureHeader(secret: string, t: number, rawBody: string): string {
  return `t=${t},v1=${signPayload(secret, t, rawBody)}`;
}

export type SignatureCheck = 'ok' | 'bad-signature' | 'stale-signature';

/** Checks a parsed signature against the secrets that verify now; constant time per comparison. */
export function checkSignature(parsed: ParsedSignature | null, secrets: string[], rawBody: string, nowMs: number): SignatureCheck {
  if (parsed === null) return 'bad-signature';
  if (Math.abs(nowMs / 1000 - parsed.t) > SIGNATURE_WINDOW_SEC) return 'stale-signature';
  let matched = false;
  for (const secret of secrets) {
    const expected = signPayload(secret, parsed.t, rawBody);
    for (const candidate of parsed.v1) if (safeEqual(candidate, expected)) matched = true;
  }
  return matched ? 'ok' : 'bad-signature';
}

/**
 * The replay key of a verified request: lowercase hex SHA-256 of `<t>.<raw body>`, the exact
 * message the signature covers (docs/honeypot/README.md, "Replayed requests").
 *
 * Why the signed message and not a `v1` value: the header may carry several `v1` values and only
 * one has to verify, so a replayer can add junk values or, during a secret rotation, drop one of
 * two valid ones; `t` and the body are what it cannot change without breaking the signature. It
 * is also the same under every secret, so which secret verified does not matter.
 */
export function replayKeyOf(t: number, rawBody: string): string {
  return sha256Hex(`${t}.${rawBody}`);
}

/** Prefix of the ids given to events a signed request sent without one. */
export const DERIVED_ID_PREFIX = 'sig-';

/**
 * The id of the event at `index` (0-based, in `events`) of a signed request that gave it none:
 * `sig-` + the first 32 hex characters of SHA-256(`<replay key>:<index>`). A replay of the same
 * request derives the same ids, so it is a duplicate; two identical events of one request differ
 * by position and are both stored.
 */
export function derivedEventId(replayKey: string, index: number): string {
  return `${DERIVED_ID_PREFIX}${sha256Hex(`${replayKey}:${index}`).slice(0, 32)}`;
}
