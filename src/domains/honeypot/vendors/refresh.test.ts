import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import type { Database } from '../../../platform/db/client.ts';
import { classifyRequest } from './classify.ts';
import {
  applyStoredRanges,
  type FetchLike,
  parseRangeList,
  REFRESH_JOB,
  rangesDigest,
  refreshVendorRanges,
  type VendorJobDeps,
  vendorJobs,
} from './refresh.ts';
import { createRegistryHolder, loadVendorRegistry, parseVendorRegistry, type RegistryHolder } from './registry.ts';
import { listRangeSnapshots } from './repository.ts';

let server: Server;
let base: string;
let testDb: TestDatabase;
let database: Database;
const served = { body: '', status: 200, hang: false };
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (served.hang) return; // never answers: the fetch must time out
    res.writeHead(served.status, { 'content-type': 'application/json' });
    res.end(served.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ testDb, database } = await openTestDatabase());
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await testDb.drop();
});

const now = new Date('2026-09-02T03:23:00Z');
const list = (creationTime: string, prefixes: object[]) => JSON.stringify({ creationTime, prefixes });

function registryFor(urls: string[]) {
  return parseVendorRegistry(
    {
      vendors: [
        { id: 'acme-bot', name: 'Acme', uaPattern: 'AcmeBot', cidrs: ['192.0.2.0/24'], rangesUrls: urls },
        { id: 'acme-sibling', name: 'Acme sibling', uaPattern: 'AcmeSibling', cidrs: ['192.0.2.0/24'], rangesUrls: urls },
        { id: 'no-list', name: 'No list', uaPattern: 'NoList', cidrs: ['198.51.100.0/24'] },
      ],
    },
    'refresh-test.json',
  );
}

function depsFor(holder: RegistryHolder, over: Partial<VendorJobDeps> = {}): VendorJobDeps {
  return { db: database.db, registryRef: holder, config: { honeypot: { vendorRefresh: true }, outbound: { timeoutMs: 300 } }, ...over };
}

const classifyAcme = (holder: RegistryHolder, ip: string) =>
  classifyRequest(holder.current, { ua: 'AcmeBot/1', ip, headers: {}, method: 'GET', path: '/', now });

describe('parseRangeList', () => {
  it('reads the {creationTime, prefixes} format', () => {
    expect(parseRangeList(list('2026-09-01T00:00:00.000000', [{ ipv4Prefix: '203.0.113.0/24' }, { ipv6Prefix: '2001:db8::/32' }]))).toEqual({
      creationTime: '2026-09-01T00:00:00.000000',
      cidrs: ['203.0.113.0/24', '2001:db8::/32'],
    });
  });
  it.each([
    ['not JSON', '<html>', /JSON/],
    ['no prefixes', '{"creationTime":"x"}', /no prefixes array/],
    ['an empty list', list('x', []), /empty/],
    ['a bad prefix', list('x', [{ ipv4Prefix: '203.0.113.0/24' }, { ipv4Prefix: 'nope' }]), /prefixes\[1\]/],
    ['an entry of another shape', list('x', [{ prefix: '203.0.113.0/24' }]), /prefixes\[0\]/],
  ])('refuses %s', (_what, text, message) => {
    expect(() => parseRangeList(text)).toThrow(message);
  });
});

describe('the vendor-ranges-refresh job', () => {
  const holder = createRegistryHolder(registryFor([]));

  it('is a daily job', () => {
    const [job] = vendorJobs(depsFor(holder));
    expect(job).toMatchObject({ name: REFRESH_JOB, schedule: '23 3 * * *' });
    expect(job!.description.length).toBeGreaterThan(20);
  });

  it('stores a fetched list, swaps the registry and counts vendors sharing the list', async () => {
    holder.current = registryFor([`${base}/acme.json`]);
    expect(classifyAcme(holder, '203.0.113.7').uaClass).toBe('LIAR');
    Object.assign(served, { status: 200, hang: false, body: list('2026-09-01T12:00:00', [{ ipv4Prefix: '203.0.113.0/24' }, { ipv6Prefix: '2001:db8:acbe::/48' }]) });
    hits.length = 0;

    const [job] = vendorJobs(depsFor(holder));
    const stats = await job!.run({ now, db: database.db, log: undefined as never, trigger: 'manual' });
    expect(stats).toMatchObject({ enabled: true, fetched: 2, unchanged: 0, failed: 0, skipped: 0, failures: [] });
    expect(hits).toEqual(['/acme.json']);

    const rows = await listRangeSnapshots(database.db);
    expect(rows.map((r) => r.vendorId)).toEqual(['acme-bot', 'acme-sibling']);
    expect(rows[0]).toMatchObject({
      sourceUrl: `${base}/acme.json`,
      creationTime: '2026-09-01T12:00:00',
      fetchedAt: now,
      cidrs: ['203.0.113.0/24', '2001:db8:acbe::/48'],
      sha256: rangesDigest(['2001:db8:acbe::/48', '203.0.113.0/24']),
    });
    expect(holder.current.byId.get('acme-bot')).toMatchObject({ rangesOrigin: 'refreshed', cidrs: ['203.0.113.0/24', '2001:db8:acbe::/48'] });
    expect(classifyAcme(holder, '203.0.113.7')).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', proof: 'ip-range:203.0.113.0/24' });
    expect(classifyAcme(holder, '2001:db8:acbe::1').uaClass).toBe('KNOWN_LLM_AGENT');
    expect(classifyAcme(holder, '192.0.2.7').uaClass).toBe('LIAR');
  });

  it('counts the same list again as unchanged', async () => {
    const stats = await refreshVendorRanges(depsFor(holder), new Date('2026-09-03T03:23:00Z'));
    expect(stats).toMatchObject({ fetched: 0, unchanged: 2, failed: 0 });
    expect((await listRangeSnapshots(database.db))[0]!.fetchedAt).toEqual(new Date('2026-09-03T03:23:00Z'));
  });

  const failures: [string, Partial<typeof served>, RegExp][] = [
    ['an HTTP 500', { status: 500, body: 'oops' }, /HTTP 500/],
    ['a timeout', { hang: true }, /timed out/],
    ['a body that is not a range list', { status: 200, body: '<html></html>' }, /JSON/],
  ];
  it.each(failures)('keeps the snapshot on %s and counts it, without throwing', async (_what, serve, reason) => {
    const before = await listRangeSnapshots(database.db);
    const registryBefore = holder.current;
    Object.assign(served, { status: 200, hang: false, body: '', ...serve });
    const stats = await refreshVendorRanges(depsFor(holder), new Date('2026-09-04T03:23:00Z'));
    expect(stats).toMatchObject({ fetched: 0, unchanged: 0, failed: 2 });
    expect(stats.failures).toEqual([{ url: `${base}/acme.json`, vendors: ['acme-bot', 'acme-sibling'], error: expect.stringMatching(reason) }]);
    expect(await listRangeSnapshots(database.db)).toEqual(before);
    expect(holder.current.byId.get('acme-bot')!.cidrs).toEqual(registryBefore.byId.get('acme-bot')!.cidrs);
    expect(classifyAcme(holder, '203.0.113.7').uaClass).toBe('KNOWN_LLM_AGENT');
  });

  it('counts a refused connection as failed', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const other = createRegistryHolder(registryFor([`http://127.0.0.1:${port}/x.json`]));
    const stats = await refreshVendorRanges(depsFor(other), now);
    expect(stats).toMatchObject({ failed: 2, failures: [{ error: expect.stringMatching(/ECONNREFUSED|fetch failed/) }] });
  });

  it('fetches nothing when OBSERVATORY_VENDOR_REFRESH is off, and counts the lists skipped', async () => {
    hits.length = 0;
    const stats = await refreshVendorRanges(depsFor(holder, { config: { honeypot: { vendorRefresh: false }, outbound: { timeoutMs: 300 } } }), now);
    expect(stats).toEqual({ enabled: false, fetched: 0, unchanged: 0, failed: 0, skipped: 2, failures: [] });
    expect(hits).toEqual([]);
  });

  it('lays the stored lists over a freshly loaded registry at start', async () => {
    const fresh = createRegistryHolder(registryFor([`${base}/acme.json`]));
    await applyStoredRanges({ db: database.db, registryRef: fresh });
    expect(fresh.current.byId.get('acme-sibling')!.rangesOrigin).toBe('refreshed');
    // A registry whose vendor lists another URL is not overwritten by rows fetched for this one.
    const moved = createRegistryHolder(registryFor([`${base}/moved.json`]));
    await applyStoredRanges({ db: database.db, registryRef: moved });
    expect(moved.current.byId.get('acme-bot')!.rangesOrigin).toBe('registry');
  });

  it('fetches every JSON list of the shipped registry once, through an injected fetch', async () => {
    const shipped = createRegistryHolder(loadVendorRegistry(null));
    const urls = [...new Set(shipped.current.vendors.flatMap((v) => v.rangesUrls))];
    const withLists = shipped.current.vendors.filter((v) => v.rangesUrls.length > 0).length;
    Object.assign(served, { status: 200, hang: false, body: list('2026-09-02T00:00:00', [{ ipv4Prefix: '203.0.113.0/24' }]) });
    hits.length = 0;
    const local: FetchLike = (url, init) => fetch(`${base}/${encodeURIComponent(url)}`, init);
    const stats = await refreshVendorRanges(depsFor(shipped, { fetch: local }), now);
    expect(stats).toMatchObject({ fetched: withLists, failed: 0 });
    expect(hits.map((h) => decodeURIComponent(h.slice(1))).sort()).toEqual(urls.sort());
    expect(shipped.current.byId.get('openai-gptbot')!.cidrs).toEqual(['203.0.113.0/24']);
    expect(shipped.current.byId.get('anthropic-claudebot')!.rangesOrigin).toBe('registry');
  });
});
