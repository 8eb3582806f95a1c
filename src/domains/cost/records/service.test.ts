import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { createAuditLog } from '../../../platform/audit/service.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { formatMicro } from '../../../platform/money.ts';
import { dayNumber, dayText } from '../../../platform/days.ts';
import { compareRollupRows, type CostRecordInput, createCostRecordService, RANGE_MAX_DAYS } from './service.ts';

// Cost records and rollups (docs/cost/README.md): the upsert, the rollup's grouping, order, filters and
// totals, the per-day series, the budgets' spend, and exact money over thousands of records.

describe('compareRollupRows (pure)', () => {
  it('orders by exact amount descending, then key by UTF-16 code units', () => {
    const rows = [
      { key: 'x～', amountMicroUsd: 5n },
      { key: 'a', amountMicroUsd: 5n },
      { key: 'big', amountMicroUsd: 10n ** 18n + 1n },
      { key: 'x😀', amountMicroUsd: 5n },
      { key: 'B', amountMicroUsd: 5n },
      { key: 'bigger', amountMicroUsd: 10n ** 18n + 2n },
      { key: 'é', amountMicroUsd: 5n },
      { key: 'neg', amountMicroUsd: -1n },
    ];
    // 😀 is the surrogate pair D83D DE00, below ～ (FF5E) by code units though above it by code points.
    expect(rows.sort(compareRollupRows).map((r) => r.key)).toEqual(['bigger', 'big', 'B', 'a', 'x😀', 'x～', 'é', 'neg']);
  });
});

// ——— against a database ———

const NOW = new Date('2026-11-26T08:00:00.000Z');
const clock = new ManualClock(NOW);
let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
}, 180_000);
afterAll(async () => {
  await testDb?.drop();
});

const admin: Principal = { userId: 'u-admin', username: 'admin', scopes: new Set(), toolsets: null, via: 'bearer', tokenId: null, sessionId: null };
const ctx = (requestId = 'req-test', principal: Principal = admin) => ({ principal, requestId });
const service = () => createCostRecordService({ db: database.db, clock, audit: createAuditLog({ clock }) });

const record = (over: Partial<CostRecordInput> = {}): CostRecordInput => ({ date: '2026-11-10', toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt-4o-mini', amountUsd: 1, ...over });

async function stored() {
  return rowsOf<{ day: string; toolset: string; vendor: string; sku: string; workspace: string; region: string; amount: string; units: string }>(
    await database.db.execute(
      sql`SELECT to_char(day, 'YYYY-MM-DD') AS day, toolset, vendor, sku, workspace, region, amount_micro_usd::text AS amount, units_micro::text AS units FROM cost_records ORDER BY 1, 2, 3, 4, 5, 6`,
    ),
  );
}

async function reset() {
  await database.db.execute(sql`DELETE FROM cost_records`);
}

describe('upsert', () => {
  beforeEach(reset);

  it('stores exact millionths, \'\' for a missing workspace or region, 0 for missing units', async () => {
    const answer = await service().upsert(ctx(), [
      record({ amountUsd: 0.1, units: 1234.5 }),
      record({ sku: 'gpt-4o', workspace: 'proj-a', region: 'us', amountUsd: -2.000001, units: 0.000001 }),
    ]);
    expect(answer).toEqual({ ok: true, upserted: 2 });
    expect(await stored()).toEqual([
      { day: '2026-11-10', toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt-4o', workspace: 'proj-a', region: 'us', amount: '-2000001', units: '1' },
      { day: '2026-11-10', toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt-4o-mini', workspace: '', region: '', amount: '100000', units: '1234500000' },
    ]);
  });

  it('replaces amount and units of a key posted again, and keeps every other key', async () => {
    await service().upsert(ctx(), [record({ amountUsd: 5, units: 10 }), record({ region: 'eu', amountUsd: 7 })]);
    clock.advance(60_000);
    expect(await service().upsert(ctx(), [record({ amountUsd: 3.5 })])).toEqual({ ok: true, upserted: 1 });
    expect((await stored()).map((r) => [r.region, r.amount, r.units])).toEqual([
      ['', '3500000', '0'],
      ['eu', '7000000', '0'],
    ]);
    const [row] = rowsOf<{ updated_at: string }>(await database.db.execute(sql`SELECT updated_at::text FROM cost_records WHERE region = ''`));
    expect(new Date(row!.updated_at).getTime()).toBe(clock.now().getTime());
  });

  it('keeps the last of two records with one key in one request, counting the key once', async () => {
    const answer = await service().upsert(ctx(), [record({ amountUsd: 1 }), record({ sku: 'other', amountUsd: 9 }), record({ amountUsd: 2, units: 4 })]);
    expect(answer).toEqual({ ok: true, upserted: 2 });
    expect((await stored()).map((r) => [r.sku, r.amount, r.units])).toEqual([
      ['gpt-4o-mini', '2000000', '4000000'],
      ['other', '9000000', '0'],
    ]);
  });

  it('tells keys apart by every member: \'\' workspace is not a missing one twice, but the same', async () => {
    await service().upsert(ctx(), [record({ workspace: '' }), record({}), record({ workspace: 'w' }), record({ region: '' })]);
    expect((await stored()).map((r) => r.workspace)).toEqual(['', 'w']);
  });

  it('audits counts, not the batch, in the same transaction', async () => {
    await service().upsert(ctx('req-a'), [record({ date: '2026-11-01' }), record({ date: '2026-11-03', toolset: 'triage-bot' })]);
    await service().upsert(ctx('req-b'), [record({ date: '2026-11-01', amountUsd: 4 }), record({ date: '2026-11-02' }), record({ date: '2026-11-02' })]);
    const audit = rowsOf<{ verb: string; target: string; actor: string; before: unknown; after: unknown }>(
      await database.db.execute(sql`SELECT verb, target, actor, before, after FROM operator_audit WHERE request_id IN ('req-a', 'req-b') ORDER BY seq_no`),
    );
    expect(audit).toEqual([
      {
        verb: 'cost.records-upsert',
        target: 'cost-records:2026-11-01..2026-11-03',
        actor: 'admin',
        before: null,
        after: { received: 2, upserted: 2, inserted: 2, replaced: 0, firstDay: '2026-11-01', lastDay: '2026-11-03', toolsetCount: 2, toolsets: ['crawler-lab', 'triage-bot'] },
      },
      {
        verb: 'cost.records-upsert',
        target: 'cost-records:2026-11-01..2026-11-02',
        actor: 'admin',
        before: null,
        after: { received: 3, upserted: 2, inserted: 1, replaced: 1, firstDay: '2026-11-01', lastDay: '2026-11-02', toolsetCount: 1, toolsets: ['crawler-lab'] },
      },
    ]);
  });

  it('writes nothing when any record is refused, naming the record', async () => {
    const s = service();
    await expect(s.upsert(ctx(), [record(), record({ date: '2026-02-30' })])).rejects.toMatchObject({ status: 400, reason: 'invalid-date', details: { field: 'body.records[1].date' } });
    await expect(s.upsert(ctx(), [record(), record({ amountUsd: 1.1234567 })])).rejects.toMatchObject({
      status: 400,
      reason: 'invalid-amount',
      details: { field: 'body.records[1].amountUsd' },
    });
    await expect(s.upsert(ctx(), [record({ units: -1 })])).rejects.toMatchObject({ reason: 'invalid-amount', details: { field: 'body.records[0].units' } });
    await expect(s.upsert(ctx(), [record({ amountUsd: 1_000_000_000 })])).rejects.toMatchObject({ reason: 'invalid-amount' });
    await expect(s.upsert(ctx(), [record({ toolset: '9lab' })])).rejects.toMatchObject({ status: 400, reason: 'invalid-toolset', details: { field: 'body.records[0].toolset' } });
    await expect(s.upsert(ctx(), [])).rejects.toMatchObject({ status: 400, reason: 'invalid-body' });
    expect(await stored()).toEqual([]);
  });

  it('lets a token bound to toolsets write its own toolsets only', async () => {
    const bound: Principal = { ...admin, toolsets: new Set(['crawler-lab']) };
    await expect(service().upsert(ctx('req-bound', bound), [record(), record({ toolset: 'triage-bot' })])).rejects.toMatchObject({ status: 403, reason: 'forbidden' });
    expect(await stored()).toEqual([]);
    expect(await service().upsert(ctx('req-bound', bound), [record()])).toEqual({ ok: true, upserted: 1 });
  });
});

describe('rollup', () => {
  beforeAll(async () => {
    await reset();
    await service().upsert(ctx(), [
      // crawler-lab: 10 + 2.5 on 11-01 (two skus, one day), 0.000001 on 11-15: 12.500001 over 2 days, 3 records.
      record({ date: '2026-11-01', vendor: 'openai', sku: 'gpt-4o', workspace: 'ws-a', region: 'us', amountUsd: 10, units: 100 }),
      record({ date: '2026-11-01', vendor: 'openai', sku: 'gpt-4o-mini', workspace: 'ws-a', region: 'us', amountUsd: 2.5, units: 1000 }),
      record({ date: '2026-11-15', vendor: 'aws', sku: 'ec2', workspace: 'ws-b', region: 'eu', amountUsd: 0.000001, units: 24 }),
      // triage-bot: 12.500001 too (a tie with crawler-lab), one record a day on 11-29 and 11-30.
      record({ date: '2026-11-29', toolset: 'triage-bot', vendor: 'openai', sku: 'gpt-4o', amountUsd: 12 }),
      record({ date: '2026-11-30', toolset: 'triage-bot', vendor: 'aws', sku: 'credit', amountUsd: 0.500001 }),
      // Outside [11-01, 12-01): the day before and `to` itself.
      record({ date: '2026-10-31', amountUsd: 1000 }),
      record({ date: '2026-12-01', amountUsd: 1000 }),
      // A credit: negative amounts subtract.
      record({ date: '2026-11-20', toolset: 'edge-proxy', vendor: 'aws', sku: 'credit', amountUsd: -3 }),
    ]);
  });

  const november = { from: '2026-11-01', to: '2026-12-01' };

  it('groups by toolset by default, sorted by amount descending then key, with exact totals', async () => {
    expect(await service().rollup(november, null)).toEqual({
      group: 'toolset',
      filters: { workspace: null, toolset: null, vendor: null, region: null },
      from: '2026-11-01',
      to: '2026-12-01',
      total: { amountUsd: 22.000002, rows: 6 },
      rows: [
        { key: 'crawler-lab', amountUsd: 12.500001, units: 1124, dayCount: 2 },
        { key: 'triage-bot', amountUsd: 12.500001, units: 0, dayCount: 2 },
        { key: 'edge-proxy', amountUsd: -3, units: 0, dayCount: 1 },
      ],
    });
  });

  it('groups by vendor and by sku', async () => {
    expect((await service().rollup({ ...november, group: 'vendor' }, null)).rows).toEqual([
      { key: 'openai', amountUsd: 24.5, units: 1100, dayCount: 2 },
      { key: 'aws', amountUsd: -2.499998, units: 24, dayCount: 3 },
    ]);
    expect((await service().rollup({ ...november, group: 'sku' }, null)).rows).toEqual([
      { key: 'gpt-4o', amountUsd: 22, units: 100, dayCount: 2 },
      { key: 'gpt-4o-mini', amountUsd: 2.5, units: 1000, dayCount: 1 },
      { key: 'ec2', amountUsd: 0.000001, units: 24, dayCount: 1 },
      { key: 'credit', amountUsd: -2.499999, units: 0, dayCount: 2 },
    ]);
  });

  it('includes from and excludes to', async () => {
    expect((await service().rollup({ from: '2026-10-31', to: '2026-11-01' }, null)).rows).toEqual([{ key: 'crawler-lab', amountUsd: 1000, units: 0, dayCount: 1 }]);
    expect((await service().rollup({ from: '2026-12-01', to: '2026-12-02' }, null)).total).toEqual({ amountUsd: 1000, rows: 1 });
    expect((await service().rollup({ from: '2026-11-30', to: '2026-12-01' }, null)).rows.map((r) => r.key)).toEqual(['triage-bot']);
  });

  it('keeps only records matching every filter, echoing them', async () => {
    const byVendor = await service().rollup({ ...november, group: 'sku', vendor: 'aws' }, null);
    expect(byVendor.filters).toEqual({ workspace: null, toolset: null, vendor: 'aws', region: null });
    expect(byVendor.rows.map((r) => r.key)).toEqual(['ec2', 'credit']);
    expect((await service().rollup({ ...november, workspace: 'ws-a' }, null)).total).toEqual({ amountUsd: 12.5, rows: 2 });
    expect((await service().rollup({ ...november, region: 'eu', toolset: 'crawler-lab' }, null)).rows).toEqual([{ key: 'crawler-lab', amountUsd: 0.000001, units: 24, dayCount: 1 }]);
    // '' matches records that name no workspace.
    expect((await service().rollup({ ...november, workspace: '' }, null)).rows.map((r) => r.key)).toEqual(['triage-bot', 'edge-proxy']);
    expect((await service().rollup({ ...november, toolset: 'nobody', vendor: 'aws' }, null)).rows).toEqual([]);
  });

  it('answers an empty range with no rows and zero totals', async () => {
    expect(await service().rollup({ from: '2025-01-01', to: '2025-02-01', group: 'sku' }, null)).toMatchObject({ total: { amountUsd: 0, rows: 0 }, rows: [] });
  });

  it('refuses dates that are not calendar dates and ranges that are empty or too long', async () => {
    const s = service();
    await expect(s.rollup({ from: '2026-02-30', to: '2026-03-05' }, null)).rejects.toMatchObject({ status: 400, reason: 'invalid-date', details: { field: 'query.from' } });
    await expect(s.rollup({ from: '2026-11-01', to: '2026-11-31' }, null)).rejects.toMatchObject({ status: 400, reason: 'invalid-date', details: { field: 'query.to' } });
    await expect(s.rollup({ from: '2026-11-01', to: '2026-11-01' }, null)).rejects.toMatchObject({ status: 400, reason: 'invalid-range' });
    await expect(s.rollup({ from: '2026-11-02', to: '2026-11-01' }, null)).rejects.toMatchObject({ status: 400, reason: 'invalid-range' });
    // 2028 is a leap year: 2028-01-01 .. 2029-01-01 is 366 days, the most; one more is refused.
    await expect(s.rollup({ from: '2028-01-01', to: '2029-01-01' }, null)).resolves.toMatchObject({ rows: [] });
    expect(dayNumber('2029-01-01')! - dayNumber('2028-01-01')!).toBe(RANGE_MAX_DAYS);
    await expect(s.rollup({ from: '2027-12-31', to: '2029-01-01' }, null)).rejects.toMatchObject({ status: 400, reason: 'invalid-range', human: 'from..to covers 367 days; at most 366 are read at once.' });
  });
});

describe('rollup order is exact where doubles tie', () => {
  beforeAll(reset);

  it('puts the larger sum first even when both answer the same JSON number', async () => {
    // Two toolsets, 1100 records each of 999,999,999.999999: sums near 1.1e12 with 6 decimals
    // (19 digits), beyond what a double tells apart. `zz-lab` has one record a millionth higher,
    // so it sorts first although `aa-lab` comes first by key and the numbers shown are equal.
    const days = Array.from({ length: 367 }, (_, i) => dayText(dayNumber('2028-01-01')! + i)).slice(0, 366);
    const records: CostRecordInput[] = [];
    for (const toolset of ['aa-lab', 'zz-lab']) {
      for (let i = 0; i < 1100; i++) {
        records.push(record({ date: days[i % 366]!, toolset, sku: `sku-${Math.floor(i / 366)}`, amountUsd: toolset === 'aa-lab' && i === 0 ? 999_999_999.999998 : 999_999_999.999999 }));
      }
    }
    await service().upsert(ctx(), records);
    const answer = await service().rollup({ from: '2028-01-01', to: '2029-01-01' }, null);
    expect(answer.rows.map((r) => r.key)).toEqual(['zz-lab', 'aa-lab']);
    expect(answer.rows[0]!.amountUsd).toBe(answer.rows[1]!.amountUsd);
    expect(answer.rows.map((r) => r.dayCount)).toEqual([366, 366]);
    expect(answer.total.rows).toBe(2200);
    expect(formatMicro(await service().spendMicroUsd({ toolset: 'zz-lab' }, '2028-01-01', '2029-01-01'))).toBe('1099999999999.9989');
    expect(formatMicro(await service().spendMicroUsd({ toolset: 'aa-lab' }, '2028-01-01', '2029-01-01'))).toBe('1099999999999.998899');
  });
});

describe('byToolset', () => {
  beforeAll(async () => {
    await reset();
    await service().upsert(ctx(), [
      record({ date: '2028-02-28', amountUsd: 1.25 }),
      record({ date: '2028-02-28', sku: 'b', amountUsd: 0.75 }),
      record({ date: '2028-03-01', amountUsd: 4 }),
      record({ date: '2028-03-02', amountUsd: 100 }),
      record({ date: '2028-02-29', toolset: 'triage-bot', amountUsd: 50 }),
    ]);
  });

  it('lists every day of [from, to) ascending, 0 for days without records, leap day included', async () => {
    expect(await service().byToolset({ toolset: 'crawler-lab', from: '2028-02-27', to: '2028-03-02' }, null)).toEqual({
      toolset: 'crawler-lab',
      from: '2028-02-27',
      to: '2028-03-02',
      total: { amountUsd: 6 },
      series: [
        { dimDate: '2028-02-27', amountUsd: 0 },
        { dimDate: '2028-02-28', amountUsd: 2 },
        { dimDate: '2028-02-29', amountUsd: 0 },
        { dimDate: '2028-03-01', amountUsd: 4 },
      ],
    });
  });

  it('answers an unknown toolset with zeros, and refuses a bad range', async () => {
    const answer = await service().byToolset({ toolset: 'nobody', from: '2028-02-28', to: '2028-03-01' }, null);
    expect(answer).toMatchObject({ total: { amountUsd: 0 }, series: [{ dimDate: '2028-02-28', amountUsd: 0 }, { dimDate: '2028-02-29', amountUsd: 0 }] });
    await expect(service().byToolset({ toolset: 'crawler-lab', from: '2028-03-01', to: '2028-02-28' }, null)).rejects.toMatchObject({ reason: 'invalid-range' });
  });

  it('answers a full year as 366 points at most', async () => {
    const answer = await service().byToolset({ toolset: 'crawler-lab', from: '2028-01-01', to: '2029-01-01' }, null);
    expect(answer.series).toHaveLength(366);
    expect(answer.series.at(-1)).toEqual({ dimDate: '2028-12-31', amountUsd: 0 });
    expect(answer.total.amountUsd).toBe(106);
  });
});

describe('spendMicroUsd', () => {
  beforeAll(async () => {
    await reset();
    await service().upsert(ctx(), [
      record({ date: '2026-10-31', amountUsd: 1000 }),
      record({ date: '2026-11-01', workspace: 'ws-a', amountUsd: 10.1 }),
      record({ date: '2026-11-30', workspace: 'ws-b', amountUsd: 0.2 }),
      record({ date: '2026-11-15', toolset: 'triage-bot', workspace: 'ws-a', amountUsd: 5 }),
      record({ date: '2026-11-20', toolset: 'triage-bot', vendor: 'aws', sku: 'credit', amountUsd: -1.5 }),
      record({ date: '2026-12-01', amountUsd: 1000 }),
    ]);
  });

  it('sums the month exactly for the empire, a toolset, a workspace or both', async () => {
    const s = service();
    expect(await s.spendMicroUsd({}, '2026-11-01', '2026-12-01')).toBe(13_800_000n);
    expect(await s.spendMicroUsd({ toolset: 'crawler-lab' }, '2026-11-01', '2026-12-01')).toBe(10_300_000n);
    expect(await s.spendMicroUsd({ toolset: 'triage-bot' }, '2026-11-01', '2026-12-01')).toBe(3_500_000n);
    expect(await s.spendMicroUsd({ workspace: 'ws-a' }, '2026-11-01', '2026-12-01')).toBe(15_100_000n);
    expect(await s.spendMicroUsd({ toolset: 'triage-bot', workspace: 'ws-a' }, '2026-11-01', '2026-12-01')).toBe(5_000_000n);
    expect(await s.spendMicroUsd({ toolset: 'nobody' }, '2026-11-01', '2026-12-01')).toBe(0n);
  });

  it('answers 0n for an empty range, and refuses a date that is not one', async () => {
    expect(await service().spendMicroUsd({}, '2026-12-01', '2026-11-01')).toBe(0n);
    expect(await service().spendMicroUsd({}, '2026-11-01', '2026-11-01')).toBe(0n);
    await expect(service().spendMicroUsd({}, '2026-11-31', '2026-12-01')).rejects.toMatchObject({ reason: 'invalid-date' });
  });
});

/** Millionths from a decimal text by string surgery only (the reference; independent of money.ts). */
const referenceMicro = (text: string) => {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const magnitude = BigInt(`${whole}${fraction.padEnd(6, '0')}`);
  return negative ? -magnitude : magnitude;
};

describe('exact money over thousands of records (property)', () => {
  it('sums what was sent to the millionth, per toolset and in total', async () => {
    const amount = fc.bigInt({ min: -(10n ** 15n - 1n), max: 10n ** 15n - 1n }).map((m) => Number(formatMicro(m)));
    const batch = fc.array(fc.tuple(fc.constantFrom('alpha-lab', 'beta-lab', 'gamma-lab'), amount), { minLength: 1000, maxLength: 3000 });
    await fc.assert(
      fc.asyncProperty(batch, async (pairs) => {
        await reset();
        // Distinct keys: one record per (toolset, sku i) on a day of November.
        const records = pairs.map(([toolset, amountUsd], i) => record({ date: dayText(dayNumber('2026-11-01')! + (i % 30)), toolset, sku: `sku-${i}`, amountUsd }));
        expect(await service().upsert(ctx(), records)).toEqual({ ok: true, upserted: records.length });
        const expected = new Map<string, bigint>();
        for (const r of records) expected.set(r.toolset, (expected.get(r.toolset) ?? 0n) + referenceMicro(String(r.amountUsd)));
        const all = [...expected.values()].reduce((a, b) => a + b, 0n);
        expect(await service().spendMicroUsd({}, '2026-11-01', '2026-12-01')).toBe(all);
        for (const [toolset, micro] of expected) expect(await service().spendMicroUsd({ toolset }, '2026-11-01', '2026-12-01')).toBe(micro);
        const rollup = await service().rollup({ from: '2026-11-01', to: '2026-12-01' }, null);
        expect(rollup.total.rows).toBe(records.length);
        expect(Object.fromEntries(rollup.rows.map((r) => [r.key, r.amountUsd]))).toEqual(Object.fromEntries([...expected].map(([k, v]) => [k, Number(formatMicro(v))])));
        expect(rollup.total.amountUsd).toBe(Number(formatMicro(all)));
      }),
      { numRuns: 4 },
    );
  }, 120_000);
});
