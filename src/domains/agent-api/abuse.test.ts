import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, type MockInstance, vi } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import type { App } from '../../app.ts';
import { ManualClock } from '../../platform/clock.ts';
import { sha256Hex } from '../../platform/crypto.ts';

// Attacks on the public agent API's limits (docs/agent-api/README.md, "Rate limits"): rotating
// agent_name for a fresh anonymous window on every call, and presenting many bogus API keys so
// that every call becomes a database lookup. Each test runs the attack and shows it now fails.
const clock = new ManualClock('2026-05-01T00:00:00.000Z');
let t: TestApp;
/** The same database, with a per-address ceiling of 30 so the tests stay short. */
let small: App;
let lookups: MockInstance;
beforeAll(async () => {
  t = await startTestApp({ clock });
  small = await t.secondInstance({ OBSERVATORY_AGENT_API_IP_PER_MINUTE: '30' });
  // The caller check reaches the database through service.resolveKey: every call of it is a lookup.
  lookups = vi.spyOn(t.app.agentApi.service, 'resolveKey');
});
afterAll(async () => t?.close());

const search = (app: App, options: { ip: string; agent?: string; headers?: Record<string, string> }) =>
  app.server.inject({
    method: 'GET',
    url: `/api/agent?query=passport${options.agent === undefined ? '' : `&agent_name=${encodeURIComponent(options.agent)}`}`,
    remoteAddress: options.ip,
    headers: options.headers ?? {},
  });

async function createKey(): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/agent-api/keys`, payload: { name: 'Research crawler' } });
  expect(res.statusCode).toBe(200);
  return res.json<{ key: string }>().key;
}

function expectRateLimited(res: LightMyRequestResponse, limit: string, human: string) {
  expect(res.statusCode).toBe(429);
  expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'rate-limited' });
  expect(res.json().human).toContain(human);
  const retryAfter = Number(res.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers['x-ratelimit-limit']).toBe(limit);
  expect(res.headers['x-ratelimit-remaining']).toBe('0');
}

const bogusKey = () => `agk_${randomUUID().replaceAll('-', '')}`;

describe('per-address ceiling on anonymous calls (OBSERVATORY_AGENT_API_IP_PER_MINUTE)', () => {
  it('refuses a caller rotating agent_name once its address has made ipPerMinute calls', async () => {
    const ip = '203.0.113.10';
    for (let i = 1; i <= 30; i++) {
      const res = await search(small, { ip, agent: `rotating-${i}` });
      expect(res.statusCode, `call ${i}`).toBe(200);
      // The headers follow the binding window: the name's (19 left) until the address has fewer.
      expect(res.headers['x-ratelimit-remaining'], `call ${i}`).toBe(String(Math.min(19, 30 - i)));
      expect(res.headers['x-ratelimit-limit'], `call ${i}`).toBe(30 - i < 19 ? '30' : '20');
    }
    for (let i = 31; i <= 40; i++) expectRateLimited(await search(small, { ip, agent: `rotating-${i}` }), '30', 'whatever the agent_name');
    // Another address is counted apart, and a key is counted by the key, not by the address.
    expect((await search(small, { ip: '203.0.113.11', agent: 'rotating-1' })).statusCode).toBe(200);
    const keyed = await search(small, { ip, headers: { 'x-api-key': await createKey() } });
    expect(keyed.statusCode).toBe(200);
    expect(keyed.headers['x-ratelimit-limit']).toBe('200');
  });

  it('lets a fixed agent_name hit its own limit of 20 first, without spending the address ceiling on refused calls', async () => {
    const ip = '203.0.113.20';
    for (let i = 1; i <= 20; i++) {
      const res = await search(small, { ip, agent: 'fixed' });
      expect(res.statusCode, `call ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('20');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(20 - i));
    }
    for (let i = 0; i < 15; i++) expectRateLimited(await search(small, { ip, agent: 'fixed' }), '20', 'this IP and agent_name');
    // 20 served calls spent 20 of the address's 30; the 15 refused ones spent nothing.
    for (let i = 1; i <= 10; i++) {
      const res = await search(small, { ip, agent: `other-${i}` });
      expect(res.statusCode, `other name ${i}`).toBe(200);
      expect(res.headers['x-ratelimit-remaining']).toBe(String(10 - i));
    }
    expectRateLimited(await search(small, { ip, agent: 'other-11' }), '30', 'whatever the agent_name');
  });

  it('counts IPv6 callers by their /64', async () => {
    for (let i = 1; i <= 30; i++) expect((await search(small, { ip: `2001:db8:7:1::${i.toString(16)}`, agent: `v6-${i}` })).statusCode, `call ${i}`).toBe(200);
    expectRateLimited(await search(small, { ip: '2001:db8:7:1:ffff:ffff:ffff:ffff', agent: 'v6-31' }), '30', 'whatever the agent_name');
    expect((await search(small, { ip: '2001:db8:7:2::1', agent: 'v6-31' })).statusCode).toBe(200);
  });

  it('stops the reported bypass at the default ceiling of 120', async () => {
    const ip = '203.0.113.30';
    for (let i = 0; i < 20; i++) expect((await search(t.app, { ip, agent: 'fixed' })).statusCode).toBe(200);
    expectRateLimited(await search(t.app, { ip, agent: 'fixed' }), '20', 'this IP and agent_name');
    // Before the ceiling, every fresh agent_name got a fresh window of 20, without end.
    for (let i = 1; i <= 100; i++) expect((await search(t.app, { ip, agent: `fresh-${i}` })).statusCode, `fresh name ${i}`).toBe(200);
    expectRateLimited(await search(t.app, { ip, agent: 'fresh-101' }), '120', 'whatever the agent_name');
  });
});

describe('unknown API keys cost the caller, not the database', () => {
  it('looks up at most 10 unknown keys a minute per address, then answers 429 without a lookup', async () => {
    const ip = '198.51.100.70';
    const before = lookups.mock.calls.length;
    const tried: string[] = [];
    for (let i = 1; i <= 10; i++) {
      tried.push(bogusKey());
      const res = await search(t.app, { ip, headers: i % 2 ? { 'x-api-key': tried.at(-1)! } : { authorization: `Bearer ${tried.at(-1)}` } });
      expect(res.statusCode, `key ${i}`).toBe(401);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-api-key' });
    }
    expect(lookups.mock.calls.length - before).toBe(10);
    for (let i = 0; i < 20; i++) expectRateLimited(await search(t.app, { ip, headers: { 'x-api-key': bogusKey() } }), '10', 'unknown or revoked API keys');
    expect(lookups.mock.calls.length - before).toBe(10);
    // A key already known bad is still answered 401, from memory.
    expect((await search(t.app, { ip, headers: { 'x-api-key': tried[0]! } })).statusCode).toBe(401);
    expect(lookups.mock.calls.length - before).toBe(10);
    // Another address has its own allowance.
    expect((await search(t.app, { ip: '198.51.100.71', headers: { 'x-api-key': bogusKey() } })).statusCode).toBe(401);
    expect(lookups.mock.calls.length - before).toBe(11);
  });

  it('answers a repeated unknown key from memory for 60 s, from any address', async () => {
    const key = bogusKey();
    const before = lookups.mock.calls.length;
    for (let i = 0; i < 5; i++) expect((await search(t.app, { ip: `198.51.100.${80 + i}`, headers: { 'x-api-key': key } })).statusCode).toBe(401);
    expect(lookups.mock.calls.length - before).toBe(1);
    clock.advance(59_000);
    expect((await search(t.app, { ip: '198.51.100.80', headers: { 'x-api-key': key } })).statusCode).toBe(401);
    expect(lookups.mock.calls.length - before).toBe(1);
    clock.advance(1_001);
    expect((await search(t.app, { ip: '198.51.100.80', headers: { 'x-api-key': key } })).statusCode).toBe(401);
    expect(lookups.mock.calls.length - before).toBe(2);
  });

  it('shares the allowance across an IPv6 /64', async () => {
    for (let i = 1; i <= 10; i++) expect((await search(t.app, { ip: `2001:db8:9:1::${i.toString(16)}`, headers: { 'x-api-key': bogusKey() } })).statusCode).toBe(401);
    expectRateLimited(await search(t.app, { ip: '2001:db8:9:1:abcd::1', headers: { 'x-api-key': bogusKey() } }), '10', 'unknown or revoked API keys');
  });

  it('does not spend the allowance on good keys, and stops trusting a revoked key within 30 s', async () => {
    const ip = '198.51.100.90';
    const keys: string[] = [];
    for (let i = 0; i < 12; i++) keys.push(await createKey());
    const before = lookups.mock.calls.length;
    for (const key of [...keys, ...keys]) {
      const res = await search(t.app, { ip, headers: { 'x-api-key': key } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('200');
    }
    // Twelve lookups (more than the allowance of 10, each given back); the second round from memory.
    expect(lookups.mock.calls.length - before).toBe(12);

    // A key known good keeps working from an address that has spent its allowance on bogus keys.
    for (let i = 0; i < 10; i++) await search(t.app, { ip, headers: { 'x-api-key': bogusKey() } });
    expect((await search(t.app, { ip, headers: { 'x-api-key': bogusKey() } })).statusCode).toBe(429);
    expect((await search(t.app, { ip, headers: { 'x-api-key': keys[1]! } })).statusCode).toBe(200);

    await t.app.database.db.execute(sql`UPDATE agent_api_keys SET revoked_at = now() WHERE key_hash = ${sha256Hex(keys[0]!)}`);
    clock.advance(29_000);
    expect((await search(t.app, { ip: '198.51.100.91', headers: { 'x-api-key': keys[0]! } })).statusCode).toBe(200);
    clock.advance(1_001);
    const revoked = await search(t.app, { ip: '198.51.100.91', headers: { 'x-api-key': keys[0]! } });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().reason).toBe('invalid-api-key');
  });
});
