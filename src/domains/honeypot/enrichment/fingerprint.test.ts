import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintInput, fingerprintOf, hashIp, ipHasher, MAX_NORMALISED_UA, normaliseJa4, normaliseUserAgent } from './fingerprint.ts';

const CHROME_JA4 = 't13d1516h2_8daaf6152771_02713d6af862';
const PYTHON_JA4 = 't13d181000_85036bcba153_d41ae481755e';
const CHROME_120 = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.109 Safari/537.36';
const CHROME_121 = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/121.0.6167.85 Safari/537.36';

describe('normaliseUserAgent', () => {
  it.each([
    [CHROME_120, 'mozilla/{v} (windows nt {v}; win64; x64) applewebkit/{v} (khtml, like gecko) chrome/{v} safari/{v}'],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15',
      'mozilla/{v} (macintosh; intel mac os x {v}) applewebkit/{v} (khtml, like gecko) version/{v} safari/{v}',
    ],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0', 'mozilla/{v} (x11; linux x86_64; rv:{v}) gecko/{v} firefox/{v}'],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36',
      'mozilla/{v} (linux; android 14; pixel 8) applewebkit/{v} (khtml, like gecko) chrome/{v} mobile safari/{v}',
    ],
    [
      'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)',
      'mozilla/{v} applewebkit/{v} (khtml, like gecko; compatible; gptbot/{v}; +https://openai.com/gptbot)',
    ],
    ['Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1)', 'mozilla/{v} (compatible; msie {v}; windows nt {v})'],
    ['curl/8.4.0', 'curl/{v}'],
    ['python-requests/2.31.0', 'python-requests/{v}'],
    ['Go-http-client/1.1', 'go-http-client/{v}'],
    ['Wget/1.21.4-beta+debian', 'wget/{v}'],
    ['MyBot/7 (build 1234)', 'mybot/{v} (build 1234)'],
    ['  Foo\t Bar\r\n\nBaz  ', 'foo bar baz'],
    ['a\u0000b\u007fc', 'a b c'],
    ['\ud800x', '\ufffdx'],
    ['', ''],
  ])('%j → %j', (ua, normal) => {
    expect(normaliseUserAgent(ua)).toBe(normal);
  });

  it('makes releases of one client alike and different clients different', () => {
    expect(normaliseUserAgent(CHROME_120)).toBe(normaliseUserAgent(CHROME_121));
    expect(normaliseUserAgent('GPTBot/1.0')).toBe(normaliseUserAgent('gptbot/1.2'));
    expect(normaliseUserAgent('GPTBot/1.0')).not.toBe(normaliseUserAgent('ClaudeBot/1.0'));
    expect(normaliseUserAgent('Mozilla/5.0 (Android 13)')).not.toBe(normaliseUserAgent('Mozilla/5.0 (Android 14)'));
  });

  it('cuts long values to 512 code points without splitting a surrogate pair', () => {
    expect(normaliseUserAgent('a'.repeat(5000))).toHaveLength(MAX_NORMALISED_UA);
    const emoji = normaliseUserAgent('😀'.repeat(600));
    expect(Array.from(emoji)).toHaveLength(MAX_NORMALISED_UA);
    expect(emoji.endsWith('😀')).toBe(true);
    expect(normaliseUserAgent(`${'a'.repeat(511)}   b`)).toBe('a'.repeat(511));
  });
});

describe('normaliseJa4', () => {
  it.each([
    [null, null],
    [undefined, null],
    ['', null],
    ['  ', null],
    ['-', null],
    [` ${CHROME_JA4} `, CHROME_JA4],
    ['a|b', 'a/b'],
    ['a\u0000b', 'ab'],
  ])('%j → %j', (ja4, normal) => {
    expect(normaliseJa4(ja4)).toBe(normal);
  });
});

describe('fingerprintOf', () => {
  it('is the first 16 hex digits of SHA-256 over "<ja4 or ->|<normalised UA>"', () => {
    const ua = normaliseUserAgent(CHROME_120);
    const expected = createHash('sha256').update(`${CHROME_JA4}|${ua}`, 'utf8').digest('hex').slice(0, 16);
    expect(fingerprintOf({ ja4: CHROME_JA4, ua: CHROME_120 })).toEqual({ fingerprintId: expected, uaNormalized: ua, ja4: CHROME_JA4 });
    const none = createHash('sha256').update('-|curl/{v}', 'utf8').digest('hex').slice(0, 16);
    expect(fingerprintOf({ ja4: null, ua: 'curl/8.4.0' }).fingerprintId).toBe(none);
    expect(fingerprintInput(null, 'curl/{v}')).toBe('-|curl/{v}');
  });

  it('with a source, hashes "<ja4 or ->|<normalised UA>", a line feed and the source part', () => {
    const ua = normaliseUserAgent('curl/8.4.0');
    const id = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
    const ipHash = hashIp('k', '203.0.113.1');
    expect(fingerprintOf({ ja4: null, ua: 'curl/8.4.0', source: { verifiedVendorId: null, asn: 64500, ipHash } }).fingerprintId).toBe(id(`-|${ua}\nasn:64500`));
    expect(fingerprintOf({ ja4: null, ua: 'curl/8.4.0', source: { verifiedVendorId: null, asn: null, ipHash } }).fingerprintId).toBe(id(`-|${ua}\nip:${ipHash}`));
    expect(fingerprintOf({ ja4: CHROME_JA4, ua: 'curl/8.4.0', source: { verifiedVendorId: 'v', asn: 1, ipHash } }).fingerprintId).toBe(id(`${CHROME_JA4}|${ua}\nvendor:v`));
    // An unverified event with a JA4 has no source part: keyed exactly as before.
    expect(fingerprintOf({ ja4: CHROME_JA4, ua: 'curl/8.4.0', source: { verifiedVendorId: null, asn: 1, ipHash } })).toEqual(fingerprintOf({ ja4: CHROME_JA4, ua: 'curl/8.4.0' }));
    expect(fingerprintInput(null, 'curl/{v}', 'asn:1')).toBe('-|curl/{v}\nasn:1');
    expect(fingerprintInput(null, 'curl/{v}', null)).toBe('-|curl/{v}');
  });

  it('groups one client across releases, spellings and addresses', () => {
    const a = fingerprintOf({ ja4: CHROME_JA4, ua: CHROME_120 });
    const b = fingerprintOf({ ja4: ` ${CHROME_JA4}`, ua: CHROME_121.toUpperCase().replace(/ /g, '  ') });
    expect(b.fingerprintId).toBe(a.fingerprintId);
    // The IP is not an input: the same client seen from two addresses has one fingerprint and
    // two different IP hashes.
    expect(hashIp('k', '203.0.113.1')).not.toBe(hashIp('k', '203.0.113.2'));
  });

  it('separates different TLS stacks and different identities', () => {
    const chrome = fingerprintOf({ ja4: CHROME_JA4, ua: CHROME_120 }).fingerprintId;
    expect(fingerprintOf({ ja4: PYTHON_JA4, ua: CHROME_120 }).fingerprintId).not.toBe(chrome);
    expect(fingerprintOf({ ja4: null, ua: CHROME_120 }).fingerprintId).not.toBe(chrome);
    expect(fingerprintOf({ ja4: CHROME_JA4, ua: 'curl/8.4.0' }).fingerprintId).not.toBe(chrome);
  });

  it('treats a missing, empty and "-" JA4 alike', () => {
    const ids = [null, undefined, '', '-', ' - '].map((ja4) => fingerprintOf({ ja4, ua: 'x' }).fingerprintId);
    expect(new Set(ids).size).toBe(1);
  });

  it('cannot be steered across fields by a "|" inside the JA4', () => {
    expect(fingerprintOf({ ja4: 'a|b', ua: 'c' }).fingerprintId).not.toBe(fingerprintOf({ ja4: 'a', ua: 'b|c' }).fingerprintId);
  });
});

describe('hashIp', () => {
  it('is HMAC-SHA256 hex of the normalised address', () => {
    const expected = createHmac('sha256', 'secret').update('2001:db8::1').digest('hex');
    expect(hashIp('secret', '2001:0DB8:0:0:0:0:0:1')).toBe(expected);
    expect(hashIp('secret', '::ffff:8.8.8.8')).toBe(hashIp('secret', '8.8.8.8'));
    expect(hashIp(Buffer.from('secret'), '8.8.8.8')).toBe(hashIp('secret', '8.8.8.8'));
  });

  it('depends on the key and hashes non-addresses as given', () => {
    expect(hashIp('a', '8.8.8.8')).not.toBe(hashIp('b', '8.8.8.8'));
    expect(hashIp('k', 'not an ip')).toBe(createHmac('sha256', 'k').update('not an ip').digest('hex'));
  });

  it('ipHasher(key) gives hashIp(key, ·) for every spelling, address or not', () => {
    const hasher = ipHasher('secret');
    for (const ip of ['8.8.8.8', '::ffff:8.8.8.8', '2001:0DB8:0:0:0:0:0:1', '2001:db8::1', '010.0.0.1', 'not an ip', '']) {
      expect(hasher(ip), ip).toBe(hashIp('secret', ip));
    }
    expect(hasher('::FFFF:8.8.8.8')).toBe(createHmac('sha256', 'secret').update('8.8.8.8').digest('hex'));
  });
});
