import { describe, expect, it } from 'vitest';
import { claimedBrowser, ja4Drift, parseJa4, uaJa4Consistency } from './ja4.ts';

// Published JA4s (FoxIO's ja4plus-mapping and browser captures).
const CHROME = 't13d1516h2_8daaf6152771_02713d6af862';
const CHROME_NO_SNI = 't13i1516h2_8daaf6152771_02713d6af862';
const CHROME_QUIC = 'q13d0312h3_55b375c5d22e_06cda9e17597';
const FIREFOX = 't13d1715h2_5b57614c22b0_3d5424432f57';
const SAFARI = 't13d2014h2_a09f3c656075_14788d8d241b';
const PYTHON = 't13d181000_85036bcba153_d41ae481755e';
const GO = 't13d190900_9dc949149365_97f8aa674fd9';
const OKHTTP = 't12d120700_d34a8e72043a_036209cd1ead';
// Shapes made for the tests (the hashes are arbitrary).
const CURL_LIKE = 't13d3112h2_e8f1e7e78f70_b26ce05bbdd6';
const HTTP11_ONLY = 't13d1516h1_8daaf6152771_02713d6af862';
const FEW_CIPHERS = 't13d0516h2_aaaaaaaaaaaa_bbbbbbbbbbbb';
const DTLS = 'dd2i0910h2_aaaaaaaaaaaa_bbbbbbbbbbbb';
const QUIC_H2 = 'q13d0312h2_55b375c5d22e_06cda9e17597';

const UA_CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const UA_EDGE = `${UA_CHROME} Edg/120.0.2210.91`;
const UA_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';
const UA_SAFARI = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15';
const UA_IOS_CHROME = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/120.0.6099.119 Mobile/15E148 Safari/604.1';
const UA_HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36';
const UA_GOOGLEBOT_SMARTPHONE =
  'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.129 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const UA_GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)';

describe('parseJa4', () => {
  it('reads every field of a JA4', () => {
    expect(parseJa4(CHROME)).toEqual({
      ok: true,
      ja4: {
        raw: CHROME,
        protocol: 'tcp',
        version: '1.3',
        sni: true,
        cipherCount: 15,
        extensionCount: 16,
        alpn: 'h2',
        cipherHash: '8daaf6152771',
        extensionHash: '02713d6af862',
      },
    });
  });

  it.each([
    [CHROME_QUIC, { protocol: 'quic', version: '1.3', sni: true, cipherCount: 3, extensionCount: 12, alpn: 'h3' }],
    [PYTHON, { protocol: 'tcp', version: '1.3', sni: true, cipherCount: 18, extensionCount: 10, alpn: null }],
    [OKHTTP, { protocol: 'tcp', version: '1.2', sni: true, cipherCount: 12, extensionCount: 7, alpn: null }],
    [CHROME_NO_SNI, { sni: false }],
    [DTLS, { protocol: 'dtls', version: 'dtls1.2', sni: false }],
    ['dd1d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { version: 'dtls1.0' }],
    ['dd3d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { version: 'dtls1.3' }],
    ['d00d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { protocol: 'dtls', version: 'unknown' }],
    ['ts3d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { version: 'ssl3' }],
    ['ts2d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { version: 'ssl2' }],
    ['t10d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { version: '1.0' }],
    ['t11d0101h2_aaaaaaaaaaaa_bbbbbbbbbbbb', { version: '1.1' }],
    ['t00i000000_000000000000_000000000000', { version: 'unknown', cipherCount: 0, extensionCount: 0, alpn: null }],
    ['t13d9999ab_aaaaaaaaaaaa_bbbbbbbbbbbb', { cipherCount: 99, extensionCount: 99, alpn: 'ab' }],
    ['t13d1516H2_8daaf6152771_02713d6af862', { alpn: 'H2' }],
    [`  ${CHROME}\n`, { raw: CHROME }],
  ])('%s is valid', (input, fields) => {
    const result = parseJa4(input);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.ja4).toMatchObject(fields);
  });

  it.each([
    ['', /36 characters/],
    ['t13d1516h2', /36 characters/],
    [`${CHROME}0`, /36 characters/],
    ['t13d1516h2_8DAAF6152771_02713d6af862', /form/],
    ['t13d1516h2-8daaf6152771-02713d6af862', /form/],
    ['t13d1516h2_8daaf615277g_02713d6af862', /form/],
    ['t13d15a6h2_8daaf6152771_02713d6af862', /form/],
    ['t13d1516h-_8daaf6152771_02713d6af862', /form/],
    ['T13d1516h2_8daaf6152771_02713d6af862', /form/],
    ['t13d 516h2_8daaf6152771_02713d6af862', /form/],
    ['x13d1516h2_8daaf6152771_02713d6af862', /protocol/],
    ['t14d1516h2_8daaf6152771_02713d6af862', /version/],
    ['t1xd1516h2_8daaf6152771_02713d6af862', /version/],
    ['td2d1516h2_8daaf6152771_02713d6af862', /does not go with/],
    ['d13d1516h2_8daaf6152771_02713d6af862', /does not go with/],
    ['t13x1516h2_8daaf6152771_02713d6af862', /SNI/],
    ['t13d1516h2_002f,0035,009c,009d,1301,1302,1303_0005,000a', /36 characters/],
  ])('%j is refused (%s)', (input, error) => {
    const result = parseJa4(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(error);
  });
});

describe('claimedBrowser', () => {
  it.each([
    [UA_CHROME, 'chrome'],
    [UA_EDGE, 'edge'],
    [UA_FIREFOX, 'firefox'],
    [UA_SAFARI, 'safari'],
    [UA_IOS_CHROME, 'chrome'],
    [UA_HEADLESS, 'chrome'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/121.0 Mobile/15E148 Safari/605.1.15', 'firefox'],
    [`${UA_CHROME} OPR/105.0.0.0`, 'chrome'],
    [UA_GOOGLEBOT_SMARTPHONE, null],
    [UA_GPTBOT, null],
    ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36', null],
    ['Mozilla/5.0 (Linux) AppleWebKit/537.36 (KHTML, like Gecko) Safari/537.36', null],
    ['curl/8.4.0', null],
    ['python-requests/2.31.0', null],
    ['Mozilla/5.0', null],
    ['', null],
  ])('%s → %s', (ua, family) => {
    expect(claimedBrowser(ua)).toBe(family);
  });
});

describe('uaJa4Consistency', () => {
  it.each([
    [UA_CHROME, CHROME, 'consistent', /claims chrome/],
    [UA_CHROME, CHROME_QUIC, 'consistent', /browser-like/],
    [UA_CHROME, CHROME_NO_SNI, 'consistent', /no SNI/],
    [UA_EDGE, CHROME, 'consistent', /claims edge/],
    [UA_FIREFOX, FIREFOX, 'consistent', /claims firefox/],
    [UA_SAFARI, SAFARI, 'consistent', /claims safari/],
    [UA_IOS_CHROME, SAFARI, 'consistent', /claims chrome/],
    [UA_HEADLESS, CHROME, 'consistent', /claims chrome/],
    [UA_CHROME, PYTHON, 'inconsistent', /no ALPN.*10 extensions/],
    [UA_CHROME, GO, 'inconsistent', /no ALPN.*9 extensions/],
    [UA_FIREFOX, OKHTTP, 'inconsistent', /TLS version offered is 1\.2/],
    [UA_SAFARI, CURL_LIKE, 'inconsistent', /31 ciphers/],
    [UA_CHROME, HTTP11_ONLY, 'inconsistent', /first ALPN "h1"/],
    [UA_CHROME, FEW_CIPHERS, 'inconsistent', /5 ciphers/],
    [UA_CHROME, DTLS, 'inconsistent', /DTLS/],
    [UA_CHROME, QUIC_H2, 'inconsistent', /QUIC with first ALPN "h2"/],
    ['curl/8.4.0', PYTHON, 'unknown', /no mainstream browser/],
    ['curl/8.4.0', CHROME, 'unknown', /no mainstream browser/],
    ['python-requests/2.31.0', PYTHON, 'unknown', /no mainstream browser/],
    [UA_GPTBOT, PYTHON, 'unknown', /declares a bot/],
    [UA_GOOGLEBOT_SMARTPHONE, GO, 'unknown', /declares a bot/],
    ['', CHROME, 'unknown', /no mainstream browser/],
    [UA_CHROME, null, 'unknown', /no ja4/],
    [UA_CHROME, '-', 'unknown', /no ja4/],
    [UA_CHROME, '', 'unknown', /no ja4/],
    [UA_CHROME, 'garbage', 'unknown', /unparseable/],
  ])('%s with %s → %s', (ua, ja4, flag, reason) => {
    const result = uaJa4Consistency(ua, ja4);
    expect(result.flag).toBe(flag);
    expect(result.reason).toMatch(reason);
  });

  it('lists every failed check', () => {
    const { reason } = uaJa4Consistency(UA_CHROME, 't12i0504h1_aaaaaaaaaaaa_bbbbbbbbbbbb');
    expect(reason).toMatch(/TLS version offered is 1\.2/);
    expect(reason).toMatch(/first ALPN "h1"/);
    expect(reason).toMatch(/5 ciphers/);
    expect(reason).toMatch(/4 extensions/);
  });
});

describe('ja4Drift', () => {
  const chrome = 'mozilla/{v} (windows nt {v}) chrome/{v}';
  const bot = 'gptbot/{v}';

  it('lists UAs presenting more than one JA4, most JA4s first', () => {
    const rows = [
      { uaNormalized: chrome, ja4: CHROME },
      { uaNormalized: chrome, ja4: PYTHON },
      { uaNormalized: chrome, ja4: CHROME },
      { uaNormalized: chrome, ja4: GO },
      { uaNormalized: bot, ja4: FIREFOX },
      { uaNormalized: bot, ja4: ` ${FIREFOX} ` },
      { uaNormalized: 'curl/{v}', ja4: CURL_LIKE },
      { uaNormalized: 'curl/{v}', ja4: GO },
    ];
    expect(ja4Drift(rows)).toEqual([
      { uaNormalized: chrome, ja4s: [GO, PYTHON, CHROME].sort(), count: 4 },
      { uaNormalized: 'curl/{v}', ja4s: [CURL_LIKE, GO].sort(), count: 2 },
    ]);
  });

  it('ignores rows without a JA4 and the empty UA, and weighs aggregated rows', () => {
    const rows = [
      { uaNormalized: bot, ja4: FIREFOX, count: 10 },
      { uaNormalized: bot, ja4: null, count: 50 },
      { uaNormalized: bot, ja4: '-' },
      { uaNormalized: bot, ja4: CHROME, count: 5 },
      { uaNormalized: '', ja4: CHROME },
      { uaNormalized: '', ja4: PYTHON },
    ];
    expect(ja4Drift(rows)).toEqual([{ uaNormalized: bot, ja4s: [CHROME, FIREFOX].sort(), count: 15 }]);
  });

  it('orders ties by count, then UA', () => {
    const rows = [
      { uaNormalized: 'b', ja4: CHROME },
      { uaNormalized: 'b', ja4: GO },
      { uaNormalized: 'a', ja4: CHROME },
      { uaNormalized: 'a', ja4: GO },
      { uaNormalized: 'c', ja4: CHROME, count: 3 },
      { uaNormalized: 'c', ja4: GO },
    ];
    expect(ja4Drift(rows).map((d) => d.uaNormalized)).toEqual(['c', 'a', 'b']);
  });

  it('is empty when every UA keeps one JA4', () => {
    expect(ja4Drift([{ uaNormalized: chrome, ja4: CHROME }, { uaNormalized: chrome, ja4: CHROME }])).toEqual([]);
    expect(ja4Drift([])).toEqual([]);
  });
});
