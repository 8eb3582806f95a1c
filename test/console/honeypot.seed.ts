import { expect } from 'vitest';
import type { Clock } from '../../src/platform/clock.ts';
import { runJob, type TestApp, V1 } from '../helpers/app.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../helpers/honeypot.ts';

/**
 * Seeding for the honeypot pages' browser tests: real tenants, signed ingest, a rule that fired.
 * The server's clock runs with the wall clock plus an offset, so a test can step past the
 * alert evaluation's settle margin or a secret's overlap without sleeping.
 */
export class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

export const JA4_OPENAI = 't13d1516h2_8daaf6152771_02713d6af862';
export const JA4_SPOOF = 't13d190900_9dc949149365_97f8aa674fd9';
export const LIAR_IP = '203.0.113.50';
export const SEED_RULE = 'Liar flood (seeded)';

export interface Seeded {
  secrets: { 'edge-eu': string; 'docs-mirror': string };
  /** Events stored per tenant. */
  counts: Record<string, number>;
  verifiedFingerprint: string;
  verifiedProof: string;
  liarFingerprint: string;
  anEventId: string;
}

/** Sends events for a tenant, signed at the server's now; fails the test unless all are stored. */
export async function ingest(t: TestApp, clock: Clock, slug: string, secret: string, events: Record<string, unknown>[]) {
  const res = await signedIngest(t, { slug, secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ accepted: number; events: { eventId: string; uaClass: string; fingerprintId: string }[] }>();
}

export async function seedHoneypot(t: TestApp, clock: OffsetClock): Promise<Seeded> {
  const secrets = { 'edge-eu': await createTenant(t, 'edge-eu', 'Edge EU'), 'docs-mirror': await createTenant(t, 'docs-mirror', 'Docs mirror') };
  const now = clock.now().getTime();
  const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();
  const verified = Array.from({ length: 4 }, (_, i) => ({
    ts: ago(600 - i * 30),
    ua: GPTBOT_UA,
    ip: GPTBOT_IP,
    ja4: JA4_OPENAI,
    asn: 8075,
    country: 'US',
    path: '/honeypot/topics/llm-pricing',
  }));
  // The same GPTBot UA from an address outside OpenAI's ranges with another TLS stack: liars,
  // enough of them within 10 minutes to open a tarpit.
  const liars = Array.from({ length: 6 }, (_, i) => ({ ts: ago(300 - i * 20), ua: GPTBOT_UA, ip: LIAR_IP, ja4: JA4_SPOOF, asn: 14061, country: 'NL', path: '/.env' }));
  const browsers = Array.from({ length: 3 }, (_, i) => ({ ts: ago(200 - i * 40), ua: CHROME_UA, ip: '198.51.100.7', country: 'DE', path: '/robots.txt' }));
  const question = [{ ts: ago(90), ua: CHROME_UA, ip: '198.51.100.8', country: 'DE', path: '/q/best-gpu-cloud' }];
  const edge = await ingest(t, clock, 'edge-eu', secrets['edge-eu'], [...verified, ...liars, ...browsers, ...question]);
  await ingest(t, clock, 'docs-mirror', secrets['docs-mirror'], [
    { ts: ago(120), ua: CHROME_UA, ip: '198.51.100.9', path: '/llms.txt' },
    { ts: ago(60), ua: CHROME_UA, ip: '198.51.100.9', path: '/llms-full.txt' },
  ]);

  const recent = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=edge-eu&limit=100` });
  const events = recent.json<{ events: { id: string; uaClass: string; fingerprintId: string; proof: string | null }[] }>().events;
  const verifiedEvent = events.find((e) => e.uaClass === 'KNOWN_LLM_AGENT');
  const liarEvent = events.find((e) => e.uaClass === 'LIAR');
  expect(verifiedEvent?.proof, 'the GPTBot events from its published range verify').toMatch(/^ip-range:/);
  expect(liarEvent, 'the GPTBot events from elsewhere are liars').toBeDefined();
  const tarpits = await t.call({ method: 'GET', url: `${V1}/honeypot/tarpits?tenant=edge-eu` });
  expect(tarpits.json().rows.length, 'the liars opened a tarpit').toBeGreaterThan(0);

  // A rule that fires on the liars: the evaluation reads events received up to a minute ago, so
  // the server's clock steps two minutes ahead (and stays there) before the job runs.
  const rule = await t.call({
    method: 'POST',
    url: `${V1}/honeypot/alerts`,
    payload: {
      tenant: 'edge-eu',
      name: SEED_RULE,
      predicate: { kind: 'liar_rate_above', pct: 10, windowMinutes: 60, minEvents: 1 },
      destinations: [{ kind: 'slack', url: 'https://hooks.slack.com/services/T000/B000/seeded' }],
    },
  });
  expect(rule.statusCode, rule.body).toBe(200);
  clock.offsetMs += 120_000;
  const stats = await runJob(t, 'alert-evaluate');
  expect(stats.fired, 'the seeded rule fired').toBeGreaterThanOrEqual(1);

  return {
    secrets,
    counts: { 'edge-eu': edge.accepted, 'docs-mirror': 2 },
    verifiedFingerprint: verifiedEvent!.fingerprintId,
    verifiedProof: verifiedEvent!.proof!,
    liarFingerprint: liarEvent!.fingerprintId,
    anEventId: verifiedEvent!.id,
  };
}
