import { createHash, createPublicKey, type KeyObject, verify as verifySignature } from 'node:crypto';
import { type InnerList, type Item, isInnerList, parseDictionary, serializeInnerList } from 'structured-headers';

/**
 * Web Bot Auth: RFC 9421 HTTP Message Signatures over a request, with the `tag="web-bot-auth"`
 * profile (draft-meunier-web-bot-auth-architecture). Only Ed25519 keys, only the components a
 * request to a honeypot can be re-derived from (see `componentValue`), and the clock is the
 * caller's `now`, never the wall clock, so verification is deterministic. Cloudflare's
 * `web-bot-auth` package signs the test requests; it is not used here because it checks
 * `created`/`expires` against `Date.now()` and supports only one signature per request.
 */

export type SignatureStatus = 'valid' | 'invalid' | 'absent';

export interface SignatureCheck {
  status: SignatureStatus;
  /** The key the (first) Web Bot Auth signature names, whatever the outcome. */
  keyid: string | null;
  /** Why an `invalid` signature failed; null otherwise. */
  error: string | null;
}

export interface SignedRequest {
  method: string;
  /** Path, optionally with `?query`. */
  path: string;
  /** Header name (any case) to value. */
  headers: Record<string, string>;
  now: Date;
}

export const WEB_BOT_AUTH_TAG = 'web-bot-auth';
/** A signature `created` up to this far in the future still counts (clocks drift). */
export const CREATED_SKEW_SECONDS = 60;
/** At most this many labelled signatures of one request are tried. */
const MAX_SIGNATURES = 4;
/** A keyid is stored in the evidence; a longer one is refused rather than stored. */
const MAX_KEYID_LENGTH = 256;

export interface Ed25519Jwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url): the keyid Web Bot Auth signers use. */
export function jwkThumbprint(jwk: Ed25519Jwk): string {
  return createHash('sha256').update(`{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`).digest('base64url');
}

/** An Ed25519 public key from its JWK; throws an Error saying what is wrong. */
export function publicKeyFromJwk(jwk: unknown): KeyObject {
  const value = jwk as Partial<Record<string, unknown>> | null;
  if (typeof value !== 'object' || value === null) throw new Error('jwk must be an object');
  if (value.kty !== 'OKP' || value.crv !== 'Ed25519') throw new Error('only Ed25519 keys (kty "OKP", crv "Ed25519") are supported');
  if (typeof value.x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(value.x)) throw new Error('jwk.x must be 32 bytes of base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: value.x }, format: 'jwk' });
}

export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const direct = headers[name];
  if (typeof direct === 'string') return direct;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
}

function splitPath(path: string): { pathname: string; search: string } {
  const at = path.indexOf('?');
  const pathname = at < 0 ? path : path.slice(0, at);
  const search = at < 0 ? '' : path.slice(at);
  return { pathname: pathname === '' ? '/' : pathname, search };
}

function authorityOf(headers: Record<string, string>): string | null {
  const host = headerValue(headers, 'host')?.trim().toLowerCase();
  if (!host) return null;
  return host.replace(/:(80|443)$/, '');
}

/**
 * The value of one covered component (RFC 9421 section 2), or null when this request cannot
 * give it. The scheme is `https` unless an `x-forwarded-proto: http` header says otherwise.
 */
export function componentValue(name: string, request: SignedRequest): string | null {
  const { pathname, search } = splitPath(request.path);
  const scheme = headerValue(request.headers, 'x-forwarded-proto')?.trim().toLowerCase() === 'http' ? 'http' : 'https';
  switch (name) {
    case '@method':
      return request.method.toUpperCase();
    case '@authority':
      return authorityOf(request.headers);
    case '@scheme':
      return scheme;
    case '@path':
      return pathname;
    case '@query':
      return search === '' ? '?' : search;
    case '@request-target':
      return pathname + search;
    case '@target-uri': {
      const authority = authorityOf(request.headers);
      return authority === null ? null : `${scheme}://${authority}${pathname}${search}`;
    }
    default: {
      if (name.startsWith('@')) return null;
      const value = headerValue(request.headers, name.toLowerCase());
      return value === undefined ? null : value.trim().replace(/\s*\r?\n\s*/g, ' ');
    }
  }
}

class SignatureFailure extends Error {}

function fail(message: string): never {
  throw new SignatureFailure(message);
}

function integerParam(inner: InnerList, name: string): number {
  const value = inner[1].get(name);
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(`${name} is missing or not an integer`);
  return value;
}

/** The signature base of RFC 9421 section 2.5 for one labelled signature. */
export function signatureBase(inner: InnerList, request: SignedRequest): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const [name, params] of inner[0]) {
    if (typeof name !== 'string') fail('a covered component is not a string');
    if (params.size > 0) fail(`component parameters are not supported ("${name}")`);
    if (seen.has(name)) fail(`component "${name}" is covered twice`);
    seen.add(name);
    const value = componentValue(name, request);
    if (value === null) fail(`component "${name}" cannot be derived from the request`);
    lines.push(`"${name}": ${value}`);
  }
  if (!seen.has('@authority')) fail('"@authority" is not covered');
  if (headerValue(request.headers, 'signature-agent') !== undefined && !seen.has('signature-agent')) {
    fail('"signature-agent" is present but not covered');
  }
  lines.push(`"@signature-params": ${serializeInnerList(inner)}`);
  return lines.join('\n');
}

function verifyOne(
  inner: InnerList,
  signature: Item | InnerList | undefined,
  request: SignedRequest,
  keyFor: (keyid: string) => KeyObject | undefined,
): void {
  const keyid = inner[1].get('keyid') as string;
  const alg = inner[1].get('alg');
  if (alg !== undefined && alg !== 'ed25519') fail(`alg "${String(alg)}" is not supported`);
  const created = integerParam(inner, 'created');
  const expires = integerParam(inner, 'expires');
  const now = Math.floor(request.now.getTime() / 1000);
  if (!Number.isFinite(now)) fail('no valid clock to check created and expires against');
  if (expires < created) fail('expires is before created');
  if (created > now + CREATED_SKEW_SECONDS) fail('created is in the future');
  if (expires < now) fail('signature has expired');
  const key = keyFor(keyid);
  if (key === undefined) fail('unknown key');
  if (signature === undefined || isInnerList(signature) || !(signature[0] instanceof ArrayBuffer)) {
    fail('the Signature header has no byte sequence for this label');
  }
  const base = signatureBase(inner, request);
  if (!verifySignature(null, Buffer.from(base, 'utf8'), key, Buffer.from(signature[0]))) fail('signature does not verify');
}

/**
 * Checks the request's Web Bot Auth signatures against the keys `keyFor` knows. `valid` when
 * one signature tagged `web-bot-auth` verifies with a known key inside its validity window;
 * `absent` when the request carries neither `Signature` nor `Signature-Input`; `invalid`
 * otherwise, with the reason. Never throws.
 */
export function checkWebBotAuth(request: SignedRequest, keyFor: (keyid: string) => KeyObject | undefined): SignatureCheck {
  const inputHeader = headerValue(request.headers, 'signature-input');
  const signatureHeader = headerValue(request.headers, 'signature');
  if (inputHeader === undefined && signatureHeader === undefined) return { status: 'absent', keyid: null, error: null };
  if (inputHeader === undefined || signatureHeader === undefined) {
    return { status: 'invalid', keyid: null, error: inputHeader === undefined ? 'Signature-Input is missing' : 'Signature is missing' };
  }
  let inputs: ReturnType<typeof parseDictionary>;
  let signatures: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(inputHeader);
    signatures = parseDictionary(signatureHeader);
  } catch {
    return { status: 'invalid', keyid: null, error: 'Signature or Signature-Input is not a structured-field dictionary' };
  }
  let first: SignatureCheck | null = null;
  let tried = 0;
  for (const [label, member] of inputs) {
    if (!isInnerList(member) || member[1].get('tag') !== WEB_BOT_AUTH_TAG) continue;
    if (++tried > MAX_SIGNATURES) break;
    const keyid = member[1].get('keyid');
    if (typeof keyid !== 'string' || keyid.length > MAX_KEYID_LENGTH) {
      first ??= { status: 'invalid', keyid: null, error: typeof keyid === 'string' ? 'keyid is too long' : 'keyid is missing' };
      continue;
    }
    try {
      verifyOne(member, signatures.get(label), request, keyFor);
      return { status: 'valid', keyid, error: null };
    } catch (error) {
      const message = error instanceof SignatureFailure ? error.message : 'signature could not be checked';
      first ??= { status: 'invalid', keyid, error: message };
    }
  }
  return first ?? { status: 'invalid', keyid: null, error: 'no signature is tagged web-bot-auth' };
}
