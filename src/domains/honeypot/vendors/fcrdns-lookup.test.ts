import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../../test/helpers/dns-server.ts';
import { createFcrdnsLookup, type FcrdnsOptions } from './fcrdns-lookup.ts';
import type { RdnsFact } from './reverse-dns.ts';

/** The lookups against a DNS server on a loopback port: answers, failures, and every bound. */

let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
  for (let i = 1; i <= 9; i++) {
    dns.ptr.set(`203.0.113.${i}`, [`crawl-${i}.crawl.amazonbot.amazon.`]);
    dns.forward.set(`crawl-${i}.crawl.amazonbot.amazon`, [`203.0.113.${i}`]);
  }
  dns.ptr.set('2001:db8::5', ['msnbot-5.search.msn.com']);
  dns.forward.set('msnbot-5.search.msn.com', ['2001:db8:0:0::5']);
  dns.ptr.set('198.51.100.1', ['host.example.net', 'other.crawl.amazonbot.amazon']);
  dns.ptr.set('198.51.100.2', ['x.crawl.amazonbot.amazon']);
  dns.servfail.add('x.crawl.amazonbot.amazon');
  dns.silent.add('198.51.100.3');
});
afterAll(() => dns?.close());

function lookup(overrides: Partial<FcrdnsOptions> = {}) {
  const answers: [string, RdnsFact][] = [];
  let now = 0;
  const lookups = createFcrdnsLookup({
    servers: [dns.address],
    timeoutMs: 200,
    concurrency: 2,
    maxQueued: 100,
    cacheSize: 100,
    answerTtlMs: 60_000,
    failureTtlMs: 5_000,
    domains: () => ['crawl.amazonbot.amazon', 'search.msn.com'],
    now: () => now,
    onAnswer: (ip, fact) => answers.push([ip, fact]),
    ...overrides,
  });
  return { lookups, answers, advance: (ms: number) => (now += ms) };
}

describe('forward-confirmed reverse DNS lookups', () => {
  it('answers pending at once, then from the cache, and tells each answer once', async () => {
    const { lookups, answers } = lookup();
    expect(lookups.known('203.0.113.1')).toEqual({ status: 'pending' });
    expect(lookups.known('203.0.113.1')).toEqual({ status: 'pending' });
    await lookups.idle();
    const confirmed = { status: 'answered', ptr: ['crawl-1.crawl.amazonbot.amazon'], names: ['crawl-1.crawl.amazonbot.amazon'] };
    expect(answers).toEqual([['203.0.113.1', confirmed]]);
    expect(lookups.known('203.0.113.1')).toEqual(confirmed);
    // Every spelling of the address is the same cache entry.
    expect(lookups.known('::ffff:203.0.113.1')).toEqual(confirmed);
    expect(lookups.stats()).toMatchObject({ lookups: 1, cached: 1 });
    lookups.close();
  });

  it('confirms IPv6 through AAAA, forward-resolves only names under a vendor domain, and keeps a failure apart from a refusal', async () => {
    const { lookups, answers } = lookup();
    for (const ip of ['2001:db8::5', '198.51.100.1', '198.51.100.2', '198.51.100.3', '192.0.2.77']) lookups.known(ip);
    await lookups.idle();
    const byIp = Object.fromEntries(answers);
    expect(byIp['2001:db8::5']).toEqual({ status: 'answered', ptr: ['msnbot-5.search.msn.com'], names: ['msnbot-5.search.msn.com'] });
    // Named under Amazon's domain, but that name has no address: refused, not failed.
    expect(byIp['198.51.100.1']).toEqual({ status: 'answered', ptr: ['host.example.net', 'other.crawl.amazonbot.amazon'], names: [] });
    expect(byIp['198.51.100.2']).toEqual({ status: 'failed', error: 'forward:ESERVFAIL' });
    expect(byIp['198.51.100.3']).toEqual({ status: 'failed', error: 'ptr:ETIMEOUT' });
    expect(byIp['192.0.2.77']).toEqual({ status: 'answered', ptr: [], names: [] });
    expect(dns.questions).not.toContain('A host.example.net');
    lookups.close();
  });

  it('runs at most `concurrency` lookups and queues at most `maxQueued` addresses; the rest are judged without one', async () => {
    dns.pause();
    const { lookups } = lookup({ concurrency: 1, maxQueued: 2 });
    const facts = ['203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5'].map((ip) => lookups.known(ip));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(lookups.stats()).toMatchObject({ running: 1, queued: 1 });
    // One running and one queued is the bound of two pending: the third and fourth were not queued.
    expect(facts).toEqual([{ status: 'pending' }, { status: 'pending' }, { status: 'skipped', why: 'busy' }, { status: 'skipped', why: 'busy' }]);
    expect(lookups.stats().skippedBusy).toBe(2);
    dns.resume();
    await lookups.idle();
    lookups.close();
  });

  it('keeps at most `cacheSize` answers, least recently used out first, and asks again once an answer is stale', async () => {
    const { lookups, advance } = lookup({ cacheSize: 2 });
    for (const ip of ['203.0.113.6', '203.0.113.7']) lookups.known(ip);
    await lookups.idle();
    lookups.known('203.0.113.6');
    lookups.known('203.0.113.8');
    await lookups.idle();
    expect(lookups.stats().cached).toBe(2);
    expect(lookups.known('203.0.113.6').status).toBe('answered');
    expect(lookups.known('203.0.113.7')).toEqual({ status: 'pending' });
    await lookups.idle();
    advance(60_001);
    expect(lookups.known('203.0.113.7')).toEqual({ status: 'pending' });
    await lookups.idle();
    expect(lookups.stats().lookups).toBe(5);
    lookups.close();
  });

  it('tries a failed address again after the failure TTL, not before', async () => {
    const { lookups, advance } = lookup();
    lookups.known('198.51.100.3');
    await lookups.idle();
    expect(lookups.known('198.51.100.3')).toEqual({ status: 'failed', error: 'ptr:ETIMEOUT' });
    advance(5_001);
    expect(lookups.known('198.51.100.3')).toEqual({ status: 'pending' });
    lookups.close();
    await lookups.idle();
  });
});
