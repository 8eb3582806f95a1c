import { expect } from 'vitest';
import type { EmpireEvent } from '../../src/domains/empire/ingest/service.ts';
import { ManualClock } from '../../src/platform/clock.ts';
import { runJob, type TestApp, V1 } from '../helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, signWithNode } from '../helpers/empire.ts';

/**
 * The empire seen by the console's browser tests, seeded through the API: three toolsets, a
 * lineage, signed and refused events, a forecast incident, an alert rule that fired.
 */

const MINUTE = 60_000;
export const HOUR = 3_600_000;

/**
 * Half past the current hour: events sent "a few minutes ago" stay in the current hour, which the
 * forecaster does not score yet, so only the surging toolset latches an incident.
 */
export function consoleClock(): ManualClock {
  return new ManualClock(new Date(Math.floor(Date.now() / HOUR) * HOUR + 30 * MINUTE));
}

/** surge-lab's events per hour over the 168 hours before the current one (0 is the oldest). */
export const surgePerHour = (hour: number) => (hour >= 165 ? 20 : 4);
/** surge-lab's events in the overview's last 24 hours: the 23 complete hours before the current one. */
export const SURGE_EVENTS_24H = Array.from({ length: 23 }, (_, i) => surgePerHour(167 - i)).reduce((a, b) => a + b, 0);

export const CRAWL_RULE = 'Crawl seen';
export const LINEAGE_IDS = ['crawl-root', 'crawl-page-1', 'crawl-page-2', 'crawl-done'] as const;
/** Signed batches of crawler-lab besides the lineage's: with it, enough requests for an SLO badge. */
const CRAWL_BATCHES = 12;
export const CRAWL_REQUESTS = CRAWL_BATCHES + 1;
export const CRAWL_EVENTS = LINEAGE_IDS.length + CRAWL_BATCHES * 2;
const PROBE_REQUESTS = 10;

export interface EmpireSeed {
  publicKeyB64: string;
  /** eventId of each lineage event, by the toolset's own id. */
  lineage: Record<(typeof LINEAGE_IDS)[number], string>;
  incidentId: string;
  ruleId: string;
}

function eventIdsOf(body: string): Map<string, string> {
  const answer = JSON.parse(body) as { results: { id: string; eventId: string | null }[] };
  return new Map(answer.results.map((r) => [r.id, r.eventId ?? '']));
}

export async function seedEmpire(t: TestApp, clock: ManualClock): Promise<EmpireSeed> {
  const ago = (ms: number) => new Date(clock.now().getTime() - ms).toISOString();

  // A rule first: it counts only events received after it was made.
  const rule = await t.call({
    method: 'POST',
    url: `${V1}/empire/crawler-lab/alerts`,
    payload: {
      name: CRAWL_RULE,
      predicate: { kind: 'empire_count_gte', count: 1, windowMinutes: 15 },
      destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/observatory/hook', secret: 'whsec-console-test-0123456789' }],
    },
  });
  expect(rule.statusCode, rule.body).toBe(200);
  clock.advance(MINUTE);

  // crawler-lab signs everything with its registered key.
  const { privateKey, publicKeyB64 } = nodeKeyPair();
  await registerKey(t, 'crawler-lab', publicKeyB64);
  const sign = (e: EmpireEvent) => signWithNode('crawler-lab', e, privateKey);
  const chain: EmpireEvent[] = [
    { id: 'crawl-root', eventType: 'crawl.started', ts: ago(20 * MINUTE), tenant: 'docs-mirror', payload: { url: 'https://docs.example.com/' } },
    { id: 'crawl-page-1', eventType: 'crawl.page', ts: ago(19 * MINUTE), tenant: 'docs-mirror', causedBy: 'crawl-root', payload: { path: '/a' } },
    { id: 'crawl-page-2', eventType: 'crawl.page', ts: ago(18 * MINUTE), tenant: 'docs-mirror', causedBy: 'crawl-root', payload: { path: '/b' } },
    { id: 'crawl-done', eventType: 'crawl.finished', ts: ago(17 * MINUTE), tenant: 'docs-mirror', causedBy: 'crawl-page-1', payload: { pages: 2 } },
  ];
  const chained = await ingestEmpire(t, 'crawler-lab', chain.map(sign));
  expect(chained.statusCode, chained.body).toBe(200);
  const ids = eventIdsOf(chained.body);
  const lineage = Object.fromEntries(LINEAGE_IDS.map((id) => [id, ids.get(id)!])) as EmpireSeed['lineage'];
  for (let r = 0; r < CRAWL_BATCHES; r++) {
    const events = [0, 1].map((k): EmpireEvent => ({ id: `crawl-batch-${r}-${k}`, eventType: 'crawl.page', ts: ago((15 - r) * MINUTE), tenant: r % 3 === 0 ? 'acme' : 'docs-mirror' }));
    const res = await ingestEmpire(t, 'crawler-lab', events.map(sign));
    expect(JSON.parse(res.body)).toMatchObject({ accepted: 2, rejected: 0 });
  }

  // probe-kit has no key: its unsigned events are admitted in compatibility mode, its signed ones refused.
  const stranger = nodeKeyPair().privateKey;
  for (let r = 0; r < PROBE_REQUESTS; r++) {
    const events: EmpireEvent[] = [
      { id: `probe-${r}`, eventType: 'probe.sent', ts: ago(10 * MINUTE), tenant: 'acme' },
      signWithNode('probe-kit', { id: `probe-forged-${r}`, eventType: 'probe.sent', ts: ago(10 * MINUTE) }, stranger),
    ];
    const res = await ingestEmpire(t, 'probe-kit', events);
    expect(JSON.parse(res.body)).toMatchObject({ accepted: 1, rejected: 1 });
  }

  // surge-lab: a week at 4 an hour, then 20 an hour for the last 3 complete hours.
  const hourStart = Math.floor(clock.now().getTime() / HOUR) * HOUR;
  const surge: EmpireEvent[] = [];
  for (let h = 0; h < 168; h++) {
    for (let k = 0; k < surgePerHour(h); k++) surge.push({ id: `surge-${h}-${k}`, eventType: 'tick', ts: new Date(hourStart - (168 - h) * HOUR + k * 1000).toISOString() });
  }
  for (let i = 0; i < surge.length; i += 500) expect((await ingestEmpire(t, 'surge-lab', surge.slice(i, i + 500))).statusCode).toBe(200);

  // The rule reads events received up to a minute before it runs.
  clock.advance(2 * MINUTE);
  expect(await runJob(t, 'empire-alert-evaluate')).toMatchObject({ fired: 1 });

  // Three runs above 0.7 in a row open one incident.
  for (let run = 0; run < 3; run++) await runJob(t, 'forecast');
  const incidents = await t.call({ method: 'GET', url: `${V1}/empire/incidents?toolset=surge-lab` });
  const [incident] = incidents.json<{ incidents: { id: string }[] }>().incidents;
  expect(incident, incidents.body).toBeDefined();

  return { publicKeyB64, lineage, incidentId: incident!.id, ruleId: rule.json<{ id: string }>().id };
}
