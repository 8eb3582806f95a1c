import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { buildRegistry, SNAPSHOT } from '../../../../scripts/build-vendor-registry.ts';
import { classifyRequest, UA_CLASS_VALUES } from './classify.ts';
import {
  hasProof,
  proofSourcesOf,
  loadVendorRegistry,
  parseVendorRegistry,
  type RangeSnapshotRow,
  SHIPPED_VENDORS_FILE,
  VENDOR_CATEGORIES,
  VendorRegistryError,
  withRefreshedRanges,
} from './registry.ts';
import { makeTestKey } from '../../../../test/helpers/vendors.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const SNAPSHOT_DIR = join(here, '../../../../../shared/data/vendor-ranges');
const now = new Date('2026-09-01T12:00:00Z');
const dir = mkdtempSync(join(tmpdir(), 'vendors-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeRegistry(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('the shipped registry', () => {
  const registry = loadVendorRegistry(null);

  it('loads, records where its data comes from and ships the licence of that data', () => {
    expect(registry.origin).toBe('shipped');
    expect(registry.file).toBe(SHIPPED_VENDORS_FILE);
    expect(registry.snapshot).toMatchObject({ commit: '2f45638a', date: '2026-08-20', licence: 'MIT', licenseFile: 'vendor-ranges-LICENSE' });
    const licence = readFileSync(join(here, 'vendor-ranges-LICENSE'), 'utf8');
    expect(licence).toContain('Copyright (c) 2025 Xe Iaso');
    expect(licence).toContain('Permission is hereby granted, free of charge');
  });

  it('covers the vendors the service must know', () => {
    const ids = registry.vendors.map((v) => v.id);
    for (const id of [
      'openai-gptbot', 'openai-searchbot', 'openai-chatgpt-user',
      'anthropic-claudebot', 'anthropic-claude-user', 'anthropic-claude-searchbot',
      'perplexity-perplexitybot', 'perplexity-user',
      'google-googlebot', 'google-user-triggered-fetchers', 'microsoft-bingbot', 'apple-applebot',
      'meta-externalagent', 'meta-facebookexternalhit', 'amazon-amazonbot', 'bytedance-bytespider',
      'commoncrawl-ccbot', 'xai-code-review-sourcing', 'mistral-mistralai-user', 'duckduckgo-duckduckbot',
      'kagi-kagibot', 'marginalia-search', 'mojeek-mojeekbot', 'qwant-qwantbot', 'wikimedia-citoid',
      'wikimedia-zotero', 'internet-archive', 'arquivo-pt',
    ]) {
      expect(ids, id).toContain(id);
    }
  });

  it('gives every vendor the extended members, an example UA and a date for its ranges', () => {
    for (const v of registry.vendors) {
      expect(VENDOR_CATEGORIES, v.id).toContain(v.category);
      expect(typeof v.isAi, v.id).toBe('boolean');
      expect(v.operator, v.id).toBeTruthy();
      expect(v.uaExamples.length, v.id).toBeGreaterThan(0);
      expect(v.creationTime, v.id).toBe(v.cidrs.length > 0 ? '2026-08-20' : null);
      for (const url of v.rangesUrls) expect(v.sourceUrls, v.id).toContain(url);
    }
  });

  it('has no proof for the vendors that publish none in the snapshot', () => {
    for (const id of ['anthropic-claudebot', 'anthropic-claude-user', 'anthropic-claude-searchbot', 'meta-externalagent', 'meta-facebookexternalhit', 'bytedance-bytespider', 'arquivo-pt']) {
      expect(hasProof(registry.byId.get(id)!), id).toBe(false);
      expect(proofSourcesOf(registry.byId.get(id)!), id).toEqual([]);
    }
    expect(registry.byId.get('google-googlebot')!.ranges.some((r) => r.family === 6)).toBe(true);
  });

  it('names the domains of the vendors that document forward-confirmed reverse DNS', () => {
    const domains = Object.fromEntries(registry.vendors.filter((v) => v.reverseDns.length > 0).map((v) => [v.id, v.reverseDns]));
    expect(domains).toEqual({
      'google-googlebot': ['googlebot.com', 'google.com'],
      'google-cloudvertexbot': ['googlebot.com', 'google.com'],
      'google-user-triggered-fetchers': ['google.com'],
      'google-notebooklm': ['google.com'],
      'microsoft-bingbot': ['search.msn.com'],
      'apple-applebot': ['applebot.apple.com'],
      'amazon-amazonbot': ['crawl.amazonbot.amazon'],
    });
    // Amazon publishes no ranges: reverse DNS is its only proof, which makes a fake Amazonbot catchable.
    expect(proofSourcesOf(registry.byId.get('amazon-amazonbot')!)).toEqual(['fcrdns']);
    expect(proofSourcesOf(registry.byId.get('microsoft-bingbot')!)).toEqual(['ip-range', 'fcrdns']);
  });

  it('refuses a reverse DNS domain that is not a lower-case name of two labels or more', () => {
    const entry = (reverseDns: unknown) => ({ vendors: [{ id: 'x', name: 'X', uaPattern: 'XBot', cidrs: [], reverseDns }] });
    for (const bad of [['com'], ['Example.com'], ['.example.com'], ['example..com'], ['exa mple.com'], ['-x.example.com']]) {
      expect(() => parseVendorRegistry(entry(bad), 'inline.json'), JSON.stringify(bad)).toThrow(/reverseDns\[0\]/);
    }
    expect(parseVendorRegistry(entry(['crawl.example.com']), 'inline.json').vendors[0]!.reverseDns).toEqual(['crawl.example.com']);
  });

  it('does not make Google-Extended a user agent: it is a robots.txt token only', () => {
    const google = registry.byId.get('google-googlebot')!;
    expect(google.robotsTokens).toContain('Google-Extended');
    expect(google.notes).toMatch(/robots\.txt product token only/);
    expect(registry.vendors.some((v) => v.ua.test('Google-Extended'))).toBe(false);
  });

  it('is documented in docs/honeypot/vendors.md, vendor by vendor and class by class', () => {
    const doc = readFileSync(join(here, '../../../../docs/honeypot/vendors.md'), 'utf8');
    for (const v of registry.vendors) expect(doc, v.id).toContain(`| \`${v.id}\` |`);
    for (const c of UA_CLASS_VALUES) expect(doc, c).toContain(`| \`${c}\` |`);
  });

  it.skipIf(!existsSync(SNAPSHOT_DIR))(`is exactly what scripts/build-vendor-registry.ts makes of the snapshot${existsSync(SNAPSHOT_DIR) ? '' : ` (skipped: the vendor range snapshot ${SNAPSHOT_DIR} is outside the repository and absent here)`}`, () => {
    const rebuilt = buildRegistry(SNAPSHOT_DIR);
    const committed = JSON.parse(readFileSync(SHIPPED_VENDORS_FILE, 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(rebuilt)));
    expect(committed.snapshot).toEqual(SNAPSHOT);
  });
});

describe('OBSERVATORY_VENDORS_FILE replaces the shipped registry', () => {
  it('accepts the four members of spec D3 alone and treats those vendors as AI agents', async () => {
    const file = writeRegistry('d3.json', {
      vendors: [{ id: 'acme-crawler', name: 'Acme crawler', uaPattern: 'AcmeBot', cidrs: ['192.0.2.0/24', '2001:db8:ac3e::/48'] }],
    });
    const registry = loadVendorRegistry(file);
    expect(registry.origin).toBe('file');
    expect(registry.vendors.map((v) => v.id)).toEqual(['acme-crawler']);
    expect(registry.byId.get('acme-crawler')).toMatchObject({ isAi: true, category: 'ai-crawler', sourceUrls: [], webBotAuth: null });
    const inside = classifyRequest(registry, { ua: 'AcmeBot/2', ip: '2001:db8:ac3e::9', headers: {}, method: 'GET', path: '/', now });
    expect(inside).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', vendorId: 'acme-crawler', proof: 'ip-range:2001:db8:ac3e::/48' });
    // The shipped vendors are gone: GPTBot is now just a bot the generic list knows.
    const gpt = classifyRequest(registry, { ua: 'GPTBot/1.1', ip: '52.230.152.1', headers: {}, method: 'GET', path: '/', now });
    expect(gpt.uaClass).toBe('UNKNOWN_BOT');
  });

  const good = { id: 'ok-bot', name: 'OK', uaPattern: 'OkBot', cidrs: ['192.0.2.0/24'] };
  const cases: [string, unknown, RegExp][] = [
    ['not JSON', '{"vendors": [', /\(file\): is not JSON/],
    ['no vendors member', { agents: [] }, /: vendors: /],
    ['a vendor without uaPattern', { vendors: [{ id: 'x', name: 'X', cidrs: [] }] }, /vendors\[0\] \(id "x"\)/],
    ['a bad prefix', { vendors: [good, { ...good, id: 'bad-cidr', cidrs: ['192.0.2.0/24', '300.1.1.0/24'] }] }, /vendors\[1\] \(id "bad-cidr"\)\.cidrs\[1\]: "300\.1\.1\.0\/24" is not an IPv4 or IPv6 prefix/],
    ['a prefix length out of range', { vendors: [{ ...good, cidrs: ['2001:db8::/129'] }] }, /\.cidrs\[0\]: "2001:db8::\/129"/],
    ['a bad regular expression', { vendors: [{ ...good, uaPattern: 'Bot(' }] }, /vendors\[0\] \(id "ok-bot"\)\.uaPattern: not a valid regular expression/],
    ['a pattern claiming every UA', { vendors: [{ ...good, uaPattern: '.*' }] }, /\.uaPattern: matches the empty user agent/],
    ['a duplicate id', { vendors: [good, good] }, /vendors\[1\] \(id "ok-bot"\)\.id: duplicates vendors\[0\]/],
    ['an unknown category', { vendors: [{ ...good, category: 'spaceship' }] }, /vendors\[0\] \(id "ok-bot"\)\.category/],
    ['an id with capitals', { vendors: [{ ...good, id: 'OkBot' }] }, /vendors\[0\] \(id "OkBot"\)\.id/],
    ['an example its pattern misses', { vendors: [{ ...good, uaExamples: ['OkBot/1', 'NotIt'] }] }, /\.uaExamples\[1\]: does not match uaPattern/],
    ['a source URL that is not one', { vendors: [{ ...good, rangesUrls: ['ftp://x/y.json'] }] }, /\.rangesUrls\[0\]: "ftp:\/\/x\/y\.json" must be an http or https URL/],
    ['a key that is not Ed25519', { vendors: [{ ...good, webBotAuth: { keys: [{ keyid: 'k', jwk: { kty: 'RSA', n: 'x', e: 'AQAB' } }] } }] }, /\.webBotAuth\.keys\[0\]\.jwk: only Ed25519 keys/],
  ];
  it.each(cases)('refuses %s, naming the file and the member', (_what, content, message) => {
    const file = writeRegistry('bad.json', content);
    let error: unknown;
    try {
      loadVendorRegistry(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VendorRegistryError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses a file that does not exist', () => {
    const missing = join(dir, 'nope.json');
    expect(() => loadVendorRegistry(missing)).toThrow(`Vendor registry ${missing}: (file): cannot be read (ENOENT)`);
  });

  it('accepts Web Bot Auth keys and members it does not know', () => {
    const key = makeTestKey();
    const registry = parseVendorRegistry(
      { format: 'mine', vendors: [{ ...good, extra: true, webBotAuth: { keys: [{ keyid: key.keyid, jwk: key.publicJwk }], signatureAgent: 'https://ok.example' } }] },
      'inline.json',
    );
    const vendor = registry.byId.get('ok-bot')!;
    expect([...vendor.keys.keys()]).toEqual([key.keyid]);
    expect(vendor.webBotAuth?.signatureAgent).toBe('https://ok.example');
  });
});

describe('withRefreshedRanges', () => {
  const base = parseVendorRegistry(
    {
      vendors: [
        { id: 'fresh', name: 'Fresh', uaPattern: 'FreshBot', cidrs: ['192.0.2.0/24'], rangesUrls: ['https://fresh.example/ranges.json'] },
        { id: 'static', name: 'Static', uaPattern: 'StaticBot', cidrs: ['198.51.100.0/24'] },
      ],
    },
    'base.json',
  );
  const row = (over: Partial<RangeSnapshotRow>): RangeSnapshotRow => ({
    vendorId: 'fresh',
    sourceUrl: 'https://fresh.example/ranges.json',
    creationTime: '2026-09-01T00:00:00',
    fetchedAt: new Date('2026-09-01T03:23:00Z'),
    cidrs: ['203.0.113.0/24'],
    sha256: 'x',
    ...over,
  });

  it('replaces the ranges of the vendor the row is for', async () => {
    const refreshed = withRefreshedRanges(base, [row({})]);
    const fresh = refreshed.byId.get('fresh')!;
    expect(fresh).toMatchObject({ cidrs: ['203.0.113.0/24'], rangesOrigin: 'refreshed', creationTime: '2026-09-01T00:00:00', rangesFetchedAt: '2026-09-01T03:23:00.000Z' });
    expect(refreshed.byId.get('static')).toBe(base.byId.get('static'));
    const verdict = classifyRequest(refreshed, { ua: 'FreshBot', ip: '203.0.113.5', headers: {}, method: 'GET', path: '/', now });
    expect(verdict.proof).toBe('ip-range:203.0.113.0/24');
    expect(base.byId.get('fresh')!.cidrs).toEqual(['192.0.2.0/24']);
  });

  it('ignores rows for another source URL, unknown vendors, empty lists and prefixes that do not parse', () => {
    for (const r of [row({ sourceUrl: 'https://elsewhere.example/x.json' }), row({ vendorId: 'gone' }), row({ cidrs: [] }), row({ cidrs: ['nope'] }), row({ vendorId: 'static' })]) {
      expect(withRefreshedRanges(base, [r])).toBe(base);
    }
  });
});
