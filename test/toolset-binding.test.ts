import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertIncident } from '../src/domains/empire/incidents/repository.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { closedPort } from './helpers/http-receiver.ts';
import { type Endpoint, SCOPES } from '../src/platform/http/registry.ts';
import { runJob, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey, signWithNode, tokenBoundTo } from './helpers/empire.ts';

/**
 * One meaning of toolset binding (docs/operations.md, "Security model", "Toolset binding"; issue 26
 * item 5), checked across the whole registry in the manner of test/contract.test.ts: two toolsets
 * are given data through the API (events with lineage, signed and refused, forecasts and the
 * incidents their latch opens, triage proposals, saved views and postmortems from the built-in
 * engine, alert rules, notes, keys, policies, cost records, budgets and alerts, analytics rollups,
 * the knowledge graph, a cross-toolset backup peer, and the audit facts of all those writes). Then
 * EVERY GET of the registry (and the graph query) is called with a token bound to the first toolset
 * holding every scope, with parameters that reach the data, the second toolset's names and ids
 * included. No answer may name anything of the second toolset: its name, its event, incident,
 * proposal, key, rule, note, alert or token ids, or the tenants only it uses (every text of it
 * holds the word `bravo`). Asked by id for a record of the second toolset, the answer is the one
 * for an id that does not exist; asked by its name, 403; what spans every toolset, 403.
 *
 * A GET added later fails here until it has a recipe below: the registry is walked, not listed.
 */

const OWN = 'alpha-lab';
const OTHER = 'bravo-secret-lab';
const T0 = new Date('2026-11-26T10:30:00.000Z');
const clock = new ManualClock(T0);
const DAY = T0.toISOString().slice(0, 10);
const YESTERDAY = new Date(T0.getTime() - 86_400_000).toISOString().slice(0, 10);
const EVENTS = 30;

/** What one toolset was given, with the ids the service answered. */
interface Side {
  toolset: string;
  /** `alpha` or `bravo`: every text of the side holds it. */
  word: string;
  tokenId: string;
  eventIds: string[];
  /** Its provenance keys: one from the start, one registered after the graph was materialised. */
  keyIds: string[];
  forecastIncidentId: string;
  triageIncidentId: string | null;
  proposalIds: string[];
  savedViewIds: string[];
  alertRuleId: string;
  noteId: string;
  costAlertIds: string[];
}

let t: TestApp;
let bound = '';
let endpoints: readonly Endpoint[];
let own: Side;
let other: Side;
/** A triage run id (its input spans both toolsets) and a graph materialisation id. */
let triageRunId = '';
let materialisationId = '';
/** A compliance evaluation whose observed input names both toolsets. */
let complianceEvaluationId = '';
/**
 * An incident of the own toolset that cites events of both, as triage's cross-toolset signal could
 * (written through the repository: no API call makes one on demand).
 */
let mixedIncidentId = '';
/** The seqNo of an audit fact about the other toolset. */
let otherFactSeq = '';
let analyticsMetrics: { key: string; dimensions: string[] }[] = [];
/** A signed link to an evidence bundle's manifest, as the bundle answer gave it. */
let manifestLink = { params: { bundleId: '', name: '' }, query: { expires: '', signature: '' } };

type Json = Record<string, any>;

async function ok(res: LightMyRequestResponse, what: string): Promise<Json> {
  if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const post = (url: string, payload: unknown, token?: string) => t.call({ method: 'POST', url: `${V1}${url}`, payload: payload as never, ...(token === undefined ? {} : { token }) });
const get = (url: string, query: Record<string, string> = {}, token?: string) => t.call({ method: 'GET', url: `${V1}${url}`, query, ...(token === undefined ? {} : { token }) });

/** Events with a causedBy chain, three tenants (one shared by both toolsets), four of them signed and one refused. */
async function seedEvents(side: { toolset: string; word: string }, token: string): Promise<{ eventIds: string[]; keyId: string }> {
  const key = nodeKeyPair();
  const keyId = await registerKey(t, side.toolset, key.publicKeyB64);
  const events = Array.from({ length: EVENTS }, (_, i) => {
    const event = {
      id: `${side.word}-evt-${i}`,
      eventType: `${side.word}.crawl.page`,
      // The last complete hour before T0's: the forecaster scores a surge, the rule proposer a busy hour.
      ts: new Date(T0.getTime() - 60 * 60_000 - i * 60_000).toISOString(),
      tenant: i % 3 === 0 ? 'shared-tenant' : `${side.word}-only-tenant`,
      ...(i > 0 ? { causedBy: `${side.word}-evt-${i - 1}` } : {}),
      payload: { page: `https://${side.word}.example.com/${i}` },
    };
    return i < 4 ? signWithNode(side.toolset, { ...event, keyId }, key.privateKey) : event;
  });
  const res = await ingestEmpire(t, side.toolset, events, token);
  const body = await ok(res, `ingest ${side.toolset}`);
  expect(body.accepted).toBe(EVENTS);
  // One refused event: an attestation with a rejection, and nothing stored.
  const forged = { ...signWithNode(side.toolset, { id: `${side.word}-forged`, eventType: `${side.word}.forged`, keyId }, key.privateKey), payload: { changed: true } };
  expect((await ok(await ingestEmpire(t, side.toolset, [forged], token), 'forged')).rejected).toBe(1);
  return { eventIds: (body.results as { eventId: string }[]).map((r) => r.eventId), keyId };
}

async function seedSide(toolset: string, word: string): Promise<Side> {
  const created = await ok(await post('/tokens', { name: `${word}-ingest`, scopes: ['write:events'], toolsets: [toolset] }), 'token');
  const { eventIds, keyId } = await seedEvents({ toolset, word }, created.token);
  await ok(await post(`/provenance/toolsets/${toolset}/policy`, { requireSigned: false }), 'policy');
  await ok(await post(`/provenance/toolsets/${toolset}/policy`, { requireSigned: true }), 'policy');
  await ok(await post(`/provenance/toolsets/${toolset}/policy`, { requireSigned: false }), 'policy');
  const rule = await ok(
    await post(`/empire/${toolset}/alerts`, {
      name: `${word}-busy-rule`,
      tenant: `${word}-only-tenant`,
      predicate: { kind: 'empire_count_gte', count: 10, windowMinutes: 15 },
      destinations: [{ kind: 'webhook', url: `https://hooks.example.com/${word}`, secret: `${word}-hook-secret-0123456789` }],
    }),
    'alert rule',
  );
  const note = await ok(await post('/empire/notes', { eventId: eventIds[0], note: `${word}: first crawl from the new range`, pinned: true, color: 'red' }), 'note');
  await ok(
    await post('/cost/records', {
      records: [DAY, YESTERDAY].map((date) => ({ date, toolset, vendor: 'aws', sku: `${word}-sku`, workspace: `${word}-ws`, region: 'us', amountUsd: 3 })),
    }),
    'cost records',
  );
  await ok(await post('/cost/budgets', { scope: 'toolset', scopeKey: toolset, monthlyUsd: 1, alertAtPct: [50, 100], destinations: [] }), 'budget');
  await ok(await post('/empire/triage/budget', { toolset, month: DAY.slice(0, 7), budgetUsdCents: 5000, degradedUntil: null }), 'triage budget');
  return {
    toolset,
    word,
    tokenId: created.id,
    eventIds,
    keyIds: [keyId],
    forecastIncidentId: '',
    triageIncidentId: null,
    proposalIds: [],
    savedViewIds: [],
    alertRuleId: rule.id,
    noteId: note.id,
    costAlertIds: [],
  };
}

beforeAll(async () => {
  const deadPeer = await closedPort();
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `443,${deadPeer}`,
      OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0',
      // A cross-toolset backup peer of the other toolset (a dead port: its row is an error row naming it).
      OBSERVATORY_BRIDGE_TOKEN: 'bridge-token-binding-0123456789abcdefghij',
      OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
      OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
    },
  });
  endpoints = t.app.endpoints;
  bound = await tokenBoundTo(t, [...SCOPES], [OWN]);

  own = await seedSide(OWN, 'alpha');
  other = await seedSide(OTHER, 'bravo');
  // A firing of each side's rule, as its evaluation enqueues it: the delivery listings show it.
  for (const side of [own, other]) {
    await t.app.outbound.enqueue(t.app.database.db, {
      source: 'empire-rule',
      sourceId: side.alertRuleId,
      destinations: [{ kind: 'webhook', url: `https://hooks.example.com/${side.word}`, secret: `${side.word}-hook-secret-0123456789` }],
      message: { title: `${side.word}-busy-rule fired`, text: `${side.word} crawl burst`, severity: 'warning', details: {} },
    });
  }
  clock.advance(60_000);

  // A forecast first (the triage classifier weighs a toolset's rate against it), then triage with the
  // built-in engine: incident proposals and investigations around one event of each toolset,
  // accepted (an incident with its postmortem, saved views); the incidents resolved, then rule
  // proposals backtested against them. Two more forecaster runs above 0.7 open the latch's incidents.
  await ok(await post('/empire/forecast', {}), 'forecast');
  const incidentRun = await ok(await post('/empire/triage/proposals', { windowMinutes: 60 }), 'triage incidents');
  triageRunId = incidentRun.runId;
  for (const side of [own, other]) {
    await ok(await post('/empire/triage/investigations', { focalEventId: side.eventIds[5], windowMinutes: 60 }), 'triage investigation');
  }
  const proposalsOf = async (side: Side) =>
    (await ok(await get('/empire/triage/proposals', { toolset: side.toolset, status: 'all', limit: '200' }), 'proposals')).proposals as { id: string; kind: string; status: string }[];
  for (const side of [own, other]) {
    for (const p of await proposalsOf(side)) {
      if (p.status !== 'pending') continue;
      const decided = await ok(await post('/empire/triage/decide', { id: p.id, accept: true, notes: `${side.word} accepted` }), 'decide');
      if (decided.openedIncidentId) side.triageIncidentId = decided.openedIncidentId;
      if (decided.createdSavedViewId) side.savedViewIds.push(decided.createdSavedViewId);
    }
    expect(side.triageIncidentId, `a triage incident of ${side.toolset}`).not.toBeNull();
    await ok(await post(`/empire/incidents/${side.triageIncidentId}`, { status: 'resolved', notes: `${side.word} fixed` }), 'resolve');
  }
  // The rule proposer backtests against incidents opened before the current hour.
  clock.advance(3_600_000);
  await ok(await post('/empire/triage/rules', { lookbackDays: 30 }), 'triage rules');
  for (let run = 0; run < 2; run++) await ok(await post('/empire/forecast', {}), 'forecast');
  for (const side of [own, other]) {
    side.proposalIds = (await proposalsOf(side)).map((p) => p.id);
    const incidents = await ok(await get('/empire/incidents', { toolset: side.toolset, status: 'open' }), 'incidents');
    expect(incidents.incidents.length, `forecast incident of ${side.toolset}`).toBe(1);
    side.forecastIncidentId = incidents.incidents[0].id;
    await ok(await post(`/empire/incidents/${side.forecastIncidentId}/auto-draft`, { persist: true, operatorNotes: `${side.word} schedule changed` }), 'auto-draft');
    await ok(await post('/empire/notes', { eventId: side.forecastIncidentId, targetKind: 'incident', note: `${side.word}: incident note` }), 'incident note');
  }
  expect(own.savedViewIds.length * other.savedViewIds.length, 'a saved view of each toolset').toBeGreaterThan(0);

  mixedIncidentId = randomUUID();
  await insertIncident(t.app.database.db, {
    id: mixedIncidentId,
    toolset: OWN,
    severity: 'minor',
    title: 'Cross-toolset: shared-tenant — seen by 2 toolsets',
    status: 'open',
    source: 'triage',
    eventIds: [own.eventIds[0]!, other.eventIds[0]!, own.eventIds[3]!, other.eventIds[3]!],
    details: {},
    openedAt: clock.now(),
    resolvedAt: null,
  });

  // Cost alerts, analytics rollups, the knowledge graph (then more events, so its replay differs).
  await runJob(t, 'cost-budget-evaluate');
  const alerts = await ok(await get('/cost/alerts', { status: 'all' }), 'cost alerts');
  for (const side of [own, other]) side.costAlertIds = (alerts.alerts as { id: string; scopeKey: string }[]).filter((a) => a.scopeKey === side.toolset).map((a) => a.id);
  expect(other.costAlertIds.length).toBeGreaterThan(0);
  await runJob(t, 'analytics-rollup');
  await runJob(t, 'graph-materialise');
  const graph = await ok(await get('/empire/graph/materialiser'), 'materialiser');
  materialisationId = graph.latestRun.id;
  for (const side of [own, other]) {
    expect((await ok(await ingestEmpire(t, side.toolset, [{ id: `${side.word}-late`, eventType: `${side.word}.late`, tenant: `${side.word}-only-tenant` }]), 'late')).accepted).toBe(1);
  }
  // A key registered since: the replay of the materialisation finds it missing from the graph.
  for (const side of [own, other]) side.keyIds.push(await registerKey(t, side.toolset, nodeKeyPair().publicKeyB64));
  await ok(await post('/empire/graph/saved-queries', { name: 'every-node', query: 'MATCH (n) RETURN n LIMIT 10' }), 'saved query');
  // A compliance evaluation over both toolsets: the signing control names every toolset with keys.
  await runJob(t, 'compliance-evaluate');
  const soc2 = await ok(await get('/compliance/frameworks/soc2'), 'compliance framework');
  complianceEvaluationId = (soc2.controls as { predicateKey: string; latestEvaluationId: string }[]).find((c) => c.predicateKey === 'signed-events-required')!.latestEvaluationId;
  expect(JSON.stringify(await ok(await get(`/compliance/replay/${complianceEvaluationId}`), 'compliance replay'))).toContain(OTHER);
  // A drift scan: the failing signing control (and the graph's missing keys) open drift events naming the other toolset.
  expect(JSON.stringify((await ok(await post('/trust/drift', { action: 'auto-open' }), 'drift scan')).openedNow)).toContain(OTHER);
  await ok(await t.call({ method: 'PUT', url: `${V1}/backups/toolsets/${OTHER}`, payload: { verifyUrl: `http://127.0.0.1:${deadPeer}${V1}/backups/bridge/verify`, database: 'observatory' } }), 'backup peer');

  // An audit fact about the other toolset (its backup peer, the last write).
  const chain = await ok(await get('/audit/chain', { limit: '1' }), 'chain');
  otherFactSeq = chain.facts[0].seqNo;
  expect(JSON.stringify(await ok(await get(`/audit/chain/${otherFactSeq}`), 'fact'))).toContain(OTHER);
  analyticsMetrics = (await ok(await get('/analytics/metrics'), 'metrics')).metrics;
  const bundle = await ok(await post('/compliance/bundle', { framework: 'soc2' }), 'evidence bundle');
  const manifestUrl = new URL(bundle.manifestUrl as string);
  manifestLink = {
    params: { bundleId: bundle.bundleId, name: manifestUrl.pathname.split('/').at(-1)! },
    query: { expires: manifestUrl.searchParams.get('expires')!, signature: manifestUrl.searchParams.get('signature')! },
  };
}, 300_000); // seeding two toolsets through every domain is slow on a shared machine
afterAll(() => t?.close());

/**
 * What a bound token must get for one probe:
 * - `ok`: 200;
 * - `named`: 403 `forbidden` naming the toolset the request named (rule 1);
 * - `unknown`: 404 `not-found`, the same answer as for an id that does not exist (rule 2);
 * - `spans`: 403 `forbidden`, the read spans every toolset (rule 4).
 * Whatever it is, the answer names nothing of the other toolset beyond what the request named.
 */
type Expected = 'ok' | 'named' | 'unknown' | 'spans';

interface Probe {
  params?: Record<string, string>;
  query?: Record<string, string>;
  expected: Expected;
  /** For `unknown`: the path or query value that is the other toolset's id (swapped for a random one to compare). */
  id?: string;
  /** The bound answer must show the caller's own data (a narrowed list is not simply empty). */
  showsOwn?: boolean;
}

interface Recipe {
  /**
   * `toolset-data`: the endpoint shows toolset data, so an unbound caller's answers to the probes
   * must name the other toolset somewhere (proof that the probes reach it). `none`: it shows none.
   */
  holds: 'toolset-data' | 'none';
  probes: () => Probe[];
}

const okProbe = (query: Record<string, string> = {}, showsOwn = false): Probe => ({ query, expected: 'ok', showsOwn });
const plain: Recipe = { holds: 'none', probes: () => [okProbe()] };
const narrowed = (...queries: Record<string, string>[]): Recipe => ({ holds: 'toolset-data', probes: () => queries.map((q) => okProbe(q, true)) });

/** A list with a `toolset` filter: narrowed without it, 403 naming the other toolset with it. */
const filteredList = (extra: Record<string, string> = {}): Recipe => ({
  holds: 'toolset-data',
  probes: () => [okProbe(extra, true), okProbe({ ...extra, toolset: OWN }, true), { query: { ...extra, toolset: OTHER }, expected: 'named' }],
});
/** A `{toolset}` path: the own one answers, the other's is 403 naming it. */
const perToolset = (query: Record<string, string> = {}): Recipe => ({
  holds: 'toolset-data',
  probes: () => [
    { params: { toolset: OWN }, query, expected: 'ok', showsOwn: true },
    { params: { toolset: OTHER }, query, expected: 'named' },
  ],
});
/** One record by id: the own one answers, the other's answers as an unknown id. */
const byId = (param: string, ownId: () => string, otherId: () => string): Recipe => ({
  holds: 'toolset-data',
  probes: () => [
    { params: { [param]: ownId() }, expected: 'ok', showsOwn: true },
    { params: { [param]: otherId() }, expected: 'unknown', id: otherId() },
  ],
});
const spans = (...queries: Record<string, string>[]): Recipe => ({ holds: 'toolset-data', probes: () => queries.map((query) => ({ query, expected: 'spans' as const })) });
/** A fleet-wide read that shows no toolset's data, refused to a bound token all the same (rule 4). */
const fleetWide: Recipe = { holds: 'none', probes: () => [{ expected: 'spans' }] };

const range = { from: YESTERDAY, to: new Date(T0.getTime() + 86_400_000).toISOString().slice(0, 10) };

/** Every GET of the registry, by id. */
const RECIPES: Record<string, Recipe> = {
  // Meta, identity, ops and integrations.
  getIndex: plain,
  getManifest: plain,
  getOpenApi: plain,
  getHealth: plain,
  getReadiness: plain,
  // Its series are labelled by toolset (observatory_empire_events_total): fleet-wide (rule 4).
  getMetrics: spans({}),
  listTokens: narrowed({}),
  listOperators: fleetWide,
  getAccount: plain,
  listPasskeys: plain,
  listOperatorAudit: spans({ limit: '500' }, { limit: '500', verb: 'provenance.register' }),
  getCronHealth: { holds: 'none', probes: () => [okProbe({ limit: '200' })] },
  getIntegrationsStatus: plain,
  // The honeypot fleet belongs to no toolset (rule 5).
  listTenants: plain,
  listHoneypotAlerts: plain,
  listHoneypotAlertDeliveries: plain,
  listRecentEvents: { holds: 'none', probes: () => [okProbe({ limit: '50' })] },
  investigateFingerprint: { holds: 'none', probes: () => [okProbe({ fingerprintId: '9f86d081884c7d65' })] },
  replayHoneypotEvent: { holds: 'none', probes: () => [okProbe({ list: '1', limit: '20' })] },
  listLureFamilies: plain,
  getBaitSitemapStats: plain,
  listTarpits: plain,
  getIngestSlo: { holds: 'none', probes: () => [okProbe({ window: '24h' })] },
  getHoneypotDashboard: { holds: 'none', probes: () => [okProbe({ window: '24h' })] },
  listHoneypotClusters: { holds: 'none', probes: () => [okProbe({ window: '24h' })] },
  getHoneypotFleet: plain,
  getHoneypotHeartbeat: plain,
  getHoneypotDbHealth: plain,
  // The public agent API.
  searchTopics: { holds: 'none', probes: () => [okProbe({ query: 'crawl' })] },
  listTopics: plain,
  getTopic: { holds: 'none', probes: () => [{ params: { slug: 'no-such-topic' }, expected: 'unknown' }] },
  getAgentOpenApi: plain,
  getAgentCapabilities: plain,
  getAgentDiscovery: plain,
  getAgentRssFeed: plain,
  getAgentJsonFeed: plain,
  getRobotsTxt: plain,
  getLlmsTxt: plain,
  // Its topics, read by operators: the fleet's bait, of no toolset (rule 5).
  listAgentApiTopics: { holds: 'none', probes: () => [okProbe({ category: 'tech', page: '2', limit: '5' })] },
  getAgentApiTopic: { holds: 'none', probes: () => [{ params: { slug: 'no-such-topic' }, expected: 'unknown' }] },
  // The empire.
  empireLineage: byId('eventId', () => own.eventIds[5]!, () => other.eventIds[5]!),
  readEmpireNote: {
    holds: 'toolset-data',
    probes: () => [
      okProbe({ eventId: own.eventIds[0]! }, true),
      okProbe({ eventId: own.forecastIncidentId, targetKind: 'incident' }, true),
      okProbe({ eventId: other.eventIds[0]! }),
      okProbe({ eventId: other.forecastIncidentId, targetKind: 'incident' }),
    ],
  },
  empireForecasts: narrowed({}),
  listEmpireIncidents: filteredList({ limit: '200' }),
  readEmpireIncident: {
    holds: 'toolset-data',
    probes: () => [...byId('id', () => own.forecastIncidentId, () => other.forecastIncidentId).probes(), { params: { id: mixedIncidentId }, expected: 'ok', showsOwn: true }],
  },
  empireDashboard: {
    holds: 'toolset-data',
    probes: () => [
      ...perToolset({ window: '24h' }).probes(),
      { params: { toolset: OWN }, query: { window: '24h', tenant: 'bravo-only-tenant' }, expected: 'ok' },
    ],
  },
  empireOverview: narrowed({}, { federated: '1' }),
  // Federation (docs/federation/README.md): the registry holds no toolset data; digests and the region SLO span every toolset.
  empireFederatedOverview: narrowed({}),
  listEmpireRegions: plain,
  getRegionDigest: fleetWide,
  getRegionSlo: fleetWide,
  empireSlo: narrowed({ window: '7d' }),
  empireReplay: {
    holds: 'toolset-data',
    probes: () => [
      ...perToolset({ list: '1', limit: '200' }).probes(),
      { params: { toolset: OWN }, query: { eventId: other.eventIds[3]! }, expected: 'unknown', id: other.eventIds[3]! },
      { params: { toolset: OWN }, query: { eventId: 'bravo-evt-3' }, expected: 'unknown', id: 'bravo-evt-3' },
    ],
  },
  listEmpireAlerts: perToolset(),
  listEmpireAlertDeliveries: {
    holds: 'toolset-data',
    probes: () => [
      ...perToolset({ limit: '200' }).probes(),
      // Another toolset's rule as a filter lists nothing, exactly as a rule without deliveries.
      { params: { toolset: OWN }, query: { rule: other.alertRuleId }, expected: 'ok' },
      { params: { toolset: OWN }, query: { rule: other.alertRuleId, destination: '0' }, expected: 'ok' },
    ],
  },
  listProvenanceKeys: filteredList({ limit: '200' }),
  getToolsetSigningPolicy: perToolset(),
  listProvenanceAttestations: filteredList({ limit: '200' }),
  // Triage.
  listTriageProposals: filteredList({ status: 'all', limit: '200' }),
  listTriageInvestigations: filteredList({ status: 'all', limit: '200' }),
  listTriageRules: filteredList({ status: 'all', limit: '200' }),
  readTriageProposal: byId('id', () => own.proposalIds[0]!, () => other.proposalIds[0]!),
  replayTriageRun: { holds: 'toolset-data', probes: () => [{ params: { runId: triageRunId }, expected: 'unknown', id: triageRunId }] },
  readIncidentPostmortem: byId('id', () => own.forecastIncidentId, () => other.forecastIncidentId),
  triageMetrics: plain,
  readTriageBudget: narrowed({}, { month: DAY.slice(0, 7) }),
  listSavedViews: narrowed({ limit: '200' }),
  readSavedView: byId('id', () => own.savedViewIds[0]!, () => other.savedViewIds[0]!),
  // Cost and analytics.
  readCostRollup: {
    holds: 'toolset-data',
    probes: () => [
      ...['toolset', 'sku', 'vendor'].map((group) => okProbe({ ...range, group }, group !== 'vendor')),
      okProbe({ ...range, group: 'sku', toolset: OWN }, true),
      { query: { ...range, group: 'sku', toolset: OTHER }, expected: 'named' },
      okProbe({ ...range, group: 'sku', workspace: 'bravo-ws' }),
    ],
  },
  readCostByToolset: {
    holds: 'toolset-data',
    probes: () => [okProbe({ ...range, toolset: OWN }), { query: { ...range, toolset: OTHER }, expected: 'named' }],
  },
  listCostBudgets: narrowed({}),
  listCostAlerts: narrowed({ status: 'all', limit: '200' }),
  listAnalyticsMetrics: plain,
  queryAnalytics: {
    holds: 'toolset-data',
    probes: () =>
      analyticsMetrics.flatMap((m): Probe[] => {
        const query = { metric: m.key, ...range, dims: m.dimensions.join(',') };
        // The honeypot fleet's metrics belong to no toolset (rule 5).
        if (!m.dimensions.includes('toolset')) return [okProbe(query)];
        return [okProbe(query), okProbe({ ...query, toolset: OWN }), { query: { ...query, toolset: OTHER }, expected: 'named' }];
      }),
  },
  readAnalyticsCohort: {
    holds: 'none',
    probes: () => [okProbe({ key: 'incident-postmortem-7d', ...range }), { query: { key: 'developer-token-7d', ...range }, expected: 'spans' }],
  },
  // The knowledge graph.
  getGraphMaterialiser: { holds: 'none', probes: () => [okProbe({ recent: '50' })] },
  getGraphSlo: plain,
  replayGraphMaterialisation: { holds: 'toolset-data', probes: () => [{ params: { materialisationId }, expected: 'spans' }] },
  listGraphSavedQueries: plain,
  // Compliance: the subprocessor registry belongs to no toolset (rule 5).
  listComplianceSubprocessors: { holds: 'none', probes: () => [okProbe(), okProbe({ includeArchived: '1' })] },
  // Backups: fleet-wide by nature; their owner narrows or refuses them.
  listBackupSnapshots: fleetWide,
  backupLadder: fleetWide,
  listRegionFailoverDrills: fleetWide,
  getCrossToolsetRestore: { holds: 'toolset-data', probes: () => [okProbe()] },
  listBackupToolsets: { holds: 'toolset-data', probes: () => [okProbe()] },
  // Compliance evidence: a signed link is its own credential, so a bearer token, bound or not, changes
  // nothing (only an unbound credential can have the link made: the bundle call spans every toolset).
  // The manifest names files and digests only.
  downloadComplianceEvidence: { holds: 'none', probes: () => [{ ...manifestLink, expected: 'ok' }] },
  // The audit chain: one order over every toolset's facts (rule 4).
  listAuditChain: spans({ limit: '200' }, { source: 'OperatorAudit', limit: '200' }),
  getAuditFact: { holds: 'toolset-data', probes: () => [{ params: { id: otherFactSeq }, expected: 'spans' }, { params: { id: '1' }, expected: 'spans' }] },
  // Compliance posture is evaluated over the whole deployment (rule 4).
  // Its counts name no toolset, but they are counted over every toolset's data.
  getCompliancePosture: fleetWide,
  getComplianceFramework: { holds: 'toolset-data', probes: () => [{ params: { framework: 'soc2' }, expected: 'spans' }] },
  replayComplianceEvaluation: { holds: 'toolset-data', probes: () => [{ params: { evaluationId: complianceEvaluationId }, expected: 'spans' }] },
  readComplianceNarration: fleetWide,
  // The drift inbox: its detectors read every toolset's data, and events name toolsets and their events (rule 4).
  listTrustDrift: spans({}, { status: 'all', limit: '500' }),
  // The trust snapshot is composed over the whole deployment (rule 4).
  getTrustSnapshot: fleetWide,
  // Chaos acts on the whole deployment, every toolset's traffic included, and its targets are free text that may name any route: fleet-wide, as the failover drills (rule 4).
  listChaosExperiments: fleetWide,
  getChaosFreeze: fleetWide,
  listChaosRuns: fleetWide,
};

/** Calls beyond the GETs that read toolset data: the graph query. */
const READING_POSTS: Record<string, Recipe & { body: () => unknown }> = {
  runGraphQuery: { holds: 'toolset-data', body: () => ({ query: 'MATCH (n) RETURN n LIMIT 1000', limit: 1000 }), probes: () => [{ expected: 'ok' }] },
};

/** Every mark of the other toolset: the word in all its texts (name, tenants, types, notes…) and the ids the service gave its records. */
function otherMarks(): string[] {
  return [
    other.word,
    other.tokenId,
    ...other.keyIds,
    other.alertRuleId,
    other.noteId,
    other.forecastIncidentId,
    ...(other.triageIncidentId ? [other.triageIncidentId] : []),
    ...other.eventIds,
    ...other.proposalIds,
    ...other.savedViewIds,
    ...other.costAlertIds,
  ].map((m) => m.toLowerCase());
}

/** The answer's text without what the request itself said (rule 1: naming back what the caller named tells nothing). */
function scrubbed(body: string, said: readonly string[]): string {
  let text = body.toLowerCase();
  for (const value of said) if (value.length > 0) text = text.split(value.toLowerCase()).join('<asked>');
  return text;
}

/** An answer with its request id and time taken out, for comparing two answers. */
const comparable = (body: string, id: string) => body.split(id).join('<id>').replace(/"(requestId|generatedAt)":"[^"]*"/g, '"$1":"…"');

const pathOf = (e: Pick<Endpoint, 'path'>, params: Record<string, string> = {}) =>
  e.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${e.path}: no value for {${name}}`);
    return encodeURIComponent(value);
  });

interface Outcome {
  problems: string[];
  /** Whether an unbound caller's answer to some probe named the other toolset. */
  revealedToUnbound: boolean;
}

async function probeEndpoint(e: Endpoint, recipe: Recipe, body?: unknown): Promise<Outcome> {
  const problems: string[] = [];
  let revealedToUnbound = false;
  const marks = otherMarks();
  for (const probe of recipe.probes()) {
    const url = pathOf(e, probe.params);
    const request = { method: e.method, url, query: probe.query ?? {}, ...(body === undefined ? {} : { payload: body as never }) };
    const label = `${e.id} ${url}${probe.query ? `?${new URLSearchParams(probe.query)}` : ''}`;
    // The public agent API takes no operator credential (a bearer token there is an agent API key).
    const anonymous = e.auth === 'agent-key';
    const unbound = await t.call(anonymous ? { ...request, token: null } : request);
    if (probe.expected !== 'unknown' || unbound.statusCode === 200) {
      if (unbound.statusCode !== 200) problems.push(`${label}: an unbound token got ${unbound.statusCode} ${unbound.body.slice(0, 300)} (the probe does not reach data)`);
    }
    if (marks.some((m) => unbound.body.toLowerCase().includes(m))) revealedToUnbound = true;

    const res = await t.call({ ...request, token: anonymous ? null : bound });
    const said = [...Object.values(probe.params ?? {}), ...Object.values(probe.query ?? {})];
    const text = scrubbed(res.body, said);
    const leaked = marks.filter((m) => text.includes(m));
    if (leaked.length > 0) problems.push(`${label}: answered ${res.statusCode} naming the other toolset (${leaked.slice(0, 5).join(', ')}): ${res.body.slice(0, 400)}`);
    const json = () => (res.headers['content-type']?.toString().includes('json') ? (res.json() as Json) : {});
    const status = res.statusCode;
    const spansRefusal = status === 403 && json().reason === 'forbidden' && /spans every toolset/.test(String(json().human));
    switch (probe.expected) {
      case 'ok':
        if (status !== 200) problems.push(`${label}: expected 200, got ${status} ${res.body.slice(0, 300)}`);
        break;
      case 'named':
        if (status !== 403 || json().reason !== 'forbidden' || !String(json().human).includes(OTHER)) problems.push(`${label}: expected 403 naming ${OTHER}, got ${status} ${res.body.slice(0, 300)}`);
        break;
      case 'spans':
        if (!spansRefusal) problems.push(`${label}: expected 403 "spans every toolset", got ${status} ${res.body.slice(0, 300)}`);
        break;
      case 'unknown': {
        if (status !== 404 || json().reason !== 'not-found') {
          problems.push(`${label}: expected 404 not-found as for an unknown id, got ${status} ${res.body.slice(0, 300)}`);
          break;
        }
        if (probe.id === undefined) break;
        // The same request with an id nothing has: the answer must be the same but for the id.
        const fresh = /^[0-9a-f-]{36}$/i.test(probe.id) ? randomUUID() : `${probe.id}-none`;
        const swap = (values?: Record<string, string>) => (values ? Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v === probe.id ? fresh : v])) : undefined);
        const unknown = await t.call({ method: e.method, url: pathOf(e, swap(probe.params)), query: swap(probe.query) ?? {}, token: anonymous ? null : bound });
        if (comparable(unknown.body, fresh) !== comparable(res.body, probe.id)) {
          problems.push(`${label}: the answer differs from that for an unknown id: ${res.body.slice(0, 300)} vs ${unknown.body.slice(0, 300)}`);
        }
        break;
      }
    }
    if (probe.showsOwn && status === 200 && !res.body.toLowerCase().includes(own.word)) problems.push(`${label}: the bound token's answer shows none of its own toolset: ${res.body.slice(0, 300)}`);
  }
  return { problems, revealedToUnbound };
}

describe('a token bound to one toolset, on every read of the registry', () => {
  it('has a recipe for every GET (a new GET fails here until it has one)', () => {
    const gets = endpoints.filter((e) => e.method === 'GET').map((e) => e.id).sort();
    const missing = gets.filter((id) => !(id in RECIPES));
    expect(missing, 'GET endpoints without a recipe in test/toolset-binding.test.ts').toEqual([]);
    expect(Object.keys(RECIPES).filter((id) => !gets.includes(id)), 'recipes of endpoints that are no GET').toEqual([]);
    for (const id of Object.keys(READING_POSTS)) expect(endpoints.find((e) => e.id === id)?.method, id).toBe('POST');
  });

  const cases = () => [
    ...endpoints.filter((e) => e.method === 'GET').map((e) => ({ e, recipe: RECIPES[e.id]!, body: undefined as unknown })),
    ...endpoints.filter((e) => e.id in READING_POSTS).map((e) => ({ e, recipe: READING_POSTS[e.id]!, body: READING_POSTS[e.id]!.body() })),
  ];

  it('never names anything of the other toolset, answers its ids as unknown, its name with 403', async () => {
    const problems: string[] = [];
    for (const { e, recipe, body } of cases()) {
      if (recipe === undefined) continue;
      const outcome = await probeEndpoint(e, recipe, body);
      problems.push(...outcome.problems);
      if (recipe.holds === 'toolset-data' && !outcome.revealedToUnbound) problems.push(`${e.id}: no probe reaches the other toolset's data for an unbound token either (the recipe proves nothing)`);
    }
    expect(problems).toEqual([]);
  }, 300_000);

  it('refuses, as spanning every toolset, the audit chain, its verification, the operator audit log and job runs', async () => {
    for (const [method, url] of [
      ['GET', `${V1}/audit/chain`],
      ['GET', `${V1}/audit/chain/1`],
      ['POST', `${V1}/audit/chain/verify`],
      ['GET', `${V1}/honeypot/ops/audit?limit=10`],
      ['POST', `${V1}/ops/jobs/forecast/run`],
      ['POST', `${V1}/empire/forecast`],
    ] as const) {
      const res = await t.call({ method, url, token: bound, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
      expect(res.json().human, `${method} ${url}`).toMatch(/^This token is bound to toolsets; .+ spans every toolset\.$/);
    }
    // An unbound token reads them.
    expect((await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=10` })).statusCode).toBe(200);
  });

  it('refuses every endpoint the registry declares as spanning every toolset, before reading its input', async () => {
    const declared = endpoints.filter((e) => e.spansEveryToolset !== null);
    expect(declared.length).toBeGreaterThan(10);
    for (const e of declared) {
      // Authentication (and this refusal) come before validation: placeholder parameters do.
      const url = e.path.replace(/\{[^}]+\}/g, 'placeholder');
      const res = await t.call({ method: e.method, url, token: bound, ...(e.method === 'GET' ? {} : { payload: {} }) });
      expect(res.statusCode, `${e.id} ${res.body}`).toBe(403);
      expect(res.json().human, e.id).toBe(`This token is bound to toolsets; ${e.spansEveryToolset} spans every toolset.`);
    }
  });
});

describe('a token bound to one toolset, on the writes that name a record', () => {
  it('cannot acknowledge another toolset\'s incident, nor write notes on its records, and learns neither that they exist', async () => {
    for (const [url, payload] of [
      [`${V1}/empire/incidents/${other.forecastIncidentId}`, { status: 'acknowledged' }],
      [`${V1}/empire/notes`, { eventId: other.eventIds[0], note: 'overwritten' }],
      [`${V1}/empire/notes`, { eventId: other.forecastIncidentId, targetKind: 'incident', note: 'overwritten' }],
    ] as const) {
      const res = await t.call({ method: 'POST', url, payload, token: bound });
      expect(res.statusCode, `${url} ${res.body}`).toBe(404);
      expect(res.body.toLowerCase()).not.toContain(other.word);
      const swapped = JSON.parse(JSON.stringify(payload).split(other.forecastIncidentId).join(randomUUID()).split(other.eventIds[0]!).join(randomUUID()));
      const unknown = await t.call({ method: 'POST', url: url.replace(other.forecastIncidentId, randomUUID()), payload: swapped, token: bound });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json().reason).toBe(res.json().reason);
    }
    const incident = await ok(await get(`/empire/incidents/${other.forecastIncidentId}`), 'incident');
    expect(incident.incident.status).toBe('open');
    const note = await ok(await get('/empire/notes', { eventId: other.eventIds[0]! }), 'note');
    expect(note.note.note).toBe('bravo: first crawl from the new range');
    // Its own it can.
    expect((await t.call({ method: 'POST', url: `${V1}/empire/incidents/${own.forecastIncidentId}`, payload: { status: 'acknowledged' }, token: bound })).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `${V1}/empire/notes`, payload: { eventId: own.eventIds[1], note: 'alpha: mine' }, token: bound })).statusCode).toBe(200);
  });

  it('neither lists nor revokes tokens beyond its own toolsets', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/tokens/${other.tokenId}/revoke`, payload: {}, token: bound });
    expect(res.statusCode).toBe(404);
    const tokens = (await ok(await get('/tokens'), 'tokens')).tokens as { id: string; revokedAt: string | null }[];
    expect(tokens.find((x) => x.id === other.tokenId)?.revokedAt).toBeNull();
    expect((await t.call({ method: 'POST', url: `${V1}/tokens/${own.tokenId}/revoke`, payload: {}, token: bound })).statusCode).toBe(200);
  });

  it('neither lists nor revokes an unbound token, nor one that also reaches another toolset', async () => {
    const create = async (payload: Record<string, unknown>) => ok(await t.call({ method: 'POST', url: `${V1}/tokens`, payload }), 'token create');
    const unbound = await create({ name: 'unbound-ops', scopes: ['read:empire'] });
    const wider = await create({ name: 'alpha-and-bravo', scopes: ['read:empire'], toolsets: [OWN, OTHER] });
    const listed = ((await ok(await get('/tokens', {}, bound), 'tokens')).tokens as { id: string }[]).map((x) => x.id);
    expect(listed).not.toContain(unbound.id);
    expect(listed).not.toContain(wider.id);
    for (const id of [unbound.id, wider.id]) {
      expect((await t.call({ method: 'POST', url: `${V1}/tokens/${id}/revoke`, payload: {}, token: bound })).statusCode).toBe(404);
    }
    // Both still work.
    for (const token of [unbound.token, wider.token]) expect((await get('/empire/overview', {}, token as string)).statusCode).toBe(200);
  });
});
