import { normaliseJa4 } from './fingerprint.ts';

/**
 * JA4 TLS client fingerprints (FoxIO, "JA4: TLS Client Fingerprinting"): parsing, a UA/JA4
 * consistency heuristic and JA4 drift. Pure functions. See docs/honeypot/enrichment.md for the heuristics
 * and their limits.
 *
 * A JA4 is `a_b_c`:
 * - a (10 characters): protocol (`t` TLS over TCP, `q` QUIC, `d` DTLS), the highest TLS version
 *   offered (`13` `12` `11` `10`, `s3` SSL 3.0, `s2` SSL 2.0, `d1` `d2` `d3` DTLS 1.0/1.2/1.3,
 *   `00` unknown), SNI (`d` a domain name was sent, `i` none), the number of cipher suites and of
 *   extensions (two decimal digits each, GREASE not counted, capped at 99), and the first and last
 *   character of the first ALPN value (`h2`, `h1` for http/1.1, `h3`; `00` when there is none;
 *   alphanumeric, or hex digits when the ALPN bytes are not);
 * - b (12 lower-case hex): truncated SHA-256 of the sorted cipher list, `000000000000` if none;
 * - c (12 lower-case hex): truncated SHA-256 of the sorted extensions and the signature
 *   algorithms, `000000000000` if none.
 */

export type Ja4Protocol = 'tcp' | 'quic' | 'dtls';
export type Ja4Version = '1.3' | '1.2' | '1.1' | '1.0' | 'ssl3' | 'ssl2' | 'dtls1.0' | 'dtls1.2' | 'dtls1.3' | 'unknown';

export interface Ja4 {
  raw: string;
  protocol: Ja4Protocol;
  version: Ja4Version;
  /** True when the client sent SNI (`d`), false when not (`i`). */
  sni: boolean;
  cipherCount: number;
  extensionCount: number;
  /** The two ALPN characters, or null for `00` (no ALPN offered). */
  alpn: string | null;
  cipherHash: string;
  extensionHash: string;
}

export type Ja4ParseResult = { ok: true; ja4: Ja4 } | { ok: false; error: string };

const PROTOCOLS: Record<string, Ja4Protocol> = { t: 'tcp', q: 'quic', d: 'dtls' };
const VERSIONS: Record<string, Ja4Version> = {
  '13': '1.3',
  '12': '1.2',
  '11': '1.1',
  '10': '1.0',
  s3: 'ssl3',
  s2: 'ssl2',
  d1: 'dtls1.0',
  d2: 'dtls1.2',
  d3: 'dtls1.3',
  '00': 'unknown',
};
const SHAPE = /^([a-z])([0-9a-z]{2})([a-z])(\d{2})(\d{2})([0-9A-Za-z]{2})_([0-9a-f]{12})_([0-9a-f]{12})$/;

/**
 * Parses a hashed JA4 (`t13d1516h2_8daaf6152771_02713d6af862`); surrounding white space is
 * ignored. Refuses the raw forms (JA4_r, JA4_o), unknown protocol or version codes, a DTLS version
 * on TLS/QUIC or a TLS version on DTLS, and upper-case hashes. Never throws.
 */
export function parseJa4(input: string): Ja4ParseResult {
  if (typeof input !== 'string') return { ok: false, error: 'not a string' };
  const raw = input.trim();
  if (raw.length !== 36) return { ok: false, error: `expected 36 characters (a_b_c), got ${raw.length}` };
  const m = SHAPE.exec(raw);
  if (!m) return { ok: false, error: 'not of the form [tqd]VV[di]CCEEAA_<12 hex>_<12 hex>' };
  const [, p, v, s, ciphers, extensions, alpn, b, c] = m as unknown as [string, string, string, string, string, string, string, string, string];
  const protocol = PROTOCOLS[p];
  if (!protocol) return { ok: false, error: `unknown protocol "${p}" (t, q or d)` };
  const version = VERSIONS[v];
  if (!version) return { ok: false, error: `unknown TLS version code "${v}"` };
  const dtlsVersion = version.startsWith('dtls');
  if (protocol === 'dtls' ? !dtlsVersion && version !== 'unknown' : dtlsVersion) {
    return { ok: false, error: `version "${v}" does not go with protocol "${p}"` };
  }
  if (s !== 'd' && s !== 'i') return { ok: false, error: `unknown SNI flag "${s}" (d or i)` };
  return {
    ok: true,
    ja4: {
      raw,
      protocol,
      version,
      sni: s === 'd',
      cipherCount: Number(ciphers),
      extensionCount: Number(extensions),
      alpn: alpn === '00' ? null : alpn,
      cipherHash: b,
      extensionHash: c,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// UA / JA4 consistency

export type BrowserFamily = 'chrome' | 'edge' | 'firefox' | 'safari';

export interface Consistency {
  flag: 'consistent' | 'inconsistent' | 'unknown';
  reason: string;
  /** The mainstream browser the UA claims, if any. */
  claims: BrowserFamily | null;
}

/**
 * The shape of a mainstream browser's ClientHello over TCP since TLS 1.3 became the default
 * (Chrome 70, Firefox 63, Safari 12.1, all 2018–2019). Published JA4s of browsers: Chromium
 * (Chrome, Edge, Opera, Brave) `t13d1516h2`/`t13d1517h2`, Firefox `t13d1715h2` to `t13d1917h2`
 * (some configurations `t13d1712h2`), Safari `t13d2013h2`/`t13d2014h2`, older iOS `t13d2613h2`.
 * Common non-browser stacks fall outside: Python's ssl (requests, urllib3, httpx) `t13d181000`,
 * Go's crypto/tls `t13d190900`, Android OkHttp `t12d120700`, curl and Node.js with OpenSSL's
 * default cipher list 31 or more ciphers, GnuTLS 46.
 */
export const BROWSER_TCP_ENVELOPE = {
  minCiphers: 10,
  maxCiphers: 30,
  minExtensions: 12,
} as const;

const DECLARED_BOT = /(?:bot|crawler|spider|scraper|fetcher)(?![a-z0-9_])|\+https?:\/\//i;

/**
 * Which mainstream browser a UA claims, or null. Edge ("Edg/", "EdgA/", "EdgiOS/") before
 * Chromium ("Chrome/", "HeadlessChrome/", "Chromium/", "CriOS/"), then Firefox ("Firefox/",
 * "FxiOS/"), then Safari ("Safari/" with "Version/" and none of the above). A UA that also
 * declares itself a bot or crawler (a token ending in bot/crawler/spider/scraper/fetcher, or a
 * "+http…" contact URL) claims no browser: its browser tokens are compatibility boilerplate.
 */
export function claimedBrowser(ua: string): BrowserFamily | null {
  if (typeof ua !== 'string' || ua.length === 0) return null;
  if (DECLARED_BOT.test(ua)) return null;
  if (/\bEdg(?:e|A|iOS)?\/\d/i.test(ua)) return 'edge';
  if (/(?:chrome|chromium|crios)\/\d/i.test(ua)) return 'chrome';
  if (/\b(?:firefox|fxios)\/\d/i.test(ua)) return 'firefox';
  if (/\bsafari\/\d/i.test(ua) && /\bversion\/\d/i.test(ua)) return 'safari';
  return null;
}

/**
 * Whether the TLS fingerprint fits the browser the UA claims. Only browser claims are judged:
 * - no JA4, an unparseable JA4, or a UA claiming no mainstream browser (curl, python-requests,
 *   a declared crawler, empty) → `unknown`;
 * - a claimed browser whose JA4 breaks any of these → `inconsistent`: DTLS; a highest offered
 *   version below TLS 1.3; over TCP, a first ALPN other than "h2" (none, or http/1.1 only) or a
 *   cipher count outside 10–30 or fewer than 12 extensions; over QUIC, a first ALPN other than
 *   "h3" (QUIC hellos are small by design, so counts are not judged there);
 * - otherwise `consistent`. SNI is reported but not judged: a browser sends none to an IP literal.
 * `reason` names the claim and every failed check.
 */
export function uaJa4Consistency(ua: string, ja4: string | null | undefined): Consistency {
  const claims = claimedBrowser(ua);
  if (claims === null) {
    const why = typeof ua === 'string' && DECLARED_BOT.test(ua) ? 'ua declares a bot or crawler' : 'ua claims no mainstream browser';
    return { flag: 'unknown', reason: `${why}; nothing to check the TLS fingerprint against`, claims };
  }
  if (normaliseJa4(ja4) === null) {
    return { flag: 'unknown', reason: `ua claims ${claims}; no ja4 was given`, claims };
  }
  const parsed = parseJa4(ja4 as string);
  if (!parsed.ok) return { flag: 'unknown', reason: `ua claims ${claims}; ja4 unparseable: ${parsed.error}`, claims };
  const j = parsed.ja4;
  const failures: string[] = [];
  if (j.protocol === 'dtls') failures.push('DTLS, which browsers do not use for pages');
  if (j.version !== '1.3') failures.push(`highest TLS version offered is ${j.version}, browsers offer 1.3`);
  if (j.protocol === 'tcp') {
    if (j.alpn !== 'h2') failures.push(j.alpn === null ? 'no ALPN, browsers offer h2' : `first ALPN "${j.alpn}", browsers offer h2 first`);
    const { minCiphers, maxCiphers, minExtensions } = BROWSER_TCP_ENVELOPE;
    if (j.cipherCount < minCiphers) failures.push(`${j.cipherCount} ciphers, browsers offer at least ${minCiphers}`);
    if (j.cipherCount > maxCiphers) failures.push(`${j.cipherCount} ciphers, browsers offer at most ${maxCiphers}`);
    if (j.extensionCount < minExtensions) failures.push(`${j.extensionCount} extensions, browsers send at least ${minExtensions}`);
  } else if (j.protocol === 'quic' && j.alpn !== 'h3') {
    failures.push(j.alpn === null ? 'QUIC without ALPN, browsers offer h3' : `QUIC with first ALPN "${j.alpn}", browsers offer h3`);
  }
  const summary = `${j.raw.slice(0, 10)}${j.sni ? '' : ' (no SNI)'}`;
  if (failures.length > 0) {
    return { flag: 'inconsistent', reason: `ua claims ${claims} but ja4 ${summary} looks like a non-browser TLS stack: ${failures.join('; ')}`, claims };
  }
  return { flag: 'consistent', reason: `ua claims ${claims} and ja4 ${summary} is browser-like`, claims };
}

// ---------------------------------------------------------------------------------------------
// Drift

export interface Ja4DriftRow {
  uaNormalized: string;
  ja4: string | null;
  /** How many events the row stands for (an aggregated fingerprint row); default 1. */
  count?: number;
}

export interface Ja4Drift {
  uaNormalized: string;
  /** The distinct JA4 values seen with this UA, sorted. */
  ja4s: string[];
  /** Events with this UA that carried a JA4 (sum of `count`). */
  count: number;
}

/**
 * The normalised UAs that present more than one distinct JA4: one claimed identity behind several
 * TLS stacks (a UA copied by different tools, a tool rotating TLS profiles, or a browser across a
 * TLS change). Rows without a JA4 and the empty UA (which groups every UA-less client) are left
 * out. Sorted by number of JA4s, then count (both descending), then UA.
 */
export function ja4Drift(rows: readonly Ja4DriftRow[]): Ja4Drift[] {
  const byUa = new Map<string, { ja4s: Set<string>; count: number }>();
  for (const row of rows) {
    const ja4 = normaliseJa4(row.ja4);
    if (ja4 === null || typeof row.uaNormalized !== 'string' || row.uaNormalized === '') continue;
    const weight = row.count === undefined ? 1 : Number.isFinite(row.count) && row.count > 0 ? row.count : 0;
    let entry = byUa.get(row.uaNormalized);
    if (!entry) {
      entry = { ja4s: new Set(), count: 0 };
      byUa.set(row.uaNormalized, entry);
    }
    entry.ja4s.add(ja4);
    entry.count += weight;
  }
  const drift: Ja4Drift[] = [];
  for (const [uaNormalized, { ja4s, count }] of byUa) {
    if (ja4s.size > 1) drift.push({ uaNormalized, ja4s: [...ja4s].sort(), count });
  }
  return drift.sort(
    (x, y) => y.ja4s.length - x.ja4s.length || y.count - x.count || (x.uaNormalized < y.uaNormalized ? -1 : x.uaNormalized > y.uaNormalized ? 1 : 0),
  );
}
