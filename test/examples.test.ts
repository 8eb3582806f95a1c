import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import { sql } from 'drizzle-orm';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertIncident } from '../src/domains/empire/incidents/repository.ts';
import { plainSchema } from '../src/platform/http/openapi.ts';
import type { Endpoint } from '../src/platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { ingestEmpire, nodeKeyPair, registerKey } from './helpers/empire.ts';
import { createTenant, signedIngest } from './helpers/honeypot.ts';
import { recordExchanges } from './helpers/openapi-conformance.ts';
import { SoftAuthenticator } from './helpers/soft-authenticator.ts';

/**
 * Every endpoint shows a request that works (issue 14 item 1).
 *
 * Convention: each request schema of a registry entry (`params`, `query`, `body`) carries, at the
 * object level, JSON Schema `examples: [ {...one complete request...} ]`: every field the endpoint
 * takes, with values a client could send. The manifest (`querySchema`, `bodySchema`) and the
 * OpenAPI request body show it as it is; OpenAPI parameters and the manifest's path parameters
 * do not show it yet (see /work/notes/examples.md). Per-property `examples` (which
 * contract.test.ts `requiredQuery` reads for required query parameters) stay where they are.
 * Examples leave out times that go stale (an ingest `ts` is refused when over 30 days old), so an
 * example keeps working as written.
 *
 * This file walks the registry, so a new endpoint is covered without touching it:
 * - each request schema has an object-level example that its own schema accepts (Ajv, as
 *   contract.test.ts checks response examples) and that names every top-level field the schema
 *   declares, save those `OMITTED` lists with a reason (nested fields are not checked);
 * - each POST endpoint's example (kind write, and the agent API's POST searches too), sent as is
 *   to a fresh instance after the few fixtures below, answers 2xx. Signed ingest is signed with
 *   the fixture tenant's secret; agent API and public calls go without a credential; everything
 *   else with the admin token. Only path parameters naming something that exists only once
 *   created are swapped for a fixture's id (`fixtureParams`); `EXEMPT` lists, each with its
 *   reason, the endpoints not sent;
 * - each GET endpoint with a query or path schema answers 2xx to its example, sent as is.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** What the examples name; the fixtures create them. */
const TENANT = 'edge-eu';
const TOOLSET = 'crawler-lab';

/** POST endpoints whose example is not sent, and why. Keep it short: everything else is sent. */
const EXEMPT: Record<string, string> = {
  testSlackWebhook: 'it posts to the webhook URL at once (a real network call to a chat service); the example is only schema-checked',
  finishPasskeyRegistration:
    'the body is an attestation the authenticator makes over the challenge the start call just issued: a written example can never verify (covered by src/domains/identity/passkeys/passkeys.test.ts)',
  finishPasskeyLogin:
    'the body is an assertion signed by a registered authenticator over a fresh challenge: a written example can never verify (covered by src/domains/identity/passkeys/passkeys.test.ts)',
  runChaosExperiment:
    'the drift inbox fixtures above leave critical drift events unresolved, and those close the chaos gate (409 critical-drift-open); its example is sent as is on a clean instance in src/domains/chaos/runs/runs.test.ts',
};

/**
 * POST endpoints that change what later examples rely on run last, in this order: the ingest
 * example is signed with the secret that rotating replaces; a disabled tenant refuses ingest; the
 * signing policy the example sets refuses the unsigned empire ingest example; the chaos freeze
 * example freezes chaos, which refuses a chaos run.
 */
const RUN_LAST = ['rotateTenantSecret', 'disableTenant', 'enableTenant', 'setToolsetSigningPolicy', 'retireProvenanceKey', 'revokeToken', 'revokePasskey', 'setChaosFreeze'];

/**
 * Top-level fields an example leaves out on purpose (`endpointId.part.field`), and why. Every other
 * field the schema declares appears in the example, so a client sees the whole request.
 */
const OMITTED: Record<string, string> = {
  'replayHoneypotEvent.query.eventId': 'the example shows the list form (`list=1`); the single form names an event id the ingest answered, which a written example cannot know',
  'empireReplay.query.eventId': 'the example shows the list form (`list=1`); the single form names an event id of the toolset, which a written example cannot know',
  'runGraphQuery.body.savedName': 'query and savedName exclude each other: the example sends the text (saveGraphQuery\'s example saves it, and src/domains/graph/saved/saved-queries.test.ts runs saved queries by name)',
};

let t: TestApp;
let traffic: ReturnType<typeof recordExchanges>;
let endpoints: readonly Endpoint[];
let tenantSecret: string;
/** Endpoint id → path parameters that only exist once created (ids made by the fixtures). */
const fixtureParams: Record<string, Record<string, string>> = {};
/** Endpoint id → body fields that only exist once created (ids made by the fixtures), over the example's. */
const fixtureBody: Record<string, Record<string, string>> = {};
/** Endpoint id → query values only the service can make (a signed link's expiry and signature), over the example's. */
const fixtureQuery: Record<string, Record<string, string>> = {};

type ObjectSchema = { examples?: unknown[] } | null;
const exampleOf = (schema: unknown): Record<string, unknown> | undefined =>
  (schema as ObjectSchema)?.examples?.[0] as Record<string, unknown> | undefined;

function pathOf(e: Endpoint): string {
  const params = { ...exampleOf(e.params), ...fixtureParams[e.id] };
  return e.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(params[name])));
}

function queryOf(e: Endpoint): Record<string, string> {
  return Object.fromEntries(Object.entries({ ...exampleOf(e.query), ...fixtureQuery[e.id] }).map(([k, v]) => [k, String(v)]));
}

async function send(e: Endpoint): Promise<LightMyRequestResponse> {
  const url = pathOf(e);
  const body = e.body ? { ...exampleOf(e.body), ...fixtureBody[e.id] } : undefined;
  if (e.auth === 'tenant-signature') {
    return signedIngest(t, { slug: TENANT, secret: tenantSecret, unixSeconds: Math.floor(Date.now() / 1000), body });
  }
  return t.call({
    method: e.method,
    url,
    query: queryOf(e),
    // The public agent API and the login ceremony take no credential; a signed link is its own.
    token: e.auth === 'agent-key' || e.auth === 'none' || e.auth === 'signed-url' ? null : undefined,
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' } });
  endpoints = t.app.endpoints;
  // Everything sent from here on, fixtures included, is checked against the served OpenAPI document last.
  traffic = recordExchanges(t);

  // The tenant the honeypot examples name.
  tenantSecret = await createTenant(t, TENANT, 'Edge EU honeypots');

  // A token to revoke.
  const token = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'to-revoke', scopes: ['read:dashboard'] } });
  fixtureParams.revokeToken = { id: token.json().id };

  // A passkey to revoke, registered by a software authenticator.
  const start = (await t.call({ method: 'POST', url: `${V1}/account/passkeys/register/start`, payload: {} })).json();
  const passkey = await t.call({
    method: 'POST',
    url: `${V1}/account/passkeys/register/finish`,
    payload: { challengeId: start.challengeId, response: new SoftAuthenticator('localhost', 'http://localhost:8080').register(start.options) },
  });
  fixtureParams.revokePasskey = { id: passkey.json().passkey.id };

  // Alert rules to change.
  const destinations = [{ kind: 'webhook', url: 'https://alerts.example.com/fixture', secret: 'fixture-secret-0123456789' }];
  const honeypotRule = await t.call({
    method: 'POST',
    url: `${V1}/honeypot/alerts`,
    payload: { tenant: TENANT, name: 'fixture', predicate: { kind: 'tarpit_triggered' }, destinations },
  });
  fixtureParams.updateHoneypotAlert = { id: honeypotRule.json().id };
  const empireRule = await t.call({
    method: 'POST',
    url: `${V1}/empire/${TOOLSET}/alerts`,
    payload: { name: 'fixture', predicate: { kind: 'empire_count_gte', count: 1, windowMinutes: 5 }, destinations },
  });
  fixtureParams.updateEmpireAlert = { id: empireRule.json().id };

  // A provenance key to retire.
  fixtureParams.retireProvenanceKey = { id: await registerKey(t, TOOLSET, nodeKeyPair().publicKeyB64) };

  // An empire event whose lineage is read.
  const ingested = await ingestEmpire(t, TOOLSET, [{ id: 'fixture-000001', eventType: 'crawl.started' }]);
  fixtureParams.empireLineage = { eventId: ingested.json().results[0].eventId };

  // An incident: no endpoint opens one (the forecaster does, after 3 alerting runs), so it is stored directly.
  const incidentId = randomUUID();
  await insertIncident(t.app.database.db, {
    id: incidentId,
    toolset: TOOLSET,
    severity: 'minor',
    title: `${TOOLSET} fixture incident`,
    status: 'open',
    source: 'test',
    eventIds: [],
    details: {},
    openedAt: new Date(),
    resolvedAt: null,
  });
  fixtureParams.readEmpireIncident = { id: incidentId };
  fixtureParams.updateEmpireIncident = { id: incidentId };
  fixtureParams.autoDraftIncidentPostmortem = { id: incidentId };
  fixtureParams.readIncidentPostmortem = { id: incidentId };

  // Triage: two investigations narrowed to an event each; the first accepted (a saved view), the second left pending to decide.
  const caused = await ingestEmpire(t, TOOLSET, [{ id: 'fixture-000002', eventType: 'crawl.finished', causedBy: 'fixture-000001' }]);
  const investigated: { runId: string; proposalId: string }[] = [];
  for (const focalEventId of [fixtureParams.empireLineage.eventId!, caused.json().results[0].eventId as string]) {
    const run = await t.call({ method: 'POST', url: `${V1}/empire/triage/investigations`, payload: { focalEventId, windowMinutes: 60 } });
    if (run.statusCode !== 200 || run.json().proposalCount !== 1) throw new Error(`triage investigation fixture failed: ${run.statusCode} ${run.body}`);
    const replay = await t.call({ method: 'GET', url: `${V1}/empire/triage/replay/${run.json().runId}` });
    investigated.push({ runId: run.json().runId, proposalId: replay.json().proposalIds[0] });
  }
  const accepted = await t.call({ method: 'POST', url: `${V1}/empire/triage/decide`, payload: { id: investigated[0]!.proposalId, accept: true } });
  fixtureParams.readSavedView = { id: accepted.json().createdSavedViewId };
  fixtureParams.replayTriageRun = { runId: investigated[1]!.runId };
  fixtureParams.readTriageProposal = { id: investigated[1]!.proposalId };
  fixtureBody.decideTriageProposal = { id: investigated[1]!.proposalId };
  fixtureBody.runTriageInvestigations = { focalEventId: fixtureParams.empireLineage.eventId! };

  // Two cost alerts to acknowledge and to resolve (one each: resolved is final): a budget of $1 with two thresholds, a $2 record this month, the evaluator.
  const budgetSet = await t.call({ method: 'POST', url: `${V1}/cost/budgets`, payload: { scope: 'toolset', scopeKey: 'fixture-costs', monthlyUsd: 1, alertAtPct: [50, 100], destinations: [] } });
  const costRecord = await t.call({
    method: 'POST',
    url: `${V1}/cost/records`,
    payload: { records: [{ date: new Date().toISOString().slice(0, 10), toolset: 'fixture-costs', vendor: 'fixture', sku: 'fixture', amountUsd: 2, units: 1 }] },
  });
  const evaluated = await t.call({ method: 'POST', url: `${V1}/ops/jobs/cost-budget-evaluate/run`, payload: {} });
  const costAlerts = (await t.call({ method: 'GET', url: `${V1}/cost/alerts?status=open` })).json().alerts as { id: string; scopeKey: string }[];
  const fixtureAlerts = costAlerts.filter((a) => a.scopeKey === 'fixture-costs');
  if (budgetSet.statusCode !== 200 || costRecord.statusCode !== 200 || evaluated.statusCode !== 200 || fixtureAlerts.length !== 2) {
    throw new Error(`cost alert fixture failed: ${budgetSet.body} ${costRecord.body} ${evaluated.body}`);
  }
  fixtureParams.acknowledgeCostAlert = { id: fixtureAlerts[0]!.id };
  fixtureParams.resolveCostAlert = { id: fixtureAlerts[1]!.id };

  // A backup snapshot to verify (a real one: the dump of this test database).
  const snapshot = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
  if (snapshot.statusCode !== 200) throw new Error(`snapshot fixture failed: ${snapshot.statusCode} ${snapshot.body}`);
  fixtureBody.verifyBackupSnapshot = { snapshotId: snapshot.json().snapshot.id };

  // A failover drill that ended in error, to resolve: a drill ends so only when a restore fails, so it is stored directly.
  const drillId = randomUUID();
  await t.app.database.db.execute(
    sql`INSERT INTO region_failover_drills (id, region, trigger, started_at, ended_at, outcome, error_text, observed_badge, badge_source, unmeasured, resolved_drill_ids)
        VALUES (${drillId}, 'local', 'manual', now() - interval '1 hour', now() - interval '1 hour', 'error', 'fixture: restore failed', 'red', 'drill', '[]'::jsonb, '[]'::jsonb)`,
  );
  fixtureParams.resolveRegionFailoverDrill = { id: drillId };

  // A subprocessor to review.
  const subprocessor = await t.call({ method: 'POST', url: `${V1}/compliance/subprocessors`, payload: { name: 'Fixture Processor', role: 'other' } });
  if (subprocessor.statusCode !== 200) throw new Error(`subprocessor fixture failed: ${subprocessor.statusCode} ${subprocessor.body}`);
  fixtureParams.actOnComplianceSubprocessor = { id: subprocessor.json().row.id };

  // A completed knowledge-graph materialisation to replay (once app.ts serves the graph endpoints and job).
  if (endpoints.some((e) => e.id === 'replayGraphMaterialisation')) {
    const materialised = await t.call({ method: 'POST', url: `${V1}/ops/jobs/graph-materialise/run`, payload: {} });
    if (materialised.statusCode !== 200 || materialised.json().run.outcome !== 'ok') throw new Error(`graph materialisation fixture failed: ${materialised.statusCode} ${materialised.body}`);
    fixtureParams.replayGraphMaterialisation = { materialisationId: materialised.json().run.stats.materialisationId };
  }

  // Two trust drift events, to acknowledge and to resolve: two controls overridden to fail, then a drift scan opens one event each.
  for (const controlId of ['CC6.1', 'CC6.3']) {
    const overridden = await t.call({ method: 'POST', url: `${V1}/compliance/override`, payload: { controlId, framework: 'soc2', outcome: 'fail', note: 'drift inbox fixture' } });
    if (overridden.statusCode !== 200) throw new Error(`drift fixture override failed: ${overridden.statusCode} ${overridden.body}`);
  }
  const scanned = await t.call({ method: 'POST', url: `${V1}/trust/drift`, payload: { action: 'auto-open' } });
  const driftEvents = scanned.statusCode === 200 ? (scanned.json().openedNow as { id: string; sourceId: string }[]) : [];
  const driftOf = (sourceId: string) => driftEvents.find((e) => e.sourceId === sourceId)?.id;
  if (driftOf('soc2:CC6.1') === undefined || driftOf('soc2:CC6.3') === undefined) throw new Error(`drift fixture scan failed: ${scanned.statusCode} ${scanned.body}`);
  fixtureParams.acknowledgeTrustDrift = { id: driftOf('soc2:CC6.1')! };
  fixtureParams.resolveTrustDrift = { id: driftOf('soc2:CC6.3')! };

  // A chaos experiment to pause, resume and retire (in that order: the registry declares them so).
  const experiment = await t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { slug: 'fixture-readonly', kind: 'prisma-readonly-window', target: 'primary' } });
  if (experiment.statusCode !== 200) throw new Error(`chaos experiment fixture failed: ${experiment.statusCode} ${experiment.body}`);
  for (const id of ['pauseChaosExperiment', 'resumeChaosExperiment', 'retireChaosExperiment']) fixtureParams[id] = { id: experiment.json().experiment.id };

  // A stored compliance evaluation to replay.
  const compliance = await t.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run`, payload: {} });
  if (compliance.statusCode !== 200 || compliance.json().run.outcome !== 'ok') throw new Error(`compliance evaluation fixture failed: ${compliance.statusCode} ${compliance.body}`);
  const soc2 = await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/soc2` });
  fixtureParams.replayComplianceEvaluation = { evaluationId: soc2.json().controls[0].latestEvaluationId };

  // An evidence bundle whose summary the download example fetches: its link's expiry and signature are the service's to make.
  const bundle = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'soc2' } });
  if (bundle.statusCode !== 200) throw new Error(`evidence bundle fixture failed: ${bundle.statusCode} ${bundle.body}`);
  const summary = new URL(bundle.json().artifacts.find((a: { kind: string }) => a.kind === 'pdf').url);
  fixtureParams.downloadComplianceEvidence = { bundleId: bundle.json().bundleId, name: summary.pathname.split('/').at(-1)! };
  fixtureQuery.downloadComplianceEvidence = { expires: summary.searchParams.get('expires')!, signature: summary.searchParams.get('signature')! };

  for (const [id, params] of Object.entries({ ...fixtureParams, ...fixtureBody, ...fixtureQuery })) {
    for (const [name, value] of Object.entries(params)) if (typeof value !== 'string') throw new Error(`fixture for ${id}.${name} failed`);
  }
}, 240_000); // booting an app and its fixtures is slow on a shared machine
afterAll(() => t?.close());

describe('request examples', () => {
  it('gives every path, query and body schema an object-level example its schema accepts', () => {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    const missing: string[] = [];
    const invalid: string[] = [];
    const incomplete: string[] = [];
    for (const e of endpoints) {
      for (const part of ['params', 'query', 'body'] as const) {
        const schema = e[part];
        if (schema === null) continue;
        const examples = (schema as ObjectSchema)?.examples;
        if (!Array.isArray(examples) || examples.length === 0) {
          missing.push(`${e.id}.${part}`);
          continue;
        }
        const declared = Object.keys((schema as { properties?: object }).properties ?? {});
        for (const field of declared) {
          if (!(field in (examples[0] as object)) && !(`${e.id}.${part}.${field}` in OMITTED)) incomplete.push(`${e.id}.${part}.${field}`);
        }
        const check = ajv.compile(plainSchema(schema) as object);
        for (const example of examples) if (!check(example)) invalid.push(`${e.id}.${part}: ${JSON.stringify(check.errors)}`);
      }
    }
    expect(missing, 'request schemas without an object-level `examples`').toEqual([]);
    expect(incomplete, 'examples leaving out a declared field (list it in OMITTED with a reason if on purpose)').toEqual([]);
    expect(invalid, 'examples their own schema refuses').toEqual([]);
  });

  it('shows the body example in the manifest and the OpenAPI document', async () => {
    const manifest = (await t.call({ method: 'GET', url: `${V1}/manifest` })).json();
    const entry = manifest.endpoints.find((e: { id: string }) => e.id === 'createHoneypotAlert');
    expect(entry.bodySchema.examples[0].predicate).toMatchObject({ kind: 'liar_rate_above' });
    const doc = (await t.call({ method: 'GET', url: `${V1}/openapi.json` })).json();
    const body = doc.paths[`${V1}/empire/{toolset}/alerts`].post.requestBody.content['application/json'].schema;
    expect(body.examples[0].predicate).toMatchObject({ kind: 'empire_count_gte' });
  });

  it('shows the query and path examples on each OpenAPI parameter and the path schema in the manifest', async () => {
    const doc = (await t.call({ method: 'GET', url: `${V1}/openapi.json` })).json();
    const manifest = (await t.call({ method: 'GET', url: `${V1}/manifest` })).json();
    const withoutExample: string[] = [];
    for (const e of endpoints) {
      const operation = doc.paths[e.path]?.[e.method.toLowerCase()];
      for (const parameter of (operation?.parameters ?? []) as { name: string; in: string; example?: unknown; required: boolean }[]) {
        if (parameter.example === undefined && (parameter.required || parameter.in === 'path')) withoutExample.push(`${e.id}.${parameter.in}.${parameter.name}`);
      }
      const entry = manifest.endpoints.find((m: { id: string }) => m.id === e.id);
      if (e.params) expect(entry.paramsSchema?.examples?.[0], e.id).toBeDefined();
      else expect(entry.paramsSchema, e.id).toBeNull();
    }
    expect(withoutExample, 'required or path parameters without an example in the OpenAPI document').toEqual([]);
  });

  it('lists only POST endpoints in the exemptions, each with a reason', () => {
    for (const [id, reason] of Object.entries(EXEMPT)) {
      expect(endpoints.find((e) => e.id === id)?.method, id).toBe('POST');
      expect(reason.length, id).toBeGreaterThan(20);
    }
  });

  it('answers 2xx to every POST example sent as is', async () => {
    const posts = endpoints.filter((e) => e.method === 'POST' && !(e.id in EXEMPT));
    const rank = (e: Endpoint) => (RUN_LAST.includes(e.id) ? 1000 + RUN_LAST.indexOf(e.id) : 0);
    const ordered = [...posts].sort((a, b) => rank(a) - rank(b));
    const failures: string[] = [];
    for (const e of ordered) {
      const res = await send(e);
      if (res.statusCode < 200 || res.statusCode > 299) failures.push(`${e.id} ${e.method} ${pathOf(e)}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }
    expect(posts.length).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  }, 240_000); // a snapshot, a restore and a failover drill among them

  it('answers 2xx to every GET query and path example sent as is', async () => {
    const gets = endpoints.filter((e) => e.method === 'GET' && (e.query !== null || e.params !== null));
    const failures: string[] = [];
    for (const e of gets) {
      const res = await send(e);
      if (res.statusCode < 200 || res.statusCode > 299) failures.push(`${e.id} GET ${pathOf(e)} ${JSON.stringify(queryOf(e))}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }
    expect(gets.length).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });
});

describe('the OpenAPI document agrees with the service (issue 14 item 9)', () => {
  it('describes every request sent above and every answer to it', async () => {
    expect(traffic.exchanges.length).toBeGreaterThan(60);
    const violations = await traffic.violations();
    expect(violations, `exchanges the served OpenAPI document does not describe:\n${violations.join('\n')}`).toEqual([]);
  }, 180_000);
});
