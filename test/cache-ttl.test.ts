import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { signatureHeader } from '../src/domains/honeypot/ingest/signature.ts';
import { TENANT_CACHE_MS } from '../src/domains/honeypot/tenants/service.ts';
import { KEY_CACHE_MS } from '../src/domains/provenance/service.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { EMPIRE_INGEST, nodeKeyPair, registerKey, signWithNode } from './helpers/empire.ts';
import { CHROME_UA, createTenant, INGEST_PATH } from './helpers/honeypot.ts';

/**
 * The documented lifetimes of the per-instance caches, measured by the service clock: one instance
 * (`t`) changes something, the other (`other`) has read it before. Just before the bound the other
 * still answers from what it read; just after, from the change. Each bound is written here as the
 * docs state it, so changing a constant, or letting a cache age by real time again, fails a test.
 */
const clock = new ManualClock('2026-11-25T08:00:00.000Z');
let t: TestApp;
let other: App;
beforeAll(async () => {
  const env = { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '100000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '100000' };
  t = await startTestApp({ clock, env });
  other = await t.secondInstance();
});
afterAll(() => t?.close());

describe('honeypot tenant lookups (docs/honeypot/README.md: "on other instances within a second")', () => {
  const slug = 'cache-trap';
  let secret: string;
  const ingestOn = (app: App, id: string) => {
    const raw = JSON.stringify({ events: [{ id, path: '/trap', ua: CHROME_UA, ip: '203.0.113.40' }] });
    const unixSeconds = Math.floor(clock.now().getTime() / 1000);
    return app.server.inject({
      method: 'POST',
      url: INGEST_PATH,
      payload: raw,
      headers: { 'content-type': 'application/json', 'x-observatory-tenant': slug, 'x-observatory-signature': signatureHeader(secret, unixSeconds, raw) },
    });
  };

  it('keeps accepting a tenant disabled elsewhere for 1 s, then refuses it', async () => {
    expect(TENANT_CACHE_MS).toBe(1000);
    secret = await createTenant(t, slug);
    expect((await ingestOn(other, 'warm')).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/${slug}/disable` })).statusCode).toBe(200);
    // The instance that made the change knows at once.
    expect((await ingestOn(t.app, 'here')).json()).toMatchObject({ reason: 'tenant-disabled' });
    clock.advance(1000);
    expect((await ingestOn(other, 'at-bound')).statusCode).toBe(200);
    clock.advance(1);
    const late = await ingestOn(other, 'past-bound');
    expect(late.statusCode).toBe(403);
    expect(late.json()).toMatchObject({ reason: 'tenant-disabled' });
  });
});

describe('provenance keys (docs/empire/README.md: "a retirement … on another instance takes effect here within a second")', () => {
  it('admits events signed by a key retired elsewhere for 1 s, then rejects them', async () => {
    expect(KEY_CACHE_MS).toBe(1000);
    const toolset = 'cache-lab';
    const key = nodeKeyPair();
    const keyId = await registerKey(t, toolset, key.publicKeyB64);
    const ingestOn = async (app: App, id: string) => {
      const res = await app.server.inject({
        method: 'POST',
        url: EMPIRE_INGEST,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { toolset, events: [signWithNode(toolset, { id, eventType: 'x' }, key.privateKey)] },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ results: { rejectionReason: string | null }[] }>().results[0]!.rejectionReason;
    };
    expect(await ingestOn(other, 'k-warm')).toBeNull();
    clock.advance(10);
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/keys/${keyId}/retire`, payload: {} })).statusCode).toBe(200);
    clock.advance(1);
    expect(await ingestOn(t.app, 'k-here')).toBe('key-retired-before-event');
    // `other` read the keys 11 ms before the retirement: its copy is good until 1000 ms after that read.
    clock.advance(1000 - 11);
    expect(await ingestOn(other, 'k-at-bound')).toBeNull();
    clock.advance(1);
    expect(await ingestOn(other, 'k-past-bound')).toBe('key-retired-before-event');
  });
});

// With the search index on (the default) its poll makes another instance forget sooner, within a
// second of real time (search-index.test.ts); the cache's own bound holds with it off.
describe('agent API search and feed answers with OBSERVATORY_SEARCH_INDEX=0 (docs/agent-api/README.md: "another instance\'s upsert shows here within 60 s")', () => {
  const topic = {
    slug: 'axolotl-regeneration-cache-probe',
    title: 'Axolotl regeneration',
    category: 'facts',
    summary: 'How an axolotl regrows a limb.',
    body: 'Axolotls regrow limbs, hearts and parts of their brains.',
  };
  const searchOn = async (app: App) =>
    (await app.server.inject({ method: 'GET', url: '/api/agent?query=axolotl' })).json<{ total: number }>().total;
  const feedOn = async (app: App) => (await app.server.inject({ method: 'GET', url: '/feed.json' })).body.includes(topic.slug);

  it('serves the cached answer for 60 s after another instance upserts, then the new one', async () => {
    const other = await t.secondInstance({ OBSERVATORY_SEARCH_INDEX: '0' });
    expect(await searchOn(other)).toBe(0);
    expect(await feedOn(other)).toBe(false);
    // The topic is the newest, so it heads the feed once the feed is read again.
    const upsert = await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [{ ...topic, createdAt: '2026-11-25T07:59:00.000Z' }] } });
    expect(upsert.statusCode, upsert.body).toBe(200);
    // The instance that upserted forgets its answers at once.
    expect(await searchOn(t.app)).toBe(1);
    clock.advance(60_000);
    expect(await searchOn(other)).toBe(0);
    expect(await feedOn(other)).toBe(false);
    clock.advance(1);
    expect(await searchOn(other)).toBe(1);
    expect(await feedOn(other)).toBe(true);
    await other.close();
  });
});
