import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertIncident } from '../../domains/empire/incidents/repository.ts';
import { empireForecasts } from '../../domains/empire/schema.ts';
import { ManualClock } from '../../platform/clock.ts';
import { readDataMessage } from '../../platform/llm/untrusted.ts';
import { runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { ingestEmpire, tokenBoundTo } from '../../../test/helpers/empire.ts';
import { CHROME_UA, createTenant, GPTBOT_UA, signedIngest } from '../../../test/helpers/honeypot.ts';

// AI triage end to end through the HTTP API with the BUILT-IN engine (docs/triage/README.md; issue 17):
// datasets with known answers for the incident classifier (a forecast rate spike, a honeypot liar
// flood, steady toolsets that stay quiet), duplicate and stub passes; the proposal lists and their
// paging; decisions (an incident opened with its seeded postmortem, a rejection, 409/404, audit
// rows); the investigation proposer (cluster-level and focal, a saved view); the rule proposer on
// a hand-built hourly history whose backtest is computed here by hand, decide and bulk-accept;
// replay envelopes (determinism, tampering); postmortem auto-drafts; the triage-pass job; and the
// reach of a token bound to one toolset. One app, one timeline: each block builds on the ones
// before it, and the ManualClock only moves forward.

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** On the hour, so the rule proposer's history ends exactly here (events sent "now" fall outside it). */
const T0 = new Date('2026-11-26T10:00:00.000Z');
const clock = new ManualClock(T0);
/** When the probe-kit chain happened (it is received at T0). */
const P_TS = ['2026-11-26T09:57:00.000Z', '2026-11-26T09:58:00.000Z', '2026-11-26T09:59:00.000Z'] as const;
const STUB_RUN_ID = '00000000-0000-4000-8000-000000000000';
/** The five postmortem sections, sorted (a jsonb column keeps no key order). */
const SECTIONS = ['actionItems', 'impact', 'rootCause', 'summary', 'timeline'];
const WEBHOOK = [{ kind: 'webhook', url: 'https://alerts.example.com/x', secret: 'triage-hook-secret-0123456789' }];

let t: TestApp;

/** Event ids the dataset produced, by role. */
const ids = {
  crawler: [] as string[],
  steady: [] as string[],
  liar: [] as string[],
  /** probe-kit: p-1 → p-2 → p-3 by causedBy. */
  p1: '',
  p2: '',
  p3: '',
};
/** What the blocks hand on to each other. */
const state = {
  triageRunId: '',
  duplicateRunId: '',
  windowStart: '',
  windowEnd: '',
  spikeId: '',
  floodId: '',
  openedIncidentId: '',
  focalProposalId: '',
  billingRuleId: '',
  ledgerRuleId: '',
  rulesRunId: '',
  jobRunId: '',
};

/** A response body: its values are checked one by one below. */
type Json = Record<string, any>;

async function call(method: 'GET' | 'POST', path: string, payload?: unknown, token?: string) {
  return t.call({ method, url: `${V1}/${path}`, ...(payload === undefined ? {} : { payload: payload as object }), ...(token === undefined ? {} : { token }) });
}
async function ok(method: 'GET' | 'POST', path: string, payload?: unknown, token?: string): Promise<Json> {
  const res = await call(method, path, payload, token);
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(200);
  return res.json();
}
async function fails(status: number, method: 'GET' | 'POST', path: string, payload?: unknown, token?: string): Promise<Json> {
  const res = await call(method, path, payload, token);
  expect(res.statusCode, `${method} ${path}: ${res.body}`).toBe(status);
  return res.json();
}
const proposalsOf = async (query: string, token?: string) => (await ok('GET', `empire/triage/proposals?${query}`, undefined, token)).proposals as Json[];
const proposal = async (id: string) => (await ok('GET', `empire/triage/proposals/${id}`)).proposal as Json;
const sorted = (list: readonly string[]) => [...list].sort();

async function sendEmpire(toolset: string, events: Record<string, unknown>[]): Promise<string[]> {
  const res = await ingestEmpire(t, toolset, events as never);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().accepted).toBe(events.length);
  return res.json().results.map((r: { eventId: string }) => r.eventId);
}

async function forecast(toolset: string, baselineMean: number) {
  await t.app.database.db.insert(empireForecasts).values({
    id: randomUUID(),
    runId: randomUUID(),
    toolset,
    score: 0.1,
    level: 'none',
    direction: 'steady',
    details: { z: 0, recentMean: baselineMean, baselineMean, scale: 1, windowStart: new Date(T0.getTime() - 169 * HOUR).toISOString(), windowEnd: new Date(T0.getTime() - HOUR).toISOString() },
    computedAt: new Date(T0.getTime() - 5 * MINUTE),
  });
}

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '5' } });
  // Forecasts: crawler-lab expects 40 an hour (10 in 15 minutes), steady-kit 60 an hour (15).
  await forecast('crawler-lab', 40);
  await forecast('steady-kit', 60);

  // Everything below is received at T0.
  ids.crawler = await sendEmpire('crawler-lab', Array.from({ length: 60 }, (_, i) => ({ id: `c-${i}`, eventType: 'crawl.page', tenant: 'acme' })));
  ids.steady = await sendEmpire('steady-kit', Array.from({ length: 25 }, (_, i) => ({ id: `s-${i}`, eventType: 'sync.run', tenant: 'globex' })));
  [ids.p1, ids.p2, ids.p3] = (await sendEmpire('probe-kit', [
    { id: 'p-1', eventType: 'probe.sent', tenant: 'acme', ts: P_TS[0] },
    { id: 'p-2', eventType: 'probe.answered', tenant: 'acme', causedBy: 'p-1', ts: P_TS[1] },
    { id: 'p-3', eventType: 'probe.scored', tenant: 'acme', causedBy: 'p-2', ts: P_TS[2] },
  ])) as [string, string, string];

  // A honeypot tenant: 60 GPTBot user agents from an address outside OpenAI's ranges (LIAR) and 10 browsers.
  const secret = await createTenant(t, 'shop-eu');
  const events = [
    ...Array.from({ length: 60 }, () => ({ path: '/honeypot/topics/a', ua: GPTBOT_UA, ip: '203.0.113.50' })),
    ...Array.from({ length: 10 }, (_, i) => ({ path: '/q/x', ua: CHROME_UA, ip: `198.51.100.${i + 1}` })),
  ];
  const res = await signedIngest(t, { slug: 'shop-eu', secret, unixSeconds: Math.floor(T0.getTime() / 1000), body: { events } });
  expect(res.statusCode, res.body).toBe(200);
  const stored = res.json().events as { eventId: string; uaClass: string }[];
  ids.liar = stored.filter((e) => e.uaClass === 'LIAR').map((e) => e.eventId);
  expect(ids.liar).toHaveLength(60);

  // The window [T0 − 14 min, T0 + 1 min) holds all of it (windows are half-open by receive time).
  clock.set(new Date(T0.getTime() + MINUTE));
});
afterAll(async () => t?.close());

describe('the incident classifier (POST empire/triage/proposals)', () => {
  it('proposes a major liar flood and a minor rate spike, nothing for the steady toolsets', async () => {
    const run = await ok('POST', 'empire/triage/proposals', {});
    expect(run).toMatchObject({
      ok: true,
      proposalCount: 2,
      autoRejected: 0,
      windowStart: '2026-11-26T09:46:00.000Z',
      windowEnd: '2026-11-26T10:01:00.000Z',
      agentVersion: 'incident-classifier@1.1.0',
    });
    expect(run.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.runId).not.toBe(STUB_RUN_ID);
    Object.assign(state, { triageRunId: run.runId, windowStart: run.windowStart, windowEnd: run.windowEnd });

    const pending = await proposalsOf('kind=incident');
    expect(pending.map((p) => [p.toolset, p.payload.signal, p.payload.severity])).toEqual(
      // Newest first, and within one run in id order: compare as a set.
      expect.arrayContaining([
        ['crawler-lab', 'rate-spike', 'minor'],
        ['honeypot', 'liar-flood', 'major'],
      ]),
    );
    expect(pending).toHaveLength(2);
    const spike = pending.find((p) => p.payload.signal === 'rate-spike')!;
    const flood = pending.find((p) => p.payload.signal === 'liar-flood')!;
    state.spikeId = spike.id;
    state.floodId = flood.id;

    // 60 events against 10 expected: 6×, under the 10× that makes a spike major.
    expect(spike).toMatchObject({
      kind: 'incident',
      status: 'pending',
      toolset: 'crawler-lab',
      agent: 'incident-classifier',
      agentVersion: 'incident-classifier@1.1.0',
      runId: run.runId,
      title: 'Rate spike: crawler-lab — 60 events in 15 min, 6× expected',
      windowStart: run.windowStart,
      windowEnd: run.windowEnd,
      autoRejectReason: null,
      backtest: null,
      decidedAt: null,
    });
    expect(spike.payload.summary).toBe(
      'crawler-lab received 60 events in 15 minutes against about 10 expected from its forecast baseline of 40 an hour (6×). 1 tenant; top event types: crawl.page (60).',
    );
    // The 20 newest events of the window, every one an event of crawler-lab sent in it.
    expect(spike.evidenceEventIds).toHaveLength(20);
    expect(ids.crawler).toEqual(expect.arrayContaining(spike.evidenceEventIds));
    expect(spike.payload.evidenceEventIds).toEqual(spike.evidenceEventIds);
    expect(sorted(Object.keys(spike.payload.postmortemDraft.sections))).toEqual(SECTIONS);

    // 60 LIAR of 70 events; the fingerprint crossed the tarpit threshold (5), so the flood is major.
    expect(flood).toMatchObject({ toolset: 'honeypot', status: 'pending', runId: run.runId });
    expect(flood.title).toMatch(/^Liar flood: shop-eu — 60 LIAR events in 15 min, 1 tarpit$/);
    expect(flood.payload.summary).toMatch(/^Honeypot tenant shop-eu saw 60 LIAR events out of 70 \(85\.7%\) in 15 minutes; 1 tarpit triggered; top liar fingerprint \S+ \(60\)\.$/);
    expect(flood.evidenceEventIds).toHaveLength(20);
    expect(ids.liar).toEqual(expect.arrayContaining(flood.evidenceEventIds));
  });

  it('auto-rejects the same proposals as duplicate-of-pending on a second pass', async () => {
    const run = await ok('POST', 'empire/triage/proposals', { windowMinutes: 15 });
    expect(run).toMatchObject({ ok: true, proposalCount: 0, autoRejected: 2, windowStart: state.windowStart, windowEnd: state.windowEnd });
    state.duplicateRunId = run.runId;
    const rejected = (await proposalsOf('status=auto-rejected')).filter((p) => p.runId === run.runId);
    expect(rejected).toHaveLength(2);
    for (const p of rejected) {
      const original = p.payload.signal === 'rate-spike' ? state.spikeId : state.floodId;
      expect(p.autoRejectReason).toBe(`duplicate-of-pending: proposal ${original} is pending for the same toolset and signal`);
      expect(p.evidenceEventIds).toEqual((await proposal(original)).evidenceEventIds);
    }
    // The originals are untouched.
    expect(sorted((await proposalsOf('')).map((p) => p.id))).toEqual(sorted([state.spikeId, state.floodId]));
  });

  it('answers a stub pass with the stub run id and stores nothing', async () => {
    const before = (await proposalsOf('status=all')).length;
    const run = await ok('POST', 'empire/triage/proposals', { stub: true });
    expect(run).toMatchObject({ ok: true, runId: STUB_RUN_ID, proposalCount: 0, autoRejected: 0, agentVersion: 'incident-classifier@1.1.0', windowEnd: state.windowEnd });
    expect((await proposalsOf('status=all')).length).toBe(before);
    await fails(404, 'GET', `empire/triage/replay/${STUB_RUN_ID}`);
  });

  it('refuses a window outside 1 to 1440 minutes', async () => {
    expect((await fails(400, 'POST', 'empire/triage/proposals', { windowMinutes: 0 })).schema).toBe('svc-error.v1');
    await fails(400, 'POST', 'empire/triage/proposals', { windowMinutes: 1441 });
    await fails(400, 'POST', 'empire/triage/proposals', { windowMinutes: 15, extra: 1 });
  });
});

describe('proposal lists (GET empire/triage/proposals, investigations, rules, proposals/{id})', () => {
  it('lists pending by default, every status with status=all, and filters by kind and toolset', async () => {
    expect(sorted((await proposalsOf('')).map((p) => p.id))).toEqual(sorted([state.spikeId, state.floodId]));
    const all = await proposalsOf('status=all');
    expect(all).toHaveLength(4);
    expect(all.filter((p) => p.status === 'auto-rejected')).toHaveLength(2);
    expect(await proposalsOf('kind=investigation&status=all')).toEqual([]);
    expect((await proposalsOf('status=all&toolset=honeypot')).map((p) => p.payload.signal)).toEqual(['liar-flood', 'liar-flood']);
    expect((await ok('GET', 'empire/triage/investigations')).proposals).toEqual([]);
    expect((await ok('GET', 'empire/triage/rules?status=all')).proposals).toEqual([]);
  });

  it('pages newest first with limit and cursor, through rows that share one creation time', async () => {
    const all = await proposalsOf('status=all&kind=incident');
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const body: Json = await ok('GET', `empire/triage/proposals?status=all&kind=incident&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(body.proposals.length).toBeLessThanOrEqual(1);
      seen.push(...body.proposals.map((p: Json) => p.id));
      cursor = body.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(all.map((p) => p.id));
    expect(new Set(seen).size).toBe(4);
  });

  it('reads one proposal; 404 for an unknown or malformed id', async () => {
    const spike = await proposal(state.spikeId);
    expect(spike).toMatchObject({ id: state.spikeId, kind: 'incident', status: 'pending', toolset: 'crawler-lab' });
    await fails(404, 'GET', `empire/triage/proposals/${randomUUID()}`);
    await fails(404, 'GET', 'empire/triage/proposals/not-a-uuid');
  });

  it('answers 400 for values outside the enums', async () => {
    for (const query of ['status=bogus', 'kind=bogus', 'kind=alert_rule', 'limit=0', 'limit=201', 'cursor=yesterday']) {
      expect((await fails(400, 'GET', `empire/triage/proposals?${query}`)).schema, query).toBe('svc-error.v1');
    }
    await fails(400, 'GET', 'empire/triage/investigations?status=done');
    await fails(400, 'GET', 'empire/triage/rules?status=open');
  });
});

describe('decisions (POST empire/triage/decide)', () => {
  it('accepting an incident proposal opens the incident (source triage) and seeds its postmortem', async () => {
    const spike = await proposal(state.spikeId);
    const decided = await ok('POST', 'empire/triage/decide', { id: state.spikeId, accept: true, notes: 'Confirmed with the crawler owners.' });
    expect(decided).toMatchObject({ ok: true, id: state.spikeId, decision: 'accepted', createdSavedViewId: null, createdAlertRuleId: null });
    state.openedIncidentId = decided.openedIncidentId;
    expect(state.openedIncidentId).toMatch(/^[0-9a-f-]{36}$/);

    const { incident } = await ok('GET', `empire/incidents/${state.openedIncidentId}`);
    expect(incident).toMatchObject({
      id: state.openedIncidentId,
      toolset: 'crawler-lab',
      severity: 'minor',
      status: 'open',
      source: 'triage',
      title: spike.title,
      eventIds: spike.evidenceEventIds,
      openedAt: clock.now().toISOString(),
      resolvedAt: null,
    });
    expect(incident.details).toMatchObject({ proposalId: state.spikeId, runId: state.triageRunId, signal: 'rate-spike', agentVersion: 'incident-classifier@1.1.0' });

    const pm = await ok('GET', `empire/incidents/${state.openedIncidentId}/postmortem`);
    expect(pm.incidentId).toBe(state.openedIncidentId);
    expect(pm.postmortem).toMatchObject({ source: 'proposal', runId: state.triageRunId, strippedEventIds: [] });
    expect(pm.postmortem.draft).toEqual(spike.payload.postmortemDraft);

    expect(await proposal(state.spikeId)).toMatchObject({ status: 'accepted', openedIncidentId: state.openedIncidentId, decisionNotes: 'Confirmed with the crawler owners.', decidedAt: clock.now().toISOString() });
  });

  it('rejecting records the decision and creates nothing', async () => {
    const decided = await ok('POST', 'empire/triage/decide', { id: state.floodId, accept: false });
    expect(decided).toEqual({ schema: 'svc-triage-decide.v1', generatedAt: clock.now().toISOString(), ok: true, id: state.floodId, decision: 'rejected', openedIncidentId: null, createdSavedViewId: null, createdAlertRuleId: null });
    expect((await proposal(state.floodId)).status).toBe('rejected');
    expect((await ok('GET', 'empire/incidents?toolset=honeypot')).incidents).toEqual([]);
  });

  it('refuses to decide a decided proposal again (409) and answers 404 for an unknown one', async () => {
    expect((await fails(409, 'POST', 'empire/triage/decide', { id: state.spikeId, accept: false })).reason).toBe('conflict');
    expect((await fails(409, 'POST', 'empire/triage/decide', { id: state.floodId, accept: true })).reason).toBe('conflict');
    await fails(404, 'POST', 'empire/triage/decide', { id: randomUUID(), accept: true });
    await fails(404, 'POST', 'empire/triage/decide', { id: 'nope', accept: false });
    // Nothing changed: one incident, still the accepted one.
    expect((await proposal(state.spikeId)).status).toBe('accepted');
    expect((await ok('GET', 'empire/incidents?toolset=crawler-lab')).incidents.map((i: Json) => i.id)).toEqual([state.openedIncidentId]);
  });

  it('audits each decision and the incident it opened', async () => {
    const decisions = (await ok('GET', 'honeypot/ops/audit?verb=triage.decide')).rows as Json[];
    expect(sorted(decisions.map((r) => r.target))).toEqual(sorted([`triage-proposal:${state.spikeId}`, `triage-proposal:${state.floodId}`]));
    const accepted = decisions.find((r) => r.target === `triage-proposal:${state.spikeId}`)!;
    expect(accepted).toMatchObject({ actor: 'admin', before: { status: 'pending', kind: 'incident' }, after: { status: 'accepted', openedIncidentId: state.openedIncidentId } });
    const opened = (await ok('GET', 'honeypot/ops/audit?verb=empire-incident.open')).rows as Json[];
    expect(opened.map((r) => r.target)).toEqual([`empire-incident:${state.openedIncidentId}`]);
    const seeded = (await ok('GET', 'honeypot/ops/audit?verb=empire-incident.postmortem')).rows as Json[];
    expect(seeded.map((r) => [r.target, r.after.source])).toEqual([[`empire-incident:${state.openedIncidentId}`, 'proposal']]);
  });
});

describe('the investigation proposer (POST empire/triage/investigations)', () => {
  it('proposes cluster-level views: the LIAR tenant and the surging toolset', async () => {
    const run = await ok('POST', 'empire/triage/investigations', {});
    expect(run).toMatchObject({ ok: true, proposalCount: 2, autoRejected: 0, focalEventId: null, windowStart: state.windowStart, windowEnd: state.windowEnd });
    const views = (await ok('GET', 'empire/triage/investigations')).proposals as Json[];
    // At most three cluster-level views; this window has two stories (no tenant reaches 3 toolsets).
    expect(views).toHaveLength(2);
    const byToolset = Object.fromEntries(views.map((v) => [v.toolset, v]));
    expect(byToolset['honeypot']!.payload).toMatchObject({
      name: 'LIAR clients at shop-eu: 60 events',
      filters: { toolset: 'honeypot', tenant: 'shop-eu', eventType: null, uaClass: 'LIAR', fingerprintId: null, focalEventId: null, from: state.windowStart, to: state.windowEnd },
    });
    expect(byToolset['crawler-lab']!.payload).toMatchObject({
      name: 'crawler-lab: crawl.page surge (6× expected)',
      filters: { toolset: 'crawler-lab', tenant: null, eventType: 'crawl.page', uaClass: null, fingerprintId: null, focalEventId: null, from: state.windowStart, to: state.windowEnd },
    });
    for (const v of views) {
      expect(v.payload.rationale).toHaveLength(3);
      expect(v.agentVersion).toBe('investigation-proposer@1.1.0');
    }
    expect(ids.liar).toEqual(expect.arrayContaining(byToolset['honeypot']!.evidenceEventIds));
    expect(ids.crawler).toEqual(expect.arrayContaining(byToolset['crawler-lab']!.evidenceEventIds));
  });

  it('narrows a focal run to exactly one view of the event and its lineage', async () => {
    const run = await ok('POST', 'empire/triage/investigations', { focalEventId: ids.p2.toUpperCase() });
    expect(run).toMatchObject({ ok: true, proposalCount: 1, autoRejected: 0, focalEventId: ids.p2 });
    const mine = (await ok('GET', 'empire/triage/investigations')).proposals.filter((p: Json) => p.runId === run.runId) as Json[];
    expect(mine).toHaveLength(1);
    const focal = mine[0]!;
    state.focalProposalId = focal.id;
    expect(focal).toMatchObject({ toolset: 'probe-kit', focalEventId: ids.p2, status: 'pending' });
    expect(focal.payload.filters).toEqual({ toolset: 'probe-kit', tenant: 'acme', eventType: 'probe.answered', uaClass: null, fingerprintId: null, focalEventId: ids.p2, from: state.windowStart, to: state.windowEnd });
    expect(sorted(focal.evidenceEventIds)).toEqual(sorted([ids.p1, ids.p2, ids.p3]));
    expect(focal.payload.rationale[1]).toBe(`Lineage: 1 upstream and 1 downstream events across 1 toolset (probe-kit), from ${P_TS[0]} to ${P_TS[2]}.`);
  });

  it('answers 404 for an unknown focal event, and a stub with the stub run id', async () => {
    await fails(404, 'POST', 'empire/triage/investigations', { focalEventId: randomUUID() });
    await fails(404, 'POST', 'empire/triage/investigations', { focalEventId: 'p-2' });
    expect(await ok('POST', 'empire/triage/investigations', { stub: true })).toMatchObject({ runId: STUB_RUN_ID, proposalCount: 0 });
  });

  it('accepting the focal view creates a saved view with its filters and three bullets', async () => {
    const focal = await proposal(state.focalProposalId);
    const decided = await ok('POST', 'empire/triage/decide', { id: state.focalProposalId, accept: true });
    expect(decided).toMatchObject({ decision: 'accepted', openedIncidentId: null, createdAlertRuleId: null });
    const viewId = decided.createdSavedViewId as string;
    expect(viewId).toMatch(/^[0-9a-f-]{36}$/);
    const listed = (await ok('GET', 'empire/saved-views')).views as Json[];
    expect(listed.map((v) => v.id)).toEqual([viewId]);
    const { view } = await ok('GET', `empire/saved-views/${viewId}`);
    expect(view).toMatchObject({ id: viewId, name: focal.payload.name, toolset: 'probe-kit', proposalId: state.focalProposalId, filters: focal.payload.filters });
    expect(view.rationale).toEqual(focal.payload.rationale);
    expect(view.rationale).toHaveLength(3);
    await fails(404, 'GET', `empire/saved-views/${randomUUID()}`);
  });
});

describe('the rule proposer (POST empire/triage/rules) and rule decisions', () => {
  // The history ends at T0 (the current hour is left out) and starts 7 days before it.
  const from = T0.getTime() - 7 * 24 * HOUR;
  const at = (hour: number, minutes = 0) => new Date(from + hour * HOUR + minutes * MINUTE);
  const burst = (prefix: string, hour: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${hour}-${i}`, eventType: 'job.done', ts: new Date(at(hour, 10).getTime() + i * 1000).toISOString() }));
  const incident = async (toolset: string, opened: Date, resolved: Date) => {
    const id = randomUUID();
    await insertIncident(t.app.database.db, { id, toolset, severity: 'major', title: `${toolset} backlog`, status: 'resolved', source: 'test', eventIds: [], details: {}, openedAt: opened, resolvedAt: resolved });
    return id;
  };
  let incidentA = '';

  beforeAll(async () => {
    // billing-kit: a false alarm of 45 at hour 20; 40 at hour 57, before incident A (opened 60:30, resolved 62:00);
    // 35 at hour 121, while incident B (opened 120:30, resolved 123:00) was open. Every other hour 0.
    await sendEmpire('billing-kit', [...burst('b', 20, 45), ...burst('b', 57, 40), ...burst('b', 121, 35)]);
    incidentA = await incident('billing-kit', at(60, 30), at(62));
    await incident('billing-kit', at(120, 30), at(123));
    // ledger-kit: 15 at hour 80, before incident C (opened 81:30, resolved 82:00).
    await sendEmpire('ledger-kit', burst('l', 80, 15));
    await incident('ledger-kit', at(81, 30), at(82));
  });

  it('proposes one backtested empire_count_gte rule per toolset with incidents, with the backtest computed by hand', async () => {
    const run = await ok('POST', 'empire/triage/rules', { lookbackDays: 7 });
    expect(run).toMatchObject({ ok: true, proposalCount: 2, autoRejected: 0, lookbackDays: 7, agentVersion: 'rule-proposer@1.1.0' });
    state.rulesRunId = run.runId;
    const rules = (await ok('GET', 'empire/triage/rules')).proposals as Json[];
    expect(rules.map((r) => r.toolset).sort()).toEqual(['billing-kit', 'ledger-kit']);
    const billing = rules.find((r) => r.toolset === 'billing-kit')!;
    const ledger = rules.find((r) => r.toolset === 'ledger-kit')!;
    state.billingRuleId = billing.id;
    state.ledgerRuleId = ledger.id;

    // billing-kit candidates: 40 (busiest hour in the 24 h before A) and 46 (one above the busiest of the
    // 113 normal hours, 45; the 95th/99th percentiles are 0 → 1, under minCount). 46 never fires. 40 fires
    // at the end of hour 20 (no incident within 24 h: FP) and of hour 57 (58:00, 2 h 30 min before A: TP);
    // hour 121's 35 stays under it, so B is missed.
    expect(billing).toMatchObject({ kind: 'alert-rule', status: 'pending', agentVersion: 'rule-proposer@1.1.0', title: 'billing-kit: ≥ 40 events an hour', evidenceEventIds: [] });
    expect(billing.payload.predicate).toEqual({ kind: 'empire_count_gte', count: 40, windowMinutes: 60 });
    expect(billing.backtest).toEqual({ method: 'hourly-count', lookbackDays: 7, TP: 1, FP: 1, meanLeadTimeSec: 9000, incidents: 2, caught: 1, firings: 2 });
    expect(billing.payload.rationale).toBe(
      `The threshold is the busiest hour (40 events) in the 24 h before incident ${incidentA} opened. Over the last 7 days it would have fired 2 times (1 TP, 1 FP) and caught 1 of 2 resolved incidents, on average 2 h 30 min before the incident opened.`,
    );
    // ledger-kit: 15 fires at the end of hour 80 (81:00), 30 minutes before C.
    expect(ledger.payload.predicate).toEqual({ kind: 'empire_count_gte', count: 15, windowMinutes: 60 });
    expect(ledger.backtest).toEqual({ method: 'hourly-count', lookbackDays: 7, TP: 1, FP: 0, meanLeadTimeSec: 1800, incidents: 1, caught: 1, firings: 1 });
    expect(billing.windowStart).toBe(new Date(from).toISOString());
    expect(billing.windowEnd).toBe(T0.toISOString());
  });

  it('refuses to accept a rule without destinations, then creates the alert rule with them', async () => {
    const refused = await fails(400, 'POST', 'empire/triage/decide', { id: state.billingRuleId, accept: true });
    expect(refused.reason).toBe('destinations-required');
    expect((await proposal(state.billingRuleId)).status).toBe('pending');
    await fails(400, 'POST', 'empire/triage/decide', { id: state.billingRuleId, accept: true, destinations: [{ kind: 'webhook', url: 'https://alerts.example.com/x', secret: 'short' }] });

    const decided = await ok('POST', 'empire/triage/decide', { id: state.billingRuleId, accept: true, destinations: WEBHOOK });
    expect(decided).toMatchObject({ decision: 'accepted', openedIncidentId: null, createdSavedViewId: null });
    const ruleId = decided.createdAlertRuleId as string;
    const listed = await ok('GET', 'empire/billing-kit/alerts');
    expect(listed.rules).toHaveLength(1);
    expect(listed.rules[0]).toMatchObject({ id: ruleId, name: 'billing-kit: ≥ 40 events an hour', enabled: true, predicate: { kind: 'empire_count_gte', count: 40, windowMinutes: 60 } });
    expect(JSON.stringify(listed.rules[0])).not.toContain(WEBHOOK[0]!.secret);
    expect(await proposal(state.billingRuleId)).toMatchObject({ status: 'accepted', createdAlertRuleId: ruleId });
  });

  it('bulk-accepts the pending rule and reports every other id with its reason', async () => {
    const unknown = randomUUID();
    const body = await ok('POST', 'empire/triage/rules/bulk-accept', { ids: [state.ledgerRuleId, state.billingRuleId, unknown, 'not-a-uuid', state.spikeId], destinations: WEBHOOK });
    expect(body.acceptedCount).toBe(1);
    expect(body.results.map((r: Json) => [r.id, r.ok, r.reason])).toEqual([
      [state.ledgerRuleId, true, null],
      [state.billingRuleId, false, 'conflict'],
      [unknown, false, 'not-found'],
      ['not-a-uuid', false, 'not-found'],
      [state.spikeId, false, 'not-a-rule-proposal'],
    ]);
    const created = body.results[0].createdAlertRuleId as string;
    expect((await ok('GET', 'empire/ledger-kit/alerts')).rules.map((r: Json) => [r.id, r.predicate])).toEqual([[created, { kind: 'empire_count_gte', count: 15, windowMinutes: 60 }]]);
    expect((await proposal(state.spikeId)).status).toBe('accepted');
    expect((await ok('GET', 'empire/triage/rules')).proposals).toEqual([]);
  });

  it('proposes nothing once the rules exist', async () => {
    expect(await ok('POST', 'empire/triage/rules', { lookbackDays: 7 })).toMatchObject({ proposalCount: 0, autoRejected: 0 });
    expect(await ok('POST', 'empire/triage/rules', { stub: true })).toMatchObject({ runId: STUB_RUN_ID, proposalCount: 0, lookbackDays: 30 });
    await fails(400, 'POST', 'empire/triage/rules', { lookbackDays: 91 });
  });
});

describe('replay (GET empire/triage/replay/{runId})', () => {
  it('returns the same bytes on every fetch, with a digest that still matches', async () => {
    const first = await call('GET', `empire/triage/replay/${state.triageRunId}`);
    clock.advance(1000);
    const second = await call('GET', `empire/triage/replay/${state.triageRunId}`);
    expect(first.statusCode).toBe(200);
    const strip = (body: string) => {
      const { generatedAt: _, ...rest } = JSON.parse(body) as Json;
      return JSON.stringify(rest);
    };
    expect(second.json().generatedAt).not.toBe(first.json().generatedAt);
    expect(strip(second.body)).toBe(strip(first.body));

    const replay = first.json();
    expect(replay).toMatchObject({
      runId: state.triageRunId,
      matches: true,
      schemaVersion: 1,
      agent: 'incident-classifier',
      agentVersion: 'incident-classifier@1.1.0',
      engine: 'builtin',
      model: 'builtin',
      outcome: 'ok',
      errorText: null,
      promptTokens: 0,
      completionTokens: 0,
    });
    expect(replay.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(replay.recomputedDigest).toBe(replay.digest);
    expect(replay.userMessageBytes).toBe(Buffer.byteLength(replay.userMessage, 'utf8'));
    expect(replay.llmResponseBytes).toBe(Buffer.byteLength(replay.llmResponse, 'utf8'));
    expect(sorted(replay.proposalIds)).toEqual(sorted([state.spikeId, state.floodId]));
    // What the agent read: the window and the toolsets (crawler-lab's 60, steady-kit's 25) and shop-eu.
    // The agent read its window as a data block (platform/llm/untrusted.ts).
    const message = readDataMessage(replay.userMessage) as Json;
    expect(message).toMatchObject({ windowStart: state.windowStart, windowEnd: state.windowEnd, windowMinutes: 15 });
    expect(message.toolsets.map((x: Json) => [x.toolset, x.events])).toEqual([
      ['crawler-lab', 60],
      ['probe-kit', 3],
      ['steady-kit', 25],
    ]);
    expect(message.honeypot.map((h: Json) => [h.tenant, h.events, h.liarEvents])).toEqual([['shop-eu', 70, 60]]);
    expect(JSON.parse(replay.llmResponse).proposals).toHaveLength(2);
  });

  it('lists the proposals of the run, auto-rejected ones included', async () => {
    const replay = await ok('GET', `empire/triage/replay/${state.duplicateRunId}`);
    const ofRun = (await proposalsOf('status=all&kind=incident')).filter((p) => p.runId === state.duplicateRunId).map((p) => p.id);
    expect(sorted(replay.proposalIds)).toEqual(sorted(ofRun));
    expect(ofRun).toHaveLength(2);
  });

  it('answers 404 for an unknown run', async () => {
    await fails(404, 'GET', `empire/triage/replay/${randomUUID()}`);
    await fails(404, 'GET', 'empire/triage/replay/not-a-run');
  });

  it('no longer matches once a stored part is changed behind its back', async () => {
    const before = await ok('GET', `empire/triage/replay/${state.duplicateRunId}`);
    await t.app.database.db.execute(sql`UPDATE triage_runs SET model_text = ${'{"proposals":[]}'} WHERE id = ${state.duplicateRunId}::uuid`);
    const after = await ok('GET', `empire/triage/replay/${state.duplicateRunId}`);
    expect(after.matches).toBe(false);
    expect(after.digest).toBe(before.digest);
    expect(after.recomputedDigest).not.toBe(before.digest);
    expect(after.llmResponse).toBe('{"proposals":[]}');
  });
});

describe('postmortem auto-drafts (POST empire/incidents/{id}/auto-draft)', () => {
  let incidentId = '';
  beforeAll(async () => {
    incidentId = randomUUID();
    // The incident names only the last event of the chain; its lineage holds all three.
    await insertIncident(t.app.database.db, {
      id: incidentId,
      toolset: 'probe-kit',
      severity: 'major',
      title: 'Probe scores off',
      status: 'open',
      source: 'test',
      eventIds: [ids.p3],
      details: {},
      openedAt: new Date(T0.getTime() + 30_000),
      resolvedAt: null,
    });
  });

  it('drafts five sections citing only the lineage, without persisting', async () => {
    const body = await ok('POST', `empire/incidents/${incidentId}/auto-draft`, {});
    expect(body).toMatchObject({ ok: true, id: incidentId, strippedEventIds: [], persisted: false });
    expect(body.runId).not.toBe(STUB_RUN_ID);
    expect(sorted(Object.keys(body.draft.sections))).toEqual(SECTIONS);
    for (const section of Object.values(body.draft.sections) as Json[][]) expect(section.length).toBeGreaterThan(0);
    expect(body.draft.title).toBe('Postmortem: Probe scores off');
    expect(sorted(body.citedEventIds)).toEqual(sorted([ids.p1, ids.p2, ids.p3]));
    expect(JSON.parse(body.rawDraft)).toEqual(body.draft);
    expect((await ok('GET', `empire/incidents/${incidentId}/postmortem`)).postmortem).toBeNull();
    const replay = await ok('GET', `empire/triage/replay/${body.runId}`);
    expect(replay).toMatchObject({ agent: 'postmortem-writer', agentVersion: 'postmortem-writer@1.1.0', engine: 'builtin', matches: true, proposalIds: [] });
  });

  it('traces the causedBy chain: p-1 is the one probable origin and both other events descend from it', async () => {
    const { draft } = await ok('POST', `empire/incidents/${incidentId}/auto-draft`, {});
    expect(draft.sections.rootCause).toEqual([
      {
        text: `Probable origin: probe.sent in probe-kit from tenant acme at ${P_TS[0]}, the earliest event of the lineage that no other lineage event caused; 2 of the other 2 events descend from it.`,
        eventIds: [ids.p1],
      },
      { text: 'This is inferred from causedBy links and timing; confirm it against the producer before closing the postmortem.', eventIds: [] },
    ]);
  });

  it('stores the draft with persist: true', async () => {
    const body = await ok('POST', `empire/incidents/${incidentId}/auto-draft`, { persist: true, operatorNotes: 'Scorer deployed at 09:55.' });
    expect(body.persisted).toBe(true);
    expect(body.draft.sections.actionItems[0]).toEqual({ text: 'Operator notes: Scorer deployed at 09:55.', eventIds: [] });
    const { postmortem } = await ok('GET', `empire/incidents/${incidentId}/postmortem`);
    expect(postmortem).toMatchObject({ source: 'auto-draft', runId: body.runId, strippedEventIds: [] });
    expect(postmortem.draft).toEqual(body.draft);
  });

  it('answers a stub with an empty draft and the stub run id; 404 for an unknown incident', async () => {
    const stub = await ok('POST', `empire/incidents/${incidentId}/auto-draft`, { stub: true, persist: true });
    expect(stub).toMatchObject({ runId: STUB_RUN_ID, rawDraft: '', citedEventIds: [], strippedEventIds: [], persisted: false });
    expect(stub.draft).toEqual({ title: 'Postmortem: Probe scores off', sections: { summary: [], timeline: [], impact: [], rootCause: [], actionItems: [] } });
    expect((await ok('GET', `empire/incidents/${incidentId}/postmortem`)).postmortem.source).toBe('auto-draft');
    await fails(404, 'POST', `empire/incidents/${randomUUID()}/auto-draft`, {});
    await fails(404, 'GET', `empire/incidents/${randomUUID()}/postmortem`);
  });
});

describe('the triage-pass job (POST ops/jobs/triage-pass/run)', () => {
  it('runs the classifier over the last 15 minutes: the forecast toolsets fell silent', async () => {
    // 20 minutes on, nothing has arrived: crawler-lab expected 10 and steady-kit 15, both ≥ 10.
    clock.set(new Date(T0.getTime() + 21 * MINUTE));
    const stats = (await runJob(t, 'triage-pass')) as unknown as { triage: Json; investigations: Json };
    expect(stats.triage).toMatchObject({ ok: true, proposalCount: 2, autoRejected: 0, agentVersion: 'incident-classifier@1.1.0', windowStart: '2026-11-26T10:06:00.000Z', windowEnd: '2026-11-26T10:21:00.000Z' });
    expect(stats.investigations).toMatchObject({ ok: true, proposalCount: 0, autoRejected: 0 });
    state.jobRunId = stats.triage.runId;
    const silences = (await proposalsOf('kind=incident')).filter((p) => p.runId === state.jobRunId);
    expect(silences.map((p) => [p.toolset, p.payload.signal, p.payload.severity, p.evidenceEventIds]).sort()).toEqual([
      ['crawler-lab', 'silence', 'minor', []],
      ['steady-kit', 'silence', 'minor', []],
    ]);
    expect(silences.find((p) => p.toolset === 'steady-kit')!.title).toBe('Silence: steady-kit — 0 events in 15 min, about 15 expected');
    expect(await ok('GET', `empire/triage/replay/${state.jobRunId}`)).toMatchObject({ agent: 'incident-classifier', matches: true });
  });
});

describe('a token bound to one toolset', () => {
  let bound = '';
  beforeAll(async () => {
    bound = await tokenBoundTo(t, ['read:empire', 'write:alerts', 'read:alerts'], ['crawler-lab']);
  });

  it('lists and reads only the proposals of its toolset', async () => {
    const mine = await proposalsOf('status=all', bound);
    const all = await proposalsOf('status=all&toolset=crawler-lab');
    expect(mine.map((p) => p.id)).toEqual(all.map((p) => p.id));
    // The spike, its duplicate, the crawl.page surge investigation and the job's silence.
    expect(mine.map((p) => p.kind).sort()).toEqual(['incident', 'incident', 'incident', 'investigation']);
    expect(new Set(mine.map((p) => p.toolset))).toEqual(new Set(['crawler-lab']));
    expect((await ok('GET', `empire/triage/proposals/${state.spikeId}`, undefined, bound)).proposal.id).toBe(state.spikeId);
    await fails(404, 'GET', `empire/triage/proposals/${state.floodId}`, undefined, bound);
    expect((await ok('GET', 'empire/triage/rules?status=all', undefined, bound)).proposals).toEqual([]);
  });

  it('cannot decide a proposal of another toolset: it answers as if there were none', async () => {
    const steady = (await proposalsOf('kind=incident&toolset=steady-kit'))[0]!;
    const refused = await fails(404, 'POST', 'empire/triage/decide', { id: steady.id, accept: false }, bound);
    const unknown = randomUUID();
    expect(refused).toEqual({ ...(await fails(404, 'POST', 'empire/triage/decide', { id: unknown, accept: false }, bound)), human: `There is no triage proposal ${steady.id}.`, generatedAt: refused.generatedAt });
    expect((await proposal(steady.id)).status).toBe('pending');
    const bulk = await ok('POST', 'empire/triage/rules/bulk-accept', { ids: [state.ledgerRuleId], destinations: WEBHOOK }, bound);
    expect(bulk.acceptedCount).toBe(0);
    expect(bulk.results.map((r: Json) => r.reason)).toEqual(['not-found']);
    // Reach before kind: an incident proposal out of reach is `not-found`, not `not-a-rule-proposal`.
    const foreignIncident = await ok('POST', 'empire/triage/rules/bulk-accept', { ids: [steady.id], destinations: WEBHOOK }, bound);
    expect(foreignIncident.results.map((r: Json) => r.reason)).toEqual(['not-found']);
  });

  it('cannot start a run', async () => {
    await fails(403, 'POST', 'empire/triage/proposals', {}, bound);
    await fails(403, 'POST', 'empire/triage/investigations', {}, bound);
    await fails(403, 'POST', 'empire/triage/rules', {}, bound);
  });

  it('reads the replay of a run that read only its toolset, never of a fleet-wide run', async () => {
    await fails(404, 'GET', `empire/triage/replay/${state.triageRunId}`, undefined, bound);
    await fails(404, 'GET', `empire/triage/replay/${state.jobRunId}`, undefined, bound);
    await fails(404, 'GET', `empire/triage/replay/${state.rulesRunId}`, undefined, bound);
    const draft = await ok('POST', `empire/incidents/${state.openedIncidentId}/auto-draft`, {}, bound);
    expect((await ok('GET', `empire/triage/replay/${draft.runId}`, undefined, bound)).runId).toBe(draft.runId);
  });
});
