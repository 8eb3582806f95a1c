import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { plainSchema } from '../../platform/http/openapi.ts';
import { type Endpoint, type Principal, SCOPES } from '../../platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { tokenBoundTo } from '../../../test/helpers/empire.ts';

/**
 * `GET {v1}/analytics/cohort` over HTTP (spec B group 4; docs/analytics/cohorts.md), through the
 * app as src/app.ts wires it, on one timeline moved by a ManualClock:
 * - developer-token-7d: tokens created through `POST {v1}/tokens` and used for real requests at
 *   moved clock times, so the activity is written by authentication itself;
 * - incident-postmortem-7d: incidents opened through the empire incident service, postmortems
 *   stored through `POST {v1}/empire/incidents/{id}/auto-draft` with `persist`;
 * - eligibility of a running cohort, repeatable bodies, refusals, and a token bound to a toolset.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** Boot day: the admin token and the helper tokens are created here, outside every cohort read. */
const clock = new ManualClock('2026-10-20T08:00:00.000Z');
/** Anchor day of the token cohort. */
const D = '2026-11-02';
/** Anchor day of the incident cohort. */
const E = '2026-11-20';

let t: TestApp;
let endpoint: Endpoint;
let checkBody: (body: unknown) => boolean;
const TOKENS = { reader: '', noScope: '', alpha: '' };
let admin: Principal;

/** `day` plus `n` days, YYYY-MM-DD. */
const plus = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00.000Z`) + n * 86_400_000).toISOString().slice(0, 10);
/** Moves the clock to `time` (HH:MM:SS) of `day`. */
const at = (day: string, time: string) => clock.set(`${day}T${time}.000Z`);

beforeAll(async () => {
  t = await startTestApp({ clock });
  endpoint = t.app.endpoints.find((e) => e.id === 'readAnalyticsCohort')!;
  checkBody = addFormats(new Ajv({ strict: false, allErrors: true })).compile(plainSchema(endpoint.responseSchema) as object);
  TOKENS.reader = await t.tokenWith(['read:empire']);
  TOKENS.noScope = await t.tokenWith(['read:events']);
  TOKENS.alpha = await tokenBoundTo(t, ['read:empire'], ['alpha-kit']);
  const user = (await t.app.identity.findUserByUsername('admin'))!;
  admin = { userId: user.id, username: user.username, scopes: new Set(SCOPES), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };
});
afterAll(async () => t?.close());

function cohort(query: Record<string, string>, token?: string | null): Promise<LightMyRequestResponse> {
  return t.call({ method: 'GET', url: `${V1}/analytics/cohort`, query, ...(token === undefined ? {} : { token }) });
}
/** A 200 answer, checked against the endpoint's response schema. */
async function ok(query: Record<string, string>, token?: string): Promise<{ cohortSize: number; buckets: { day: number; eligible: number; retained: number; pct: number }[]; [k: string]: unknown }> {
  const res = await cohort(query, token);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(checkBody(body), JSON.stringify(body)).toBe(true);
  expect(body.buckets.map((b: { day: number }) => b.day)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  return body;
}
const columns = (body: { buckets: { eligible: number; retained: number; pct: number }[] }) => ({
  eligible: body.buckets.map((b) => b.eligible),
  retained: body.buckets.map((b) => b.retained),
  pct: body.buckets.map((b) => b.pct),
});

async function createToken(name: string): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name, scopes: ['read:events'] } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ token: string }>().token;
}
async function use(token: string): Promise<void> {
  const res = await t.call({ method: 'GET', url: `${V1}/account`, token });
  expect(res.statusCode, res.body).toBe(200);
}
async function openIncident(toolset: string, title: string): Promise<string> {
  const incident = await withTransaction(t.app.database.db, (tx) =>
    t.app.empire.incidents.openWithin(tx, { principal: admin, requestId: `cohort-test-${title}` }, { toolset, severity: 'major', title, source: 'test', eventIds: [], details: {} }),
  );
  return incident.id;
}
async function writePostmortem(incidentId: string): Promise<void> {
  const res = await t.call({ method: 'POST', url: `${V1}/empire/incidents/${incidentId}/auto-draft`, payload: { persist: true } });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().persisted).toBe(true);
}

describe('developer-token-7d', () => {
  let a = '';

  it('counts a running cohort only where its days have begun', async () => {
    at(D, '09:00:00');
    a = await createToken('cohort-a');
    await createToken('cohort-b'); // never used
    at(D, '09:05:00');
    await use(a);
    at(plus(D, 1), '00:00:30');
    await use(a);
    at(plus(D, 1), '00:00:50');
    await use(a);

    at(plus(D, 1), '12:00:00');
    await createToken('cohort-c'); // created on D+1, never used
    const oneDay = await ok({ key: 'developer-token-7d', from: D, to: plus(D, 1) });
    expect(oneDay).toMatchObject({ key: 'developer-token-7d', anchorLabel: 'API token created', followLabel: 'token authenticated a request that day', from: D, to: plus(D, 1), cohortSize: 2 });
    expect(columns(oneDay)).toEqual({
      eligible: [2, 2, 0, 0, 0, 0, 0, 0],
      retained: [1, 1, 0, 0, 0, 0, 0, 0],
      pct: [0.5, 0.5, 0, 0, 0, 0, 0, 0],
    });
    // C's day 1 has not begun: it is counted on day 0 only.
    const twoDays = await ok({ key: 'developer-token-7d', from: D, to: plus(D, 2) });
    expect(twoDays.cohortSize).toBe(3);
    expect(columns(twoDays)).toEqual({
      eligible: [3, 2, 0, 0, 0, 0, 0, 0],
      retained: [1, 1, 0, 0, 0, 0, 0, 0],
      pct: [0.3333, 0.5, 0, 0, 0, 0, 0, 0],
    });
  });

  it('a token used on days D, D+1 and D+3 is retained on days 0, 1 and 3 only (not cumulative)', async () => {
    at(plus(D, 3), '23:59:59');
    await use(a);
    at(plus(D, 9), '10:00:00');
    await use(a); // day 9: outside the buckets
    at(plus(D, 12), '10:00:00');
    const body = await ok({ key: 'developer-token-7d', from: D, to: plus(D, 1) }, TOKENS.reader);
    expect(body.cohortSize).toBe(2);
    expect(columns(body)).toEqual({
      eligible: [2, 2, 2, 2, 2, 2, 2, 2],
      retained: [1, 1, 0, 1, 0, 0, 0, 0],
      pct: [0.5, 0.5, 0, 0.5, 0, 0, 0, 0],
    });
  });

  it('keeps a revoked token in its cohort', async () => {
    const tokens = (await t.call({ method: 'GET', url: `${V1}/tokens` })).json<{ tokens: { id: string; name: string }[] }>().tokens;
    const id = tokens.find((x) => x.name === 'cohort-a')!.id;
    expect((await t.call({ method: 'POST', url: `${V1}/tokens/${id}/revoke` })).statusCode).toBe(200);
    const body = await ok({ key: 'developer-token-7d', from: D, to: plus(D, 1) });
    expect(body.cohortSize).toBe(2);
    expect(columns(body).retained).toEqual([1, 1, 0, 1, 0, 0, 0, 0]);
  });

  it('answers an empty cohort with 8 zero buckets', async () => {
    const body = await ok({ key: 'developer-token-7d', from: '2026-01-01', to: '2026-02-01' });
    expect(body.cohortSize).toBe(0);
    expect(columns(body)).toEqual({ eligible: [0, 0, 0, 0, 0, 0, 0, 0], retained: [0, 0, 0, 0, 0, 0, 0, 0], pct: [0, 0, 0, 0, 0, 0, 0, 0] });
  });
});

describe('incident-postmortem-7d', () => {
  const ids = { i1: '', i2: '', i3: '', i4: '' };

  beforeAll(async () => {
    at(E, '10:00:00');
    ids.i1 = await openIncident('alpha-kit', 'alpha queue stuck');
    at(E, '11:00:00');
    await writePostmortem(ids.i1); // day 0
    at(E, '12:00:00');
    ids.i2 = await openIncident('beta-kit', 'beta lag');
    at(E, '13:00:00');
    ids.i3 = await openIncident('alpha-kit', 'alpha retries'); // never gets a postmortem
    at(plus(E, 1), '00:00:00');
    ids.i4 = await openIncident('alpha-kit', 'alpha on the next day'); // outside [E, E+1): `to` is exclusive
    await writePostmortem(ids.i4);
  });

  it('while running: days not begun are not eligible', async () => {
    at(plus(E, 2), '09:00:00');
    await writePostmortem(ids.i2); // day 2 of i2
    const body = await ok({ key: 'incident-postmortem-7d', from: E, to: plus(E, 1) });
    expect(body.cohortSize).toBe(3);
    expect(columns(body)).toEqual({
      eligible: [3, 3, 3, 0, 0, 0, 0, 0],
      retained: [1, 1, 2, 0, 0, 0, 0, 0],
      pct: [0.3333, 0.3333, 0.6667, 0, 0, 0, 0, 0],
    });
  });

  it('counts the first postmortem on or before each day, cumulatively; a replacement does not move it', async () => {
    at(plus(E, 5), '08:00:00');
    await writePostmortem(ids.i1); // replaces i1's postmortem
    at(plus(E, 10), '08:00:00');
    const body = await ok({ key: 'incident-postmortem-7d', from: E, to: plus(E, 1) });
    expect(body).toMatchObject({ key: 'incident-postmortem-7d', anchorLabel: 'empire incident opened', followLabel: 'incident has a postmortem', from: E, to: plus(E, 1), cohortSize: 3 });
    expect(columns(body)).toEqual({
      eligible: [3, 3, 3, 3, 3, 3, 3, 3],
      retained: [1, 1, 2, 2, 2, 2, 2, 2],
      pct: [0.3333, 0.3333, 0.6667, 0.6667, 0.6667, 0.6667, 0.6667, 0.6667],
    });
    const wider = await ok({ key: 'incident-postmortem-7d', from: E, to: plus(E, 2) });
    expect(wider.cohortSize).toBe(4);
    expect(columns(wider).retained).toEqual([2, 2, 3, 3, 3, 3, 3, 3]);
  });

  it('answers the same state with byte-identical bodies apart from generatedAt', async () => {
    const strip = (res: LightMyRequestResponse) => res.body.replace(/"generatedAt":"[^"]*"/, '"generatedAt":""');
    for (const key of ['incident-postmortem-7d', 'developer-token-7d']) {
      const query = { key, from: key === 'developer-token-7d' ? D : E, to: plus(key === 'developer-token-7d' ? D : E, 2) };
      const first = await cohort(query);
      clock.advance(60_000);
      const second = await cohort(query, TOKENS.reader);
      expect(first.statusCode).toBe(200);
      expect(strip(second)).toBe(strip(first));
      expect(second.json().generatedAt).not.toBe(first.json().generatedAt);
    }
  });
});

describe('a token bound to toolsets', () => {
  it('gets 403 for developer-token-7d: it counts every API token, so it spans every toolset', async () => {
    const res = await cohort({ key: 'developer-token-7d', from: D, to: plus(D, 1) }, TOKENS.alpha);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({
      schema: 'svc-error.v1',
      reason: 'forbidden',
      human: 'This token is bound to toolsets; cohort developer-token-7d, which counts every API token, spans every toolset.',
    });
  });

  it('counts only its toolsets\' incidents for incident-postmortem-7d', async () => {
    const body = await ok({ key: 'incident-postmortem-7d', from: E, to: plus(E, 1) }, TOKENS.alpha);
    expect(body.cohortSize).toBe(2); // i1 and i3; beta-kit's i2 is not counted
    expect(columns(body)).toEqual({
      eligible: [2, 2, 2, 2, 2, 2, 2, 2],
      retained: [1, 1, 1, 1, 1, 1, 1, 1],
      pct: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
    });
  });
});

describe('refusals', () => {
  it('400 unknown-cohort for a key that is not registered, naming the registered keys', async () => {
    for (const key of ['weekly-signups', 'DEVELOPER-TOKEN-7D', 'toString', '__proto__']) {
      const res = await cohort({ key, from: D, to: plus(D, 1) });
      expect(res.statusCode, key).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unknown-cohort', field: 'query.key' });
      expect(res.json().human).toContain('developer-token-7d, incident-postmortem-7d');
    }
  });

  it('400 for bad dates and ranges', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ key: 'developer-token-7d', to: D }, 'invalid-query', 'query.from'],
      [{ key: 'developer-token-7d', from: D }, 'invalid-query', 'query.to'],
      [{ from: D, to: plus(D, 1) }, 'invalid-query', 'query.key'],
      [{ key: 'developer-token-7d', from: '2026-02-30', to: '2026-03-04' }, 'invalid-query', 'query.from'],
      [{ key: 'developer-token-7d', from: '2026-11-02T00:00:00Z', to: '2026-11-04' }, 'invalid-query', 'query.from'],
      [{ key: 'incident-postmortem-7d', from: '1969-12-31', to: '1970-01-02' }, 'invalid-date', 'query.from'],
      [{ key: 'incident-postmortem-7d', from: D, to: D }, 'invalid-range', 'query.to'],
      [{ key: 'incident-postmortem-7d', from: plus(D, 1), to: D }, 'invalid-range', 'query.to'],
      [{ key: 'incident-postmortem-7d', from: '2025-11-01', to: '2026-11-03' }, 'invalid-range', 'query.to'],
    ];
    for (const [query, reason, field] of cases) {
      const res = await cohort(query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json(), JSON.stringify(query)).toMatchObject({ schema: 'svc-error.v1', reason, field });
    }
    // 366 days is the most a read covers.
    expect((await cohort({ key: 'incident-postmortem-7d', from: '2025-11-01', to: '2026-11-02' })).statusCode).toBe(200);
  });

  it('401 without a credential, 403 without read:empire', async () => {
    expect((await cohort({ key: 'developer-token-7d', from: D, to: plus(D, 1) }, null)).statusCode).toBe(401);
    const res = await cohort({ key: 'developer-token-7d', from: D, to: plus(D, 1) }, TOKENS.noScope);
    expect(res.statusCode).toBe(403);
    expect(res.json().reason).toBe('forbidden');
  });
});

describe('the registry entry', () => {
  it('shows an example response and a query example its schemas accept', () => {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    expect(checkBody(endpoint.example), JSON.stringify(checkBody)).toBe(true);
    const query = endpoint.query as { examples?: unknown[] };
    expect(query.examples?.length).toBe(1);
    expect(ajv.compile(plainSchema(endpoint.query!) as object)(query.examples![0])).toBe(true);
    expect(endpoint).toMatchObject({ method: 'GET', path: `${V1}/analytics/cohort`, scope: 'read:empire', tag: 'analytics', uiPath: '/analytics', kind: 'read', auth: 'session-or-bearer', schemaId: 'svc-analytics-cohort.v1' });
  });
});
