import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { fingerprintOf, hashIp, normaliseJa4, normaliseUserAgent } from './fingerprint.ts';
import { type GeoIp, isValidIp, normaliseIp, openGeoIp } from './geoip.ts';
import { dottedQuadOctets } from './ip.ts';
import { ja4Drift, parseJa4, uaJa4Consistency } from './ja4.ts';

// "binary" strings hold any code point, lone surrogates and control characters included.
const anyString = fc.oneof(fc.string({ unit: 'binary', maxLength: 600 }), fc.string({ unit: 'grapheme', maxLength: 80 }), fc.string());
const uaLike = fc
  .array(fc.oneof(fc.constantFrom('Mozilla/5.0', 'Chrome/', 'Safari/', 'Firefox/', 'bot', ' ', '  ', '\t', '(', ')', ';', '.', '_', '/'), fc.nat(300).map(String), fc.string()), {
    maxLength: 30,
  })
  .map((parts) => parts.join(''));
const hex12 = fc.stringMatching(/^[0-9a-f]{12}$/);
const validJa4 = fc
  .record({
    protocol: fc.constantFrom('t', 'q'),
    version: fc.constantFrom('13', '12', '11', '10', 's3', 's2', '00'),
    sni: fc.constantFrom('d', 'i'),
    ciphers: fc.integer({ min: 0, max: 99 }),
    extensions: fc.integer({ min: 0, max: 99 }),
    alpn: fc.stringMatching(/^[0-9A-Za-z]{2}$/),
    b: hex12,
    c: hex12,
  })
  .map((r) => ({
    ...r,
    text: `${r.protocol}${r.version}${r.sni}${String(r.ciphers).padStart(2, '0')}${String(r.extensions).padStart(2, '0')}${r.alpn}_${r.b}_${r.c}`,
  }));

describe('never throwing on arbitrary text', () => {
  it('normalisation, fingerprints, JA4 parsing and the consistency flag', () => {
    fc.assert(
      fc.property(anyString, fc.option(anyString), (ua, ja4) => {
        normaliseUserAgent(ua);
        normaliseJa4(ja4);
        parseJa4(ja4 ?? ua);
        const flag = uaJa4Consistency(ua, ja4).flag;
        expect(['consistent', 'inconsistent', 'unknown']).toContain(flag);
        const fp = fingerprintOf({ ja4, ua });
        expect(fp.fingerprintId).toMatch(/^[0-9a-f]{16}$/);
        ja4Drift([{ uaNormalized: fp.uaNormalized, ja4 }, { uaNormalized: ua, ja4: ua }]);
      }),
      { numRuns: 2000 },
    );
  });

  it('IP validation, normalisation and hashing', () => {
    fc.assert(
      fc.property(fc.oneof(anyString, fc.ipV4(), fc.ipV4Extended(), fc.ipV6()), (ip) => {
        const valid = isValidIp(ip);
        expect(normaliseIp(ip) !== null).toBe(valid);
        expect(hashIp('k', ip)).toMatch(/^[0-9a-f]{64}$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a dotted quad as the strict rule says: four decimal parts 0–255, no leading zeros', () => {
    const strict = /^(?:0|[1-9]\d{0,2})(?:\.(?:0|[1-9]\d{0,2})){3}$/;
    const part = fc.oneof(fc.integer({ min: 0, max: 300 }).map(String), fc.constantFrom('', '00', '01', '007', '1a', '-1', ' 1', '256', '1000'));
    const quadLike = fc.array(part, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('.'));
    fc.assert(
      fc.property(fc.oneof(quadLike, fc.ipV4(), fc.ipV4Extended(), anyString), (ip) => {
        const expected = strict.test(ip) && ip.split('.').every((p) => Number(p) <= 255) ? ip.split('.').map(Number) : null;
        expect(dottedQuadOctets(ip)).toEqual(expected);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('GeoIP lookups never throw', () => {
  let geo: GeoIp;
  beforeAll(async () => {
    geo = await openGeoIp();
  });

  it('on arbitrary text and on every kind of address', () => {
    fc.assert(
      fc.property(fc.oneof(anyString, fc.ipV4(), fc.ipV4Extended(), fc.ipV6()), (ip) => {
        const hit = geo.lookup(ip);
        expect(hit.country === null || /^[A-Z]{2}$/.test(hit.country)).toBe(true);
        expect(hit.asn === null || (Number.isInteger(hit.asn) && hit.asn > 0)).toBe(true);
        if (!isValidIp(ip)) expect(hit).toEqual({ country: null, asn: null, asOrg: null });
      }),
      { numRuns: 3000 },
    );
  });

  it('answers an IPv4 address and its IPv4-mapped IPv6 form alike', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(geo.lookup(`::ffff:${ip}`)).toEqual(geo.lookup(ip));
      }),
      { numRuns: 500 },
    );
  });
});

describe('determinism and stability', () => {
  it('fingerprintOf gives the same answer for the same input', () => {
    fc.assert(
      fc.property(uaLike, fc.option(anyString), (ua, ja4) => {
        expect(fingerprintOf({ ja4, ua })).toEqual(fingerprintOf({ ja4, ua }));
      }),
    );
  });

  it('normaliseUserAgent is idempotent, and a UA and its normal form fingerprint alike', () => {
    fc.assert(
      fc.property(fc.oneof(uaLike, anyString), fc.option(validJa4.map((j) => j.text)), (ua, ja4) => {
        const once = normaliseUserAgent(ua);
        expect(normaliseUserAgent(once)).toBe(once);
        expect(fingerprintOf({ ja4, ua: once }).fingerprintId).toBe(fingerprintOf({ ja4, ua }).fingerprintId);
      }),
      { numRuns: 1000 },
    );
  });

  it('a version number change never changes the normalised UA', () => {
    const version = fc.array(fc.nat(9999), { minLength: 1, maxLength: 4 }).map((n) => n.join('.'));
    fc.assert(
      fc.property(fc.constantFrom('Chrome', 'GPTBot', 'curl', 'python-requests', 'Firefox'), version, version, (product, v1, v2) => {
        const ua = (v: string) => `Mozilla/5.0 (Windows NT 10.0) ${product}/${v} (+https://example.com)`;
        expect(normaliseUserAgent(ua(v1))).toBe(normaliseUserAgent(ua(v2)));
      }),
    );
  });

  it('normaliseIp is idempotent and keeps validity; equivalent spellings hash alike', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
        const normal = normaliseIp(ip);
        expect(normal).not.toBeNull();
        expect(normaliseIp(normal!)).toBe(normal);
        expect(hashIp('k', ip)).toBe(hashIp('k', normal!));
        expect(hashIp('k', ip.toUpperCase())).toBe(hashIp('k', ip));
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(normaliseIp(`::ffff:${ip}`)).toBe(normaliseIp(ip));
      }),
    );
  });

  it('parseJa4 reads back what a JA4 was built from', () => {
    fc.assert(
      fc.property(validJa4, (j) => {
        const parsed = parseJa4(j.text);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.ja4.raw).toBe(j.text);
        expect(parsed.ja4.protocol).toBe(j.protocol === 't' ? 'tcp' : 'quic');
        expect(parsed.ja4.sni).toBe(j.sni === 'd');
        expect(parsed.ja4.cipherCount).toBe(j.ciphers);
        expect(parsed.ja4.extensionCount).toBe(j.extensions);
        expect(parsed.ja4.alpn).toBe(j.alpn === '00' ? null : j.alpn);
        expect(parsed.ja4.cipherHash).toBe(j.b);
        expect(parsed.ja4.extensionHash).toBe(j.c);
      }),
    );
  });

  it('a JA4 with any one character replaced by one no JA4 may hold is refused', () => {
    fc.assert(
      fc.property(validJa4, fc.nat(35), fc.constantFrom('#', ' ', '|', 'é', '-', '\u0000'), (j, at, c) => {
        expect(parseJa4(j.text.slice(0, at) + c + j.text.slice(at + 1)).ok).toBe(false);
      }),
    );
  });
});
