import fc from 'fast-check';
import { jwkToKeyID, signatureHeaders } from 'web-bot-auth';
import { helpers, signerFromJWK } from 'web-bot-auth/crypto';
import { describe, expect, it } from 'vitest';
import { type ClassifyInput, classifyRequest, reclassify, UA_CLASS_VALUES, UA_CLASSES, type Verdict } from './classify.ts';
import { loadVendorRegistry, parseVendorRegistry, type Vendor, type VendorRegistry } from './registry.ts';
import { addressInside, makeTestKey, signByHand, type TestKey } from '../../../../test/helpers/vendors.ts';
import type { RdnsFact } from './reverse-dns.ts';

const shipped = loadVendorRegistry(null);
const now = new Date('2026-09-01T12:00:00Z');
const nowSec = Math.floor(now.getTime() / 1000);
const OUTSIDE = { 4: '198.51.100.77', 6: '2001:db8::77' } as const;

function classify(registry: VendorRegistry, input: Partial<ClassifyInput>): Verdict {
  return classifyRequest(registry, { ua: '', ip: '198.51.100.1', headers: {}, method: 'GET', path: '/', now, ...input });
}

const verifiedClass = (v: Vendor) => (v.isAi ? 'KNOWN_LLM_AGENT' : 'VERIFIED_CRAWLER');

describe('every vendor of the shipped registry', () => {
  const rows = shipped.vendors.flatMap((vendor) => vendor.uaExamples.map((ua) => ({ id: vendor.id, vendor, ua })));

  it.each(rows)('$id: its UA is claimed by it and no other vendor ($ua)', ({ vendor, ua }) => {
    expect(shipped.vendors.filter((v) => v.ua.test(ua)).map((v) => v.id)).toEqual([vendor.id]);
  });

  it.each(rows.filter((r) => r.vendor.ranges.length > 0))('$id: verified from inside its ranges, LIAR from outside', async ({ vendor, ua }) => {
    const first = vendor.ranges[0]!;
    const last = vendor.ranges[vendor.ranges.length - 1]!;
    for (const range of [first, last]) {
      const inside = classify(shipped, { ua, ip: addressInside(range.cidr) });
      expect(inside.uaClass).toBe(verifiedClass(vendor));
      expect(inside.vendorId).toBe(vendor.id);
      expect(inside.proof).toMatch(/^ip-range:/);
      expect(inside.evidence).toMatchObject({ vendorId: vendor.id, ipInRange: true, signature: 'absent' });
    }
    const outside = classify(shipped, { ua, ip: OUTSIDE[first.family] });
    expect(outside).toMatchObject({ uaClass: 'LIAR', vendorId: vendor.id, proof: null });
    expect(outside.evidence).toMatchObject({ ipInRange: false, matchedCidr: null });
  });

  it.each(rows.filter((r) => r.vendor.ranges.length === 0))('$id: publishes no proof, so UNVERIFIED_AGENT from anywhere', async ({ vendor, ua }) => {
    for (const ip of ['52.230.152.9', OUTSIDE[4], OUTSIDE[6], 'not-an-ip']) {
      const verdict = classify(shipped, { ua, ip });
      expect(verdict).toMatchObject({ uaClass: 'UNVERIFIED_AGENT', vendorId: vendor.id, proof: null });
      expect(verdict.evidence.ipInRange).toBeNull();
    }
  });
});

describe('IP verification', () => {
  const GPTBOT = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
  const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

  it('matches IPv6 prefixes, and an IPv6 address is never inside an IPv4 prefix', async () => {
    expect(classify(shipped, { ua: GOOGLEBOT, ip: '2001:4860:4801:10::1' })).toMatchObject({ uaClass: 'VERIFIED_CRAWLER', proof: 'ip-range:2001:4860:4801:10::/64' });
    expect(classify(shipped, { ua: GOOGLEBOT, ip: '2001:4860:4801:10:ffff:ffff:ffff:ffff' })).toMatchObject({ uaClass: 'VERIFIED_CRAWLER' });
    expect((classify(shipped, { ua: GOOGLEBOT, ip: '2001:4860:4801:ff00::1' })).uaClass).toBe('LIAR');
    expect((classify(shipped, { ua: GPTBOT, ip: '::52.230.152.9' })).uaClass).toBe('LIAR');
  });

  it('reads an IPv4-mapped IPv6 address as its IPv4 address', async () => {
    expect(classify(shipped, { ua: GPTBOT, ip: '::ffff:52.230.152.9' })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', proof: 'ip-range:52.230.152.0/24' });
  });

  it('treats an address that is not one as outside every range', async () => {
    for (const ip of ['', 'localhost', '52.230.152', '0x34.230.152.9', '52.230.152.9/24', '52.230.152.9 ']) {
      const verdict = classify(shipped, { ua: GPTBOT, ip });
      expect(verdict.uaClass, ip).toBe(ip === '52.230.152.9 ' ? 'KNOWN_LLM_AGENT' : 'LIAR');
    }
  });

  it('keeps the raw IP out of the evidence but records every vendor whose ranges hold it', async () => {
    const verdict = classify(shipped, { ua: GOOGLEBOT, ip: '66.249.66.1' });
    expect(JSON.stringify(verdict.evidence)).not.toContain('66.249.66.1');
    expect(verdict.evidence.ipVendors).toMatchObject({ 'google-googlebot': expect.any(String), 'google-cloudvertexbot': expect.any(String) });
  });

  it('calls a UA naming two vendors a liar when one claim is provably false', async () => {
    const both = `${GPTBOT} ClaudeBot/1.0`;
    expect(classify(shipped, { ua: both, ip: OUTSIDE[4] })).toMatchObject({ uaClass: 'LIAR', vendorId: 'openai-gptbot' });
    expect(classify(shipped, { ua: both, ip: '52.230.152.9' })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'openai-gptbot' });
    expect(classify(shipped, { ua: 'ClaudeBot meta-externalagent', ip: OUTSIDE[4] })).toMatchObject({ uaClass: 'UNVERIFIED_AGENT', vendorId: 'anthropic-claudebot' });
  });

  it('matches the product token case-sensitively, anywhere in the UA', async () => {
    expect((classify(shipped, { ua: 'gptbot', ip: OUTSIDE[4] })).vendorId).toBeNull();
    expect((classify(shipped, { ua: 'x GPTBot', ip: OUTSIDE[4] })).uaClass).toBe('LIAR');
    // The old AdSense UA mentions Googlebot in parentheses but comes from other Google ranges.
    expect((classify(shipped, { ua: 'Mediapartners-Google (Googlebot)', ip: OUTSIDE[4] })).vendorId).toBeNull();
  });
});

describe('Web Bot Auth', () => {
  const key = makeTestKey();
  const otherKey = makeTestKey();
  const registry = parseVendorRegistry(
    {
      vendors: [
        {
          id: 'test-agent',
          name: 'Test agent',
          uaPattern: 'TestAgent',
          cidrs: ['192.0.2.0/24'],
          webBotAuth: { keys: [{ keyid: key.keyid, jwk: key.publicJwk }], signatureAgent: 'https://agent.example' },
        },
        { id: 'keys-only', name: 'Keys only', uaPattern: 'KeysOnly', cidrs: [], webBotAuth: { keys: [{ keyid: otherKey.keyid, jwk: otherKey.publicJwk }] } },
        { id: 'plain-crawler', name: 'Plain', uaPattern: 'PlainCrawler', cidrs: ['192.0.2.0/24'], isAi: false, category: 'search-crawler' },
      ],
    },
    'wba.json',
  );
  const URL_ = 'https://honeypot.example/docs/llm?page=2';

  async function signWithLibrary(signer: TestKey, opts: { created: Date; expires: Date; agent?: string }) {
    const headers: Record<string, string> = opts.agent ? { 'signature-agent': `"${opts.agent}"` } : {};
    const signed = await signatureHeaders({ method: 'GET', url: URL_, headers }, await signerFromJWK(signer.privateJwk), { created: opts.created, expires: opts.expires });
    return { host: 'honeypot.example', ...headers, signature: signed.Signature, 'signature-input': signed['Signature-Input'] };
  }
  const window = { created: new Date(now.getTime() - 10_000), expires: new Date(now.getTime() + 60_000) };

  it('uses the RFC 7638 thumbprint as keyid, as Cloudflare\'s library does', async () => {
    expect(key.keyid).toBe(await jwkToKeyID(key.publicJwk, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE));
  });

  it('verifies a request signed by Cloudflare\'s web-bot-auth library, from outside the IP ranges', async () => {
    const headers = await signWithLibrary(key, { ...window, agent: 'https://agent.example' });
    const verdict = classify(registry, { ua: 'TestAgent/1.0', ip: OUTSIDE[4], headers, path: '/docs/llm?page=2' });
    expect(verdict).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'test-agent', proof: `web-bot-auth:${key.keyid}` });
    expect(verdict.evidence).toMatchObject({ signature: 'valid', keyid: key.keyid, ipInRange: false });
  });

  it('names the vendor by its Signature-Agent even behind a browser UA', async () => {
    const headers = await signWithLibrary(key, { ...window, agent: 'https://agent.example' });
    const chrome = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
    expect(classify(registry, { ua: chrome, ip: OUTSIDE[4], headers })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'test-agent' });
    // A forged Signature-Agent without a valid signature is a liar.
    const forged = { ...headers, signature: headers.signature.replace(/:[A-Za-z0-9+/]{4}/, ':AAAA') };
    expect(classify(registry, { ua: chrome, ip: OUTSIDE[4], headers: forged })).toMatchObject({ uaClass: 'LIAR', vendorId: 'test-agent' });
  });

  it('verifies a request signed by hand over @method, @path and @authority', async () => {
    const headers = { host: 'honeypot.example', ...signByHand(key, { method: 'POST', path: '/submit', authority: 'honeypot.example' }, { created: nowSec - 5, expires: nowSec + 5 }) };
    expect(classify(registry, { ua: 'TestAgent', ip: OUTSIDE[4], headers, method: 'POST', path: '/submit?x=1' })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', proof: `web-bot-auth:${key.keyid}` });
    // The same signature on a GET is not valid: @method is covered.
    expect((classify(registry, { ua: 'TestAgent', ip: OUTSIDE[4], headers, method: 'GET', path: '/submit' })).evidence).toMatchObject({ signature: 'invalid', signatureError: 'signature does not verify' });
  });

  it('tries each labelled signature: an unknown key first does not hide a valid one', async () => {
    const request = { method: 'GET', path: '/x', authority: 'honeypot.example' };
    const stranger = signByHand(makeTestKey(), request, { created: nowSec, expires: nowSec + 30, label: 'a' });
    const own = signByHand(key, request, { created: nowSec, expires: nowSec + 30, label: 'b' });
    const headers = {
      host: 'honeypot.example',
      'signature-input': `${stranger['signature-input']}, ${own['signature-input']}`,
      signature: `${stranger.signature}, ${own.signature}`,
    };
    expect(classify(registry, { ua: 'TestAgent', ip: OUTSIDE[4], headers, path: '/x' })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', proof: `web-bot-auth:${key.keyid}` });
    const swapped = { ...headers, signature: `a=${own.signature.slice(2)}, b=${stranger.signature.slice(2)}` };
    expect((classify(registry, { ua: 'TestAgent', ip: OUTSIDE[4], headers: swapped, path: '/x' })).evidence).toMatchObject({ signature: 'invalid', signatureError: 'unknown key' });
  });

  const failures: [string, () => Promise<Record<string, string>>, Partial<ClassifyInput>, string][] = [
    ['a tampered signature', async () => {
      const h = await signWithLibrary(key, window);
      const bytes = Buffer.from(h.signature.split(':')[1]!, 'base64');
      bytes[0] = bytes[0]! ^ 1;
      return { ...h, signature: `sig1=:${bytes.toString('base64')}:` };
    }, {}, 'signature does not verify'],
    ['another host (@authority)', async () => ({ ...(await signWithLibrary(key, window)), host: 'other.example' }), {}, 'signature does not verify'],
    ['an expired signature', () => signWithLibrary(key, { created: new Date(now.getTime() - 600_000), expires: new Date(now.getTime() - 1000) }), {}, 'signature has expired'],
    ['a signature created in the future', () => signWithLibrary(key, { created: new Date(now.getTime() + 600_000), expires: new Date(now.getTime() + 900_000) }), {}, 'created is in the future'],
    ['an unknown key', () => signWithLibrary(makeTestKey(), window), {}, 'unknown key'],
    ['the key of another vendor', () => signWithLibrary(otherKey, window), {}, ''],
    ['a signature without the web-bot-auth tag', async () => ({ host: 'honeypot.example', ...signByHand(key, { method: 'GET', path: '/', authority: 'honeypot.example' }, { created: nowSec, expires: nowSec + 5, tag: 'other' }) }), {}, 'no signature is tagged web-bot-auth'],
    ['a Signature-Input without its Signature', async () => { const { signature: _s, ...rest } = await signWithLibrary(key, window); return rest; }, {}, 'Signature is missing'],
    ['a Signature that is not a dictionary', async () => ({ ...(await signWithLibrary(key, window)), signature: 'garbage(' }), {}, 'not a structured-field dictionary'],
    ['an uncovered Signature-Agent', async () => ({ ...(await signWithLibrary(key, window)), 'signature-agent': '"https://agent.example"' }), {}, '"signature-agent" is present but not covered'],
  ];
  it.each(failures)('calls %s from outside the ranges a LIAR', async (_what, headersOf, input, error) => {
    const verdict = classify(registry, { ua: 'TestAgent/1.0', ip: OUTSIDE[4], headers: await headersOf(), ...input });
    expect(verdict).toMatchObject({ uaClass: 'LIAR', vendorId: 'test-agent', proof: null });
    expect(verdict.evidence.signature).toBe(error === '' ? 'valid' : 'invalid');
    if (error !== '') expect(verdict.evidence.signatureError).toContain(error);
  });

  it("refuses to judge a signature's time window without a valid clock", async () => {
    const headers = await signWithLibrary(key, window);
    const verdict = classify(registry, { ua: 'TestAgent', ip: OUTSIDE[4], headers, now: new Date(Number.NaN) });
    expect(verdict).toMatchObject({ uaClass: 'LIAR', evidence: { signature: 'invalid', signatureError: expect.stringMatching(/no valid clock/) } });
  });

  it('still verifies by IP when the signature fails', async () => {
    const expired = await signWithLibrary(key, { created: new Date(now.getTime() - 600_000), expires: new Date(now.getTime() - 1000) });
    expect(classify(registry, { ua: 'TestAgent', ip: '192.0.2.10', headers: expired })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', proof: 'ip-range:192.0.2.0/24' });
  });

  it('calls a vendor that publishes only keys a LIAR without a signature, verified with one', async () => {
    expect(classify(registry, { ua: 'KeysOnly', ip: OUTSIDE[4] })).toMatchObject({ uaClass: 'LIAR', vendorId: 'keys-only' });
    const headers = await signWithLibrary(otherKey, window);
    expect(classify(registry, { ua: 'KeysOnly', ip: OUTSIDE[4], headers })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', proof: `web-bot-auth:${otherKey.keyid}` });
  });

  it('verifies a non-AI vendor as VERIFIED_CRAWLER', async () => {
    expect(classify(registry, { ua: 'PlainCrawler', ip: '192.0.2.1' })).toMatchObject({ uaClass: 'VERIFIED_CRAWLER', vendorId: 'plain-crawler' });
    expect((classify(registry, { ua: 'PlainCrawler', ip: OUTSIDE[4] })).uaClass).toBe('LIAR');
  });
});

describe('user agents that name no vendor', () => {
  const cases: [string, string][] = [
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36', 'BROWSER'],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:127.0) Gecko/20100101 Firefox/127.0', 'BROWSER'],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1', 'BROWSER'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87', 'BROWSER'],
    ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.122 Mobile Safari/537.36', 'BROWSER'],
    ['curl/8.5.0', 'UNKNOWN_BOT'],
    ['python-requests/2.32.3', 'UNKNOWN_BOT'],
    ['Go-http-client/1.1', 'UNKNOWN_BOT'],
    ['Wget/1.21.4', 'UNKNOWN_BOT'],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36', 'UNKNOWN_BOT'],
    ['Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)', 'UNKNOWN_BOT'],
    ['undici', 'UNKNOWN_BOT'],
    ['my-little-crawler', 'UNKNOWN_BOT'],
    ['', 'UNKNOWN'],
    ['   ', 'UNKNOWN'],
    ['hello', 'UNKNOWN'],
    ['Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)', 'UNKNOWN'],
  ];
  it.each(cases)('%j is %s', async (ua, uaClass) => {
    const verdict = classify(shipped, { ua, ip: OUTSIDE[4] });
    expect(verdict).toMatchObject({ uaClass, vendorId: null, proof: null });
    expect(verdict.evidence.rule).toMatch(uaClass === 'UNKNOWN_BOT' ? /^(crawler-user-agents|token):/ : /^(browser|empty|unrecognised)$/);
  });
});

describe('UA_CLASSES', () => {
  it('lists each class once with a one-line meaning', () => {
    expect(new Set(UA_CLASS_VALUES).size).toBe(UA_CLASSES.length);
    expect(UA_CLASS_VALUES).toEqual(expect.arrayContaining(['KNOWN_LLM_AGENT', 'LIAR', 'UNKNOWN', 'UNVERIFIED_AGENT', 'VERIFIED_CRAWLER', 'UNKNOWN_BOT', 'BROWSER']));
    for (const c of UA_CLASSES) expect(c.meaning).toMatch(/^[^\n]{10,200}$/);
  });
});

describe('reclassify', () => {
  it('re-derives the verdict from the stored evidence, without the IP', async () => {
    const ua = 'GPTBot/1.1';
    for (const ip of ['52.230.152.9', OUTSIDE[4], 'garbage']) {
      const verdict = classify(shipped, { ua, ip });
      const stored = JSON.parse(JSON.stringify(verdict.evidence));
      expect(reclassify(shipped, { ua, headers: {}, evidence: stored })).toEqual(verdict);
    }
  });

  it('uses the current registry: a vendor added since is unverified (never a liar), one removed is no longer claimed', async () => {
    const before = parseVendorRegistry({ vendors: [{ id: 'old-bot', name: 'Old', uaPattern: 'OldBot', cidrs: ['192.0.2.0/24'] }] }, 'before.json');
    const after = parseVendorRegistry({ vendors: [{ id: 'new-bot', name: 'New', uaPattern: 'NewBot', cidrs: ['203.0.113.0/24'] }] }, 'after.json');
    const newBot = classify(before, { ua: 'NewBot/1 (+https://new.example/bot)', ip: '203.0.113.9' });
    expect(newBot.uaClass).toBe('UNKNOWN_BOT');
    expect(reclassify(after, { ua: 'NewBot/1 (+https://new.example/bot)', headers: {}, evidence: newBot.evidence })).toMatchObject({ uaClass: 'UNVERIFIED_AGENT', vendorId: 'new-bot', evidence: { ipInRange: null } });
    const oldBot = classify(before, { ua: 'OldBot/1 (+https://old.example/bot)', ip: '192.0.2.9' });
    expect(oldBot.uaClass).toBe('KNOWN_LLM_AGENT');
    expect(reclassify(after, { ua: 'OldBot/1 (+https://old.example/bot)', headers: {}, evidence: oldBot.evidence })).toMatchObject({ uaClass: 'UNKNOWN_BOT', vendorId: null });
  });

  it('reads missing or malformed evidence as nothing seen', () => {
    expect(reclassify(shipped, { ua: 'GPTBot', headers: {}, evidence: {} })).toMatchObject({ uaClass: 'UNVERIFIED_AGENT', vendorId: 'openai-gptbot' });
    expect(reclassify(shipped, { ua: 'GPTBot', headers: {}, evidence: { claimed: ['openai-gptbot'], ipValid: true, ipVendors: [] } })).toMatchObject({ uaClass: 'LIAR' });
    expect(reclassify(shipped, { ua: 'GPTBot', headers: {}, evidence: { claimed: 'x', ipVendors: { 'openai-gptbot': 7 }, signature: 'valid' } })).toMatchObject({ uaClass: 'UNVERIFIED_AGENT' });
  });
});

describe('properties', () => {
  const examples = shipped.vendors.flatMap((v) => v.uaExamples);
  const prefixes = shipped.vendors.flatMap((v) => v.cidrs);
  const key = makeTestKey();
  const registryWithKey = parseVendorRegistry(
    { vendors: [...JSON.parse(JSON.stringify(shipped.vendors.slice(0, 3).map(({ id, name, uaPattern, cidrs, isAi }) => ({ id, name, uaPattern, cidrs, isAi })))), { id: 'signed', name: 'Signed', uaPattern: 'SignedBot', cidrs: [], webBotAuth: { keys: [{ keyid: key.keyid, jwk: key.publicJwk }] } }] },
    'props.json',
  );
  const signed = { host: 'h.example', ...signByHand(key, { method: 'GET', path: '/p', authority: 'h.example' }, { created: nowSec - 1, expires: nowSec + 60 }) };

  const ua = fc.oneof(fc.constantFrom(...examples, 'SignedBot', ''), fc.string(), fc.string({ unit: 'binary' }), fc.tuple(fc.constantFrom(...examples), fc.string()).map(([a, b]) => a + b));
  const ip = fc.oneof(fc.constantFrom(...prefixes).map(addressInside), fc.ipV4(), fc.ipV6(), fc.string());
  const headerName = fc.oneof(fc.constantFrom('signature', 'signature-input', 'signature-agent', 'host', 'Signature', 'x-forwarded-proto'), fc.string());
  const headers = fc.oneof(fc.dictionary(headerName, fc.string(), { maxKeys: 5 }), fc.constant(signed), fc.dictionary(headerName, fc.string(), { maxKeys: 2 }).map((h) => ({ ...signed, ...h })));
  const input = fc.record({ ua, ip, headers, method: fc.oneof(fc.constant('GET'), fc.string()), path: fc.oneof(fc.constant('/p'), fc.string()) });

  it('never throws and always answers a known class', async () => {
    await fc.assert(
      fc.asyncProperty(input, fc.date({ noInvalidDate: false }), async (req, when) => {
        for (const registry of [shipped, registryWithKey]) {
          const verdict = classifyRequest(registry, { ...req, now: when });
          expect(UA_CLASS_VALUES).toContain(verdict.uaClass);
          expect(verdict.proof === null).toBe(!['KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER'].includes(verdict.uaClass));
          expect(verdict.vendorId === null).toBe(['UNKNOWN_BOT', 'BROWSER', 'UNKNOWN'].includes(verdict.uaClass));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reclassify agrees with classifyRequest on the same inputs', async () => {
    await fc.assert(
      fc.asyncProperty(input, async (req) => {
        for (const registry of [shipped, registryWithKey]) {
          const verdict = classifyRequest(registry, { ...req, now });
          const evidence = JSON.parse(JSON.stringify(verdict.evidence));
          expect(reclassify(registry, { ua: req.ua, headers: req.headers, evidence })).toEqual(verdict);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('forward-confirmed reverse DNS as a proof', () => {
  const AMAZONBOT = shipped.byId.get('amazon-amazonbot')!.uaExamples[0]!;
  const BINGBOT = shipped.byId.get('microsoft-bingbot')!.uaExamples[0]!;
  const answered = (ptr: string[], names: string[] = ptr): RdnsFact => ({ status: 'answered', ptr, names });
  const withRdns = (fact: RdnsFact) => {
    const asked: string[] = [];
    return { asked, reverseDns: (ip: string) => (asked.push(ip), fact) };
  };

  it('verifies a vendor whose only proof is reverse DNS by a forward-confirmed name under its domain, and calls a name elsewhere a lie', async () => {
    const ok = classify(shipped, { ua: AMAZONBOT, ip: '203.0.113.7', ...withRdns(answered(['1.crawl.amazonbot.amazon'])) });
    expect(ok).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'amazon-amazonbot', proof: 'fcrdns:1.crawl.amazonbot.amazon' });
    expect(ok.evidence).toMatchObject({ proofSources: ['fcrdns'], unverifiedReason: null });
    // A name that only ends in the same letters is not under the domain.
    for (const fact of [answered(['x.evilcrawl.amazonbot.amazon.example']), answered(['1.crawl.amazonbot.amazon'], []), answered([])]) {
      expect((classify(shipped, { ua: AMAZONBOT, ip: '203.0.113.7', ...withRdns(fact) })).uaClass).toBe('LIAR');
    }
  });

  it('leaves the claim unverified while the lookup is out, or when it failed or was not made, and says which', async () => {
    const cases: [RdnsFact | undefined, string][] = [
      [{ status: 'pending' }, 'lookup-pending'],
      [{ status: 'failed', error: 'ptr:ETIMEOUT' }, 'lookup-failed'],
      [{ status: 'skipped', why: 'busy' }, 'lookup-failed'],
      [undefined, 'lookup-failed'],
    ];
    for (const [fact, reason] of cases) {
      const verdict = classify(shipped, { ua: AMAZONBOT, ip: '203.0.113.7', ...(fact ? withRdns(fact) : {}) });
      expect(verdict, reason).toMatchObject({ uaClass: 'UNVERIFIED_AGENT', proof: null, evidence: { unverifiedReason: reason } });
    }
  });

  it('asks reverse DNS only when it can change the verdict: a vendor claimed publishes a domain and no quicker proof held', async () => {
    const inRange = withRdns(answered([]));
    const bing = shipped.byId.get('microsoft-bingbot')!;
    expect((classify(shipped, { ua: BINGBOT, ip: addressInside(bing.ranges[0]!.cidr), ...inRange })).uaClass).toBe('VERIFIED_CRAWLER');
    expect(inRange.asked).toEqual([]);
    const gpt = withRdns(answered([]));
    classify(shipped, { ua: 'GPTBot/1.1', ip: '198.51.100.7', ...gpt });
    expect(gpt.asked).toEqual([]);
    // Outside the ranges the claim fails until the lookup saves it; a confirmed name does.
    const pending = classify(shipped, { ua: BINGBOT, ip: '198.51.100.7', ...withRdns({ status: 'pending' }) });
    expect(pending).toMatchObject({ uaClass: 'LIAR', evidence: { rdns: { status: 'pending' }, proofSources: ['ip-range', 'fcrdns'] } });
    const saved = classify(shipped, { ua: BINGBOT, ip: '198.51.100.7', ...withRdns(answered(['msnbot-1.search.msn.com'])) });
    expect(saved).toMatchObject({ uaClass: 'VERIFIED_CRAWLER', proof: 'fcrdns:msnbot-1.search.msn.com' });
  });

  it('says in the evidence that a vendor with no proof source at all can be neither verified nor refuted', async () => {
    const claude = classify(shipped, { ua: 'ClaudeBot/1.0', ip: '198.51.100.7', ...withRdns(answered([])) });
    expect(claude).toMatchObject({ uaClass: 'UNVERIFIED_AGENT', evidence: { proofSources: [], unverifiedReason: 'no-proof-source', rdns: null } });
  });

  it('re-derives every such verdict from its stored evidence (reclassify)', async () => {
    const facts: RdnsFact[] = [answered(['1.crawl.amazonbot.amazon']), answered(['elsewhere.example']), { status: 'pending' }, { status: 'failed', error: 'ptr:ESERVFAIL' }];
    for (const ua of [AMAZONBOT, BINGBOT]) {
      for (const fact of facts) {
        const verdict = classify(shipped, { ua, ip: '198.51.100.7', ...withRdns(fact) });
        const stored = JSON.parse(JSON.stringify(verdict.evidence)) as Record<string, unknown>;
        expect(reclassify(shipped, { ua, headers: {}, evidence: stored }), `${ua} ${JSON.stringify(fact)}`).toEqual(verdict);
      }
    }
  });
});
