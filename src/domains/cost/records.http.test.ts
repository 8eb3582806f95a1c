import { validate } from '@readme/openapi-parser';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sql } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { buildOpenApi, plainSchema } from '../../platform/http/openapi.ts';
import type { Endpoint } from '../../platform/http/registry.ts';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { tokenBoundTo } from '../../../test/helpers/empire.ts';

/**
 * The cost records and rollups over HTTP (docs/cost/README.md): validation, auth, the answers' shapes,
 * through the app as src/app.ts wires it (createCostDomain), with real tokens; the rules
 * themselves are covered by src/domains/cost/records/service.test.ts.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const clock = new ManualClock('2026-11-26T08:00:00.000Z');
let t: TestApp;
/** The wired registry's cost-record entries (the budgets and alerts are src/domains/cost/alerts.http.test.ts's). */
let endpoints: Endpoint[];

beforeAll(async () => {
  t = await startTestApp({ clock });
  endpoints = t.app.endpoints.filter((e) => e.tag === 'cost' && ![`${V1}/cost/budgets`, `${V1}/cost/alerts`].some((p) => e.path.startsWith(p)));
});
afterAll(async () => t?.close());

const call = (options: InjectOptions & { token?: string | null }) => t.call(options);
const post = (records: unknown, token?: string | null) => call({ method: 'POST', url: `${V1}/cost/records`, payload: { records }, ...(token !== undefined ? { token } : {}) });
const get = (path: string, query: Record<string, string>, token?: string | null) => call({ method: 'GET', url: `${V1}/cost/${path}`, query, ...(token !== undefined ? { token } : {}) });

const record = (over: Record<string, unknown> = {}) => ({ date: '2026-11-10', toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt-4o-mini', amountUsd: 1, ...over });

const count = async () => rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM cost_records`))[0]!.n;

describe('the registry entries', () => {
  it('show examples that satisfy their own schemas, and a valid OpenAPI document', async () => {
    const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
    for (const e of endpoints) {
      expect(ajv.compile(plainSchema(e.responseSchema) as object)(e.example), e.id).toBe(true);
      for (const part of [e.query, e.body]) {
        if (part === null) continue;
        const examples = (part as { examples?: unknown[] }).examples;
        expect(examples?.length, e.id).toBe(1);
        expect(ajv.compile(plainSchema(part) as object)(examples![0]), e.id).toBe(true);
      }
      expect(e).toMatchObject({ tag: 'cost', uiPath: '/cost', auth: 'session-or-bearer' });
    }
    expect(endpoints.map((e) => [e.id, e.method, e.path, e.scope])).toEqual([
      ['upsertCostRecords', 'POST', `${V1}/cost/records`, 'write:alerts'],
      ['readCostRollup', 'GET', `${V1}/cost/rollup`, 'read:empire'],
      ['readCostByToolset', 'GET', `${V1}/cost/by-toolset`, 'read:empire'],
    ]);
    const result = await validate(structuredClone(buildOpenApi(endpoints, 'http://localhost:8080')) as never);
    expect(result.valid, JSON.stringify(result)).toBe(true);
  });

  it('answer 2xx to their request examples sent as they are', async () => {
    for (const e of endpoints) {
      const example = ((e.body ?? e.query) as { examples: Record<string, unknown>[] }).examples[0]!;
      const res = e.method === 'POST' ? await call({ method: 'POST', url: e.path, payload: example }) : await call({ method: 'GET', url: e.path, query: example as Record<string, string> });
      expect(res.statusCode, `${e.id}: ${res.body}`).toBe(200);
      expect(res.json().schema).toBe(e.schemaId);
    }
  });
});

describe('POST cost/records', () => {
  beforeEach(async () => {
    await t.app.database.db.execute(sql`DELETE FROM cost_records`);
  });

  it('upserts, replacing a key posted again; the last of a key twice in one request wins', async () => {
    const first = await post([record({ amountUsd: 5, units: 10 }), record({ sku: 'b', amountUsd: 1 })]);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ schema: 'svc-cost-records.v1', ok: true, upserted: 2 });
    const second = await post([record({ amountUsd: 7.25 }), record({ amountUsd: 0.5, units: 3 })]);
    expect(second.json()).toMatchObject({ ok: true, upserted: 1 });
    const rollup = await get('rollup', { from: '2026-11-10', to: '2026-11-11', group: 'sku' });
    expect(rollup.json().rows).toEqual([
      { key: 'b', amountUsd: 1, units: 0, dayCount: 1 },
      { key: 'gpt-4o-mini', amountUsd: 0.5, units: 3, dayCount: 1 },
    ]);
  });

  it('refuses a date that is not on the calendar, naming the record', async () => {
    for (const date of ['2026-02-30', '2026-02-29', '2026-11-31', '2026-1-01', '26-11-01', '2026-11-10T00:00:00Z']) {
      const res = await post([record(), record({ date })]);
      expect(res.statusCode, date).toBe(400);
      expect(res.json(), date).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field: 'body.records[1].date' });
    }
    const early = await post([record({ date: '1969-12-31' })]);
    expect(early.json()).toMatchObject({ reason: 'invalid-date', field: 'body.records[0].date' });
    expect(await count()).toBe(0);
  });

  it('refuses more than 6 decimal places and values out of range', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ amountUsd: 1.0000001 }, 'invalid-amount', 'body.records[0].amountUsd'],
      [{ amountUsd: 0.1 + 0.2 }, 'invalid-amount', 'body.records[0].amountUsd'],
      [{ units: 2.1234567 }, 'invalid-amount', 'body.records[0].units'],
      [{ units: 123456789012.1234 }, 'invalid-amount', 'body.records[0].units'],
      [{ units: -1 }, 'invalid-body', 'body.records[0].units'],
      [{ amountUsd: 1_000_000_000 }, 'invalid-body', 'body.records[0].amountUsd'],
      [{ amountUsd: '1.5' }, 'invalid-body', 'body.records[0].amountUsd'],
    ];
    for (const [over, reason, field] of cases) {
      const res = await post([record(over)]);
      expect(res.statusCode, JSON.stringify(over)).toBe(400);
      expect(res.json(), JSON.stringify(over)).toMatchObject({ reason, field });
    }
    const exponent = await call({ method: 'POST', url: `${V1}/cost/records`, payload: '{"records":[{"date":"2026-11-10","toolset":"crawler-lab","vendor":"v","sku":"s","amountUsd":1e-7}]}', headers: { 'content-type': 'application/json' } });
    expect(exponent.json()).toMatchObject({ reason: 'invalid-amount', human: 'body.records[0].amountUsd has more than 6 decimal places; round it to 6 (got 1e-7).' });
    // Negative amounts are credits; exactly 6 decimals and the largest amount are fine.
    expect((await post([record({ amountUsd: -999_999_999.999999, units: 0.000001 })])).statusCode).toBe(200);
  });

  it('refuses missing fields, unknown fields, bad text and bad counts', async () => {
    for (const missing of ['date', 'toolset', 'vendor', 'sku', 'amountUsd']) {
      const r: Record<string, unknown> = record();
      delete r[missing];
      const res = await post([r]);
      expect(res.statusCode, missing).toBe(400);
      expect(res.json(), missing).toMatchObject({ reason: 'invalid-body', field: `body.records[0].${missing}`, human: `body.records[0].${missing} is required.` });
    }
    expect((await post([record({ currency: 'EUR' })])).json()).toMatchObject({ reason: 'invalid-body', field: 'body.records[0].currency' });
    expect((await post([record({ vendor: '' })])).json()).toMatchObject({ reason: 'invalid-body', field: 'body.records[0].vendor' });
    expect((await post([record({ sku: 'x'.repeat(129) })])).json()).toMatchObject({ reason: 'invalid-body', field: 'body.records[0].sku' });
    expect((await post([record({ region: 'eu\nwest' })])).json()).toMatchObject({ reason: 'invalid-body', field: 'body.records[0].region' });
    expect((await post([record({ toolset: 'lab!' })])).json()).toMatchObject({ reason: 'invalid-toolset', field: 'body.records[0].toolset' });
    expect((await post([])).json()).toMatchObject({ reason: 'invalid-body', field: 'body.records' });
    expect((await call({ method: 'POST', url: `${V1}/cost/records`, payload: {} })).json()).toMatchObject({ reason: 'invalid-body', field: 'body.records' });
    expect(await count()).toBe(0);
  });

  it('takes 5000 records in one request and refuses 5001', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => record({ sku: `sku-${i}`, workspace: 'w'.repeat(100), region: 'r'.repeat(100), amountUsd: Number(`${i + 1}e-6`) }));
    const refused = await post(many(5001));
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ reason: 'invalid-body', field: 'body.records' });
    expect(await count()).toBe(0);
    // About 1.6 MB: over the server's 1 MiB, within this route's 4 MiB.
    const accepted = await post(many(5000));
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ ok: true, upserted: 5000 });
    // 1 + 2 + … + 5000 millionths = 12,502,500 millionths.
    expect((await get('rollup', { from: '2026-11-10', to: '2026-11-11' })).json().total).toEqual({ amountUsd: 12.5025, rows: 5000 });
  });

  it('needs write:alerts, and a token bound to toolsets writes its own only', async () => {
    expect((await post([record()], null)).statusCode).toBe(401);
    const reader = await t.tokenWith(['read:empire']);
    const refused = await post([record()], reader);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().reason).toBe('forbidden');
    const bound = await tokenBoundTo(t, ['write:alerts'], ['crawler-lab']);
    expect((await post([record()], bound)).statusCode).toBe(200);
    const other = await post([record(), record({ toolset: 'triage-bot' })], bound);
    expect(other.statusCode).toBe(403);
    expect(other.json().human).toBe('This token is bound to other toolsets and may not write cost records of toolset triage-bot.');
  });

  it('audits the write with counts', async () => {
    const res = await post([record(), record({ date: '2026-11-12' }), record()]);
    expect(res.statusCode).toBe(200);
    const requestId = res.headers['x-request-id'];
    // The operator audit log as GET {v1}/honeypot/ops/audit answers it, newest first.
    const audit = await call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb: 'cost.records-upsert', limit: '1' } });
    expect(audit.statusCode, audit.body).toBe(200);
    const rows = audit.json<{ rows: { verb: string; after: Record<string, unknown>; requestId: string | null }[] }>().rows;
    expect(rows[0]).toMatchObject({ verb: 'cost.records-upsert', after: { received: 3, upserted: 2, firstDay: '2026-11-10', lastDay: '2026-11-12' } });
    expect(rows[0]!.requestId).toBe(requestId);
  });
});

describe('GET cost/rollup and cost/by-toolset', () => {
  beforeAll(async () => {
    await t.app.database.db.execute(sql`DELETE FROM cost_records`);
    const res = await post([
      record({ date: '2026-11-01', amountUsd: 3, units: 1 }),
      record({ date: '2026-11-03', sku: 'gpt-4o', amountUsd: 1.5 }),
      record({ date: '2026-11-03', toolset: 'triage-bot', vendor: 'aws', sku: 'ec2', region: 'eu', amountUsd: 4.5 }),
      record({ date: '2026-11-04', amountUsd: 100 }),
    ]);
    expect(res.statusCode, res.body).toBe(200);
  });

  it('rolls up with the default group, exact order and totals', async () => {
    const res = await get('rollup', { from: '2026-11-01', to: '2026-11-04' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      schema: 'svc-cost-rollup.v1',
      group: 'toolset',
      filters: { workspace: null, toolset: null, vendor: null, region: null },
      from: '2026-11-01',
      to: '2026-11-04',
      total: { amountUsd: 9, rows: 3 },
      rows: [
        { key: 'crawler-lab', amountUsd: 4.5, units: 1, dayCount: 2 },
        { key: 'triage-bot', amountUsd: 4.5, units: 0, dayCount: 1 },
      ],
    });
    const filtered = (await get('rollup', { from: '2026-11-01', to: '2026-11-04', group: 'vendor', region: 'eu' })).json();
    expect(filtered).toMatchObject({ group: 'vendor', filters: { region: 'eu' }, rows: [{ key: 'aws', amountUsd: 4.5 }] });
  });

  it('sums only a bound token\'s own toolsets, and refuses it the others', async () => {
    const bound = await tokenBoundTo(t, ['read:empire'], ['crawler-lab']);
    const read = (path: string, query: Record<string, string>) => t.call({ method: 'GET', url: `${V1}/cost/${path}`, query, token: bound });
    const own = await read('rollup', { from: '2026-11-01', to: '2026-11-04', group: 'vendor' });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json()).toMatchObject({ total: { amountUsd: 4.5, rows: 2 }, rows: [{ key: 'openai', amountUsd: 4.5 }] });
    for (const [path, query] of [
      ['rollup', { from: '2026-11-01', to: '2026-11-04', toolset: 'triage-bot' }],
      ['by-toolset', { from: '2026-11-01', to: '2026-11-04', toolset: 'triage-bot' }],
    ] as const) {
      const refused = await read(path, query);
      expect(refused.statusCode, path).toBe(403);
      expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden', human: 'This token is bound to other toolsets and may not read the cost of toolset triage-bot.' });
    }
    expect((await read('by-toolset', { from: '2026-11-01', to: '2026-11-04', toolset: 'crawler-lab' })).statusCode).toBe(200);
  });

  it('refuses bad queries with the reason and field', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ to: '2026-11-04' }, 'invalid-query', 'query.from'],
      [{ from: '2026-11-01' }, 'invalid-query', 'query.to'],
      [{ from: '2026-02-30', to: '2026-03-04' }, 'invalid-query', 'query.from'],
      [{ from: '2026-11-04', to: '2026-11-04' }, 'invalid-range', 'query.to'],
      [{ from: '2026-11-05', to: '2026-11-04' }, 'invalid-range', 'query.to'],
      [{ from: '2025-11-01', to: '2026-11-04' }, 'invalid-range', 'query.to'],
      [{ from: '2026-11-01', to: '2026-11-04', group: 'region' }, 'invalid-query', 'query.group'],
      [{ from: '2026-11-01', to: '2026-11-04', limit: '5' }, 'invalid-query', 'query.limit'],
      [{ from: '2026-11-01', to: '2026-11-04', vendor: 'v'.repeat(129) }, 'invalid-query', 'query.vendor'],
    ];
    for (const [query, reason, field] of cases) {
      const res = await get('rollup', query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json(), JSON.stringify(query)).toMatchObject({ schema: 'svc-error.v1', reason, field });
    }
    expect((await get('by-toolset', { toolset: 'crawler-lab', from: '2026-11-01' })).json()).toMatchObject({ reason: 'invalid-query', field: 'query.to' });
    expect((await get('by-toolset', { from: '2026-11-01', to: '2026-11-02' })).json()).toMatchObject({ reason: 'invalid-query', field: 'query.toolset' });
    expect((await get('by-toolset', { toolset: 'crawler-lab', from: '2026-11-01', to: '2027-11-03' })).json()).toMatchObject({ reason: 'invalid-range' });
  });

  it('answers a dense per-day series', async () => {
    const res = await get('by-toolset', { toolset: 'crawler-lab', from: '2026-10-31', to: '2026-11-05' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      schema: 'svc-cost-by-toolset.v1',
      toolset: 'crawler-lab',
      total: { amountUsd: 104.5 },
      series: [
        { dimDate: '2026-10-31', amountUsd: 0 },
        { dimDate: '2026-11-01', amountUsd: 3 },
        { dimDate: '2026-11-02', amountUsd: 0 },
        { dimDate: '2026-11-03', amountUsd: 1.5 },
        { dimDate: '2026-11-04', amountUsd: 100 },
      ],
    });
  });

  it('needs read:empire', async () => {
    expect((await get('rollup', { from: '2026-11-01', to: '2026-11-04' }, null)).statusCode).toBe(401);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await get('rollup', { from: '2026-11-01', to: '2026-11-04' }, writer)).statusCode).toBe(403);
    expect((await get('by-toolset', { toolset: 'crawler-lab', from: '2026-11-01', to: '2026-11-04' }, writer)).statusCode).toBe(403);
    const reader = await t.tokenWith(['read:empire']);
    expect((await get('by-toolset', { toolset: 'crawler-lab', from: '2026-11-01', to: '2026-11-04' }, reader)).statusCode).toBe(200);
  });
});

describe('hostile query values', () => {
  it('never answer 5xx, and refusals are svc-error.v1 (as test/hostile-input.test.ts checks the wired registry)', async () => {
    const hostile = ['\u0000', 'a\u0000b', '', ' ', 'x'.repeat(10_000), "' OR 1=1 --", '%', '_', '\u202e\ud83d\ude00', '2026-02-29', '9999-12-31', '0000-01-01', '-1', '1e309'];
    for (const e of endpoints.filter((x) => x.method === 'GET')) {
      const example = (e.query as { examples: Record<string, string>[] }).examples[0]!;
      for (const name of Object.keys(example)) {
        for (const value of hostile) {
          const res = await call({ method: 'GET', url: `${e.path}?${new URLSearchParams({ ...example, [name]: value }).toString()}` });
          const what = `${e.id} ${name}=${JSON.stringify(value.slice(0, 20))}`;
          expect(res.statusCode, `${what}: ${res.body.slice(0, 200)}`).toBeLessThan(500);
          if (res.statusCode >= 400) expect(res.json(), what).toMatchObject({ schema: 'svc-error.v1' });
        }
      }
    }
  });
});
