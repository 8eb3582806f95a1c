import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { insertIncident } from '../../src/domains/empire/incidents/repository.ts';
import { empireForecasts } from '../../src/domains/empire/schema.ts';
import type { ManualClock } from '../../src/platform/clock.ts';
import { runJob, type TestApp, V1 } from '../helpers/app.ts';
import { ingestEmpire } from '../helpers/empire.ts';
import { CHROME_UA, createTenant, GPTBOT_IP, GPTBOT_UA, signedIngest } from '../helpers/honeypot.ts';

/**
 * Data for the graph and triage pages, sent the way honeypots and toolsets send it (the graph as
 * src/domains/graph/graph.http.test.ts builds it, triage's datasets as src/domains/triage/triage.http.test.ts does), with the app's
 * ManualClock moved on where a job or an agent reads "up to a minute ago".
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
export const JA4 = 't13d1516h2_8daaf6152771_02713d6af862';
/** The saved query the graph page lists. */
export const SAVED_QUERY = { name: 'tenants-per-fingerprint', query: 'MATCH (f:Fingerprint)-[:SEEN_ON]->(t:Tenant) RETURN f.key AS fingerprint, count(t) AS tenants', description: 'How many tenants saw each fingerprint.' };

async function honeypot(t: TestApp, clock: ManualClock, slug: string, secret: string, events: Record<string, unknown>[]) {
  const res = await signedIngest(t, { slug, secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: { eventId: string; uaClass: string }[] }>().events;
}

async function empire(t: TestApp, toolset: string, events: Record<string, unknown>[]): Promise<string[]> {
  const res = await ingestEmpire(t, toolset, events as never);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ results: { eventId: string }[] }>().results.map((r) => r.eventId);
}

/**
 * The graph: GPTBot seen on two tenants with one JA4 (a fingerprint on two tenants, a cluster), a
 * causedBy chain evt-000120 → … → evt-000124 on crawler-lab (docs/graph/query.md's lineage example
 * answers it), a saved query, and the materialiser run over all of it.
 */
export async function seedGraph(t: TestApp, clock: ManualClock): Promise<{ chain: string[] }> {
  const eu = await createTenant(t, 'shop-eu', 'Shop EU');
  const us = await createTenant(t, 'shop-us', 'Shop US');
  await honeypot(t, clock, 'shop-eu', eu, [
    { path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: JA4 },
    { path: '/q/x', ua: CHROME_UA, ip: '203.0.113.9' },
  ]);
  await honeypot(t, clock, 'shop-us', us, [{ path: '/agents/b', ua: GPTBOT_UA, ip: GPTBOT_IP, ja4: JA4 }]);
  const chain = await empire(t, 'crawler-lab', [
    { id: 'evt-000120', eventType: 'crawl.scheduled', tenant: 'shop-eu' },
    { id: 'evt-000121', eventType: 'crawl.scheduled', causedBy: 'evt-000120', tenant: 'shop-eu' },
    { id: 'evt-000122', eventType: 'crawl.started', causedBy: 'evt-000121', tenant: 'shop-eu' },
    { id: 'evt-000123', eventType: 'crawl.page', causedBy: 'evt-000122', tenant: 'shop-eu' },
    { id: 'evt-000124', eventType: 'crawl.completed', causedBy: 'evt-000123', tenant: 'shop-eu' },
  ]);
  const saved = await t.call({ method: 'POST', url: `${V1}/empire/graph/saved-queries`, payload: { ...SAVED_QUERY, visibility: 'workspace' } });
  expect(saved.statusCode, saved.body).toBe(200);
  // Past the materialiser's settle margin, so its run takes in everything sent above.
  clock.advance(2 * MINUTE);
  await runJob(t, 'graph-materialise');
  return { chain };
}

/**
 * Triage's datasets: a rate spike on spike-kit (60 events in 15 minutes against a forecast of 40
 * an hour), a liar flood on the honeypot tenant docs-mirror (GPTBot's name from an address outside
 * OpenAI's ranges), and 7 days of hourly history on billing-kit with two resolved incidents, which
 * the rule proposer turns into a backtested rule.
 */
export async function seedTriage(t: TestApp, clock: ManualClock): Promise<void> {
  const now = clock.now().getTime();
  await t.app.database.db.insert(empireForecasts).values({
    id: randomUUID(),
    runId: randomUUID(),
    toolset: 'spike-kit',
    score: 0.1,
    level: 'none',
    direction: 'steady',
    details: { z: 0, recentMean: 40, baselineMean: 40, scale: 1, windowStart: new Date(now - 169 * HOUR).toISOString(), windowEnd: new Date(now - HOUR).toISOString() },
    computedAt: new Date(now - 5 * MINUTE),
  });
  await empire(t, 'spike-kit', Array.from({ length: 60 }, (_, i) => ({ id: `s-${i}`, eventType: 'crawl.page', tenant: 'acme' })));

  const secret = await createTenant(t, 'docs-mirror', 'Docs mirror');
  const stored = await honeypot(t, clock, 'docs-mirror', secret, [
    ...Array.from({ length: 60 }, () => ({ path: '/honeypot/topics/pricing', ua: GPTBOT_UA, ip: '203.0.113.50' })),
    ...Array.from({ length: 5 }, (_, i) => ({ path: '/robots.txt', ua: CHROME_UA, ip: `198.51.100.${i + 1}` })),
  ]);
  expect(stored.filter((e) => e.uaClass === 'LIAR')).toHaveLength(60);

  // billing-kit's history: bursts of job.done before each of two incidents, quiet otherwise.
  const from = Math.floor(now / HOUR) * HOUR - 7 * 24 * HOUR;
  const at = (hour: number, minutes = 0) => new Date(from + hour * HOUR + minutes * MINUTE);
  const burst = (hour: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: `b-${hour}-${i}`, eventType: 'job.done', ts: new Date(at(hour, 10).getTime() + i * 1000).toISOString() }));
  await empire(t, 'billing-kit', [...burst(57, 40), ...burst(121, 45)]);
  for (const [opened, resolved] of [
    [at(60, 30), at(62)],
    [at(122, 30), at(124)],
  ] as const) {
    await insertIncident(t.app.database.db, {
      id: randomUUID(),
      toolset: 'billing-kit',
      severity: 'major',
      title: 'billing-kit backlog',
      status: 'resolved',
      source: 'test',
      eventIds: [],
      details: {},
      openedAt: opened,
      resolvedAt: resolved,
    });
  }
  // The classifier's window is the last 15 minutes by receive time: a minute on, it still holds all of it.
  clock.advance(MINUTE);
}
