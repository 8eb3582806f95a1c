import { hmacSha256Hex, keyedHmacSha256Hex, sha256Hex } from '../../../platform/crypto.ts';
import { memoizeByText } from '../../../platform/memo.ts';
import { normaliseIp } from './ip.ts';

/**
 * Client fingerprints (docs/honeypot/enrichment.md, "Fingerprint"). Pure functions: no I/O, no clock.
 */

/** What stands in for a version number in a normalised User-Agent. */
export const VERSION_PLACEHOLDER = '{v}';
/** Normalised User-Agents are cut to this many code points. */
export const MAX_NORMALISED_UA = 512;
/** Normalised JA4 values are cut to this many code points (a real JA4 has 36). */
export const MAX_NORMALISED_JA4 = 128;

// C0 controls and DEL: PostgreSQL text cannot hold NUL, and none of them carries meaning in a UA.
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;
// A surrogate half without its partner; it has no UTF-8 form, so it is replaced before hashing.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// "product/1.2.3", "product/120", "product/17.2.1a": a version right after a slash.
const SLASH_VERSION = /\/\d[0-9a-z._+-]*/g;
// Any other dotted or underscored number run that does not continue a word: "nt 10.0",
// "os x 10_15_7", "rv:121.0", "msie 9.0"; not the "86_64" of "x86_64".
const DOTTED_NUMBER = /(?<![0-9a-z])\d+(?:[._]\d+)+/g;
const WHITESPACE = /\s+/g;

function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\ufffd');
}

function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length <= max ? text : points.slice(0, max).join('');
}

/**
 * A User-Agent reduced to what identifies the client implementation rather than its release.
 * In this order:
 * 1. C0 control characters and DEL become spaces; a lone UTF-16 surrogate becomes U+FFFD;
 * 2. lower case (`String.prototype.toLowerCase`, locale-independent);
 * 3. a version right after a slash, i.e. `/` followed by a digit and then any run of
 *    `[0-9a-z._+-]`, becomes `/{v}` ("chrome/120.0.6099.109" → "chrome/{v}", "curl/8.4.0" →
 *    "curl/{v}", "mozilla/5.0" → "mozilla/{v}");
 * 4. every remaining run of digits joined by `.` or `_` that does not continue a word (no letter
 *    or digit right before it) becomes `{v}` ("windows nt 10.0" → "windows nt {v}",
 *    "mac os x 10_15_7" → "mac os x {v}", "rv:121.0" → "rv:{v}"); "x86_64" stays, and so does a
 *    bare integer not after a slash ("android 14", "x11", "win64");
 * 5. runs of white space become one space;
 * 6. the result is cut to 512 code points, then leading and trailing space is dropped.
 * Never throws; a non-string gives "".
 */
export function normaliseUserAgent(ua: string): string {
  if (typeof ua !== 'string') return '';
  const text = wellFormed(ua)
    .replace(CONTROL_CHARS, ' ')
    .toLowerCase()
    .replace(SLASH_VERSION, `/${VERSION_PLACEHOLDER}`)
    .replace(DOTTED_NUMBER, VERSION_PLACEHOLDER)
    .replace(WHITESPACE, ' ');
  return cut(text, MAX_NORMALISED_UA).trim();
}

/**
 * The JA4 as it enters the fingerprint: trimmed; "" and "-" (the usual "none" of access logs)
 * become null; control characters are dropped, a lone surrogate becomes U+FFFD, and "|" becomes
 * "/" so that no JA4 can contain the separator of the hashed text; cut to 128 code points.
 * A well-formed JA4 passes unchanged. Case is kept: JA4 is defined in lower case.
 */
export function normaliseJa4(ja4: string | null | undefined): string | null {
  if (typeof ja4 !== 'string') return null;
  const text = cut(wellFormed(ja4).replace(CONTROL_CHARS, '').replaceAll('|', '/').trim(), MAX_NORMALISED_JA4);
  return text === '' || text === '-' ? null : text;
}

export interface Fingerprint {
  /** First 16 hex digits (64 bits) of SHA-256 over `fingerprintInput`. */
  fingerprintId: string;
  uaNormalized: string;
  /** The normalised JA4, or null when the sender gave none. */
  ja4: string | null;
}

/**
 * What tells one source of a client apart from another beside its JA4 and User-Agent
 * (docs/honeypot/enrichment.md, "Fingerprint"): the facts ingest knows of the event when it keys it.
 */
export interface SourceFacts {
  /** The vendor whose published proof verified the event (KNOWN_LLM_AGENT, VERIFIED_CRAWLER); null when not verified. */
  verifiedVendorId: string | null;
  /** The event's AS number (the sender's, else GeoIP's); null when unknown. */
  asn: number | null;
  /** The event's keyed IP hash (`hashIp` under the service's IP-hash key), as stored. */
  ipHash: string;
}

/**
 * The source part of a fingerprint, or null when it has none:
 * 1. a verified event: `vendor:<vendorId>` (its source is the vendor's own published network), so
 *    no unverified event ever shares a verified agent's fingerprint, JA4 or not;
 * 2. an unverified event with a JA4: null (the TLS stack tells clients apart; keyed as before);
 * 3. an unverified event without a JA4: `asn:<number>`, or `ip:<keyed IP hash>` when the AS is
 *    unknown, so clients that send one User-Agent from different networks do not collide.
 * `ja4` is the normalised JA4 (`normaliseJa4`).
 */
export function fingerprintSource(ja4: string | null, facts: SourceFacts): string | null {
  if (facts.verifiedVendorId !== null) return `vendor:${facts.verifiedVendorId}`;
  if (ja4 !== null) return null;
  return facts.asn !== null ? `asn:${facts.asn}` : `ip:${facts.ipHash}`;
}

/**
 * The exact text that is hashed: the normalised JA4 (or "-" when there is none), "|", the
 * normalised User-Agent, and, when the event has a source part (`fingerprintSource`), a line feed
 * and that part; encoded as UTF-8. Neither normalised value can hold a line feed (control
 * characters are removed), so a text with a source part never equals one without, and no
 * User-Agent can spell another client's source. The client IP enters only as a keyed hash and
 * only when nothing else tells an unverified client without JA4 apart: the fingerprint groups one
 * client implementation across the addresses it crawls from.
 */
export function fingerprintInput(ja4: string | null, uaNormalized: string, source: string | null = null): string {
  const base = `${ja4 ?? '-'}|${uaNormalized}`;
  return source === null ? base : `${base}\n${source}`;
}

/** normaliseUserAgent, remembered per UA (ingest normalises every event's). */
const normalisedUa = memoizeByText(normaliseUserAgent);

/**
 * The fingerprint of an event. Ingest gives `source` (the keying of events stored with schema
 * version 2 on); without it the text has no source part, which is how events of schema version 1
 * were keyed (their stored fingerprints keep those ids, and replay re-derives them that way).
 */
export function fingerprintOf(input: { ja4: string | null | undefined; ua: string; source?: SourceFacts }): Fingerprint {
  const ja4 = normaliseJa4(input.ja4);
  const uaNormalized = typeof input.ua === 'string' ? normalisedUa(input.ua) : '';
  const source = input.source === undefined ? null : fingerprintSource(ja4, input.source);
  return { fingerprintId: fingerprintIdOf(fingerprintInput(ja4, uaNormalized, source)), uaNormalized, ja4 };
}

/** The id of a fingerprint input, remembered per input (a honeypot sees few clients many times). */
const fingerprintIdOf = memoizeByText((text) => sha256Hex(text).slice(0, 16));

/**
 * Keyed hash of a client IP: HMAC-SHA256 (hex) under `key` of the normalised address
 * (`normaliseIp`), so "::ffff:8.8.8.8" and "8.8.8.8", or "2001:DB8::1" and "2001:db8:0::1", hash
 * alike. Text that is not an address is hashed as given. Without the key the hash cannot be
 * reversed by enumerating the address space.
 */
export function hashIp(key: string | Buffer, ip: string): string {
  return hmacSha256Hex(key, normaliseIp(ip) ?? ip);
}

/** `hashIp` under one key, for hashing an address per event: the same hashes, less work per call. */
export function ipHasher(key: string | Buffer): (ip: string) => string {
  const keyed = keyedHmacSha256Hex(key);
  return (ip) => keyed(normaliseIp(ip) ?? ip);
}
