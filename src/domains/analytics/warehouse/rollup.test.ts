import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import { dayNumber, dayText } from '../../../platform/days.ts';
import { formatMicro } from '../../../platform/money.ts';
import { costAnalyticsFacts } from '../../cost/index.ts';
import { empireAnalyticsFacts } from '../../empire/index.ts';
import { honeypotAnalyticsFacts } from '../../honeypot/index.ts';
import { triageAnalyticsFacts } from '../../triage/index.ts';
import { METRICS, SOURCES } from '../metrics.ts';
import { compareSeries, createAnalyticsQueryService, resolveDims } from './query.ts';
import { createRollupService, dayRanges, ROLLUP_LAG_MS } from './rollup.ts';
import { factSources } from './sources.ts';

// The rollup and the query below HTTP (docs/analytics/README.md): the pure rules, then a property on a
// real database: after any sequence of writes and incremental runs, the warehouse holds exactly
// what one run from scratch writes, and its sums equal a plain reference sum.

const arbDay = fc.integer({ min: dayNumber('2026-01-01')!, max: dayNumber('2026-03-31')! });

describe('dayRanges (pure)', () => {
  it('merges consecutive days, ascending, at most maxDays a range, covering exactly the days given', () => {
    expect(dayRanges(['2026-11-03', '2026-11-01', '2026-11-02', '2026-11-05', '2026-11-02'])).toEqual([
      { from: '2026-11-01', to: '2026-11-04' },
      { from: '2026-11-05', to: '2026-11-06' },
    ]);
    expect(dayRanges(['2026-12-31', '2027-01-01'])).toEqual([{ from: '2026-12-31', to: '2027-01-02' }]);
    expect(dayRanges([])).toEqual([]);
    expect(dayRanges(['2026-11-01', '2026-11-02', '2026-11-03'], 2)).toEqual([
      { from: '2026-11-01', to: '2026-11-03' },
      { from: '2026-11-03', to: '2026-11-04' },
    ]);
    fc.assert(
      fc.property(fc.array(arbDay, { maxLength: 80 }), fc.integer({ min: 1, max: 40 }), (numbers, maxDays) => {
        const ranges = dayRanges(numbers.map(dayText), maxDays);
        const covered: number[] = [];
        let previousEnd = -Infinity;
        for (const r of ranges) {
          const [from, to] = [dayNumber(r.from)!, dayNumber(r.to)!];
          expect(from).toBeGreaterThanOrEqual(previousEnd);
          expect(to - from).toBeGreaterThanOrEqual(1);
          expect(to - from).toBeLessThanOrEqual(maxDays);
          for (let n = from; n < to; n++) covered.push(n);
          previousEnd = to;
        }
        expect(covered).toEqual([...new Set(numbers)].sort((a, b) => a - b));
      }),
    );
  });
});

describe('resolveDims and compareSeries (pure)', () => {
  const events = METRICS.find((m) => m.key === 'empire.events')!;
  it('keeps spec A order for valid dims and lists the rest in the order asked, once', () => {
    expect(resolveDims(events, ' region , toolset,,severity,bogus,toolset', [])).toEqual({ dims: ['toolset', 'region'], invalidDims: ['severity', 'bogus'] });
    expect(resolveDims(events, undefined, ['severity', 'toolset'])).toEqual({ dims: [], invalidDims: ['severity'] });
    expect(resolveDims(events, 'severity', ['severity'])).toEqual({ dims: [], invalidDims: ['severity'] });
    expect(resolveDims(undefined, 'severity,colour', ['toolset'])).toEqual({ dims: ['severity'], invalidDims: ['colour'] });
  });

  it('orders by day, then dimensions by UTF-16 code units', () => {
    const row = (day: string, workspaceId: string, toolset = '') => ({ day, workspaceId, toolset, severity: '', region: '', valueMicro: 0n, count: 0n });
    const rows = [row('2026-11-02', 'a'), row('2026-11-01', 'z'), row('2026-11-01', 'Z'), row('2026-11-01', 'z', 'a'), row('2026-11-01', '\u{1F600}'), row('2026-11-01', '\uFF5E')];
    expect(rows.sort(compareSeries).map((r) => `${r.day}/${r.workspaceId}/${r.toolset}`)).toEqual([
      '2026-11-01/Z/',
      '2026-11-01/z/',
      '2026-11-01/z/a',
      '2026-11-01/\u{1F600}/',
      '2026-11-01/\uFF5E/',
      '2026-11-02/a/',
    ]);
  });
});

describe('incremental runs equal one run from scratch (property, real database)', () => {
  let testDb: TestDatabase;
  let database: Database;
  beforeAll(async () => {
    ({ testDb, database } = await openTestDatabase());
  });
  afterAll(async () => testDb?.drop());

  const sources = () => factSources({ region: 'r1', honeypot: honeypotAnalyticsFacts, empire: empireAnalyticsFacts, triage: triageAnalyticsFacts, cost: costAnalyticsFacts });
  const warehouse = async () =>
    rowsOf<Record<string, string>>(
      await database.db.execute(sql`SELECT metric, day::text, workspace_id, toolset, severity, region, value_micro::text, count::text FROM analytics_daily ORDER BY 1, 2, 3, 4, 5, 6`),
    ).map((r) => Object.values(r).join('|'));

  /** One write: a cost record (day, toolset, sku, amount) stamped at `at`. */
  const write = (at: Date, day: number, toolset: string, sku: string, micro: bigint) =>
    database.db.execute(sql`
      INSERT INTO cost_records (day, toolset, vendor, sku, workspace, region, amount_micro_usd, units_micro, updated_at)
      VALUES (${dayText(day)}::date, ${toolset}, 'v', ${sku}, '', '', ${micro.toString()}::bigint, 0, ${at.toISOString()}::timestamptz)
      ON CONFLICT (day, toolset, vendor, sku, workspace, region) DO UPDATE SET amount_micro_usd = EXCLUDED.amount_micro_usd, updated_at = EXCLUDED.updated_at`);

  it('holds for any writes between runs, and sums match a plain reference sum', async () => {
    const step = fc.record({
      writes: fc.array(
        fc.tuple(arbDay, fc.constantFrom('alpha-lab', 'beta-lab'), fc.constantFrom('s1', 's2', 's3'), fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n })),
        { maxLength: 40 },
      ),
      /** Minutes to the next run; some runs come before the lag has passed. */
      gapMinutes: fc.integer({ min: 1, max: 120 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
        await database.db.execute(sql`TRUNCATE cost_records, analytics_daily, analytics_sources`);
        const rollup = createRollupService({ db: database.db, sources: sources() });
        const reference = new Map<string, bigint>();
        let now = new Date('2026-04-01T00:00:00.000Z').getTime();
        for (const s of steps) {
          for (const [day, toolset, sku, micro] of s.writes) {
            // Stamped a little in the past, as a write whose transaction began before the run.
            await write(new Date(now - ROLLUP_LAG_MS / 2), day, toolset, sku, micro);
            reference.set(`${day}|${toolset}|${sku}`, micro);
          }
          await rollup.roll(new Date(now));
          now += s.gapMinutes * 60_000;
        }
        const incremental = await warehouse();
        await database.db.execute(sql`TRUNCATE analytics_daily, analytics_sources`);
        await rollup.roll(new Date(now));
        expect(incremental).toEqual(await warehouse());

        const query = createAnalyticsQueryService({ db: database.db });
        const answer = await query.query(null, { metric: 'cost.spend', from: '2026-01-01', to: '2026-04-01', dims: 'toolset' });
        // As of the last rollup.
        expect(answer.freshness).toMatchObject({ asOf: new Date(now).toISOString(), producer: 'analytics-rollup' });
        let total = 0n;
        const byToolset = new Map<string, bigint>();
        for (const [key, micro] of reference) {
          const toolset = key.split('|')[1]!;
          total += micro;
          byToolset.set(toolset, (byToolset.get(toolset) ?? 0n) + micro);
        }
        expect(answer.total).toEqual({ value: Number(formatMicro(total)), count: reference.size });
        for (const [toolset, micro] of byToolset) {
          const sum = await query.query(null, { metric: 'cost.spend', from: '2026-01-01', to: '2026-04-01', toolset });
          expect(sum.total.value).toBe(Number(formatMicro(micro)));
        }
      }),
      { numRuns: 8 },
    );
  }, 120_000);

  it('lets two runs at once (two instances) both succeed with the rows one run writes', async () => {
    await database.db.execute(sql`TRUNCATE cost_records, analytics_daily, analytics_sources`);
    const at = new Date('2026-04-01T00:00:00.000Z');
    for (let i = 0; i < 30; i++) await write(new Date(at.getTime() - 60_000), dayNumber('2026-03-01')! + i, 'alpha-lab', 's1', BigInt(i + 1) * 1_000_000n);
    const [a, b] = [createRollupService({ db: database.db, sources: sources() }), createRollupService({ db: database.db, sources: sources() })];
    await Promise.all([a.roll(at), b.roll(at)]);
    const both = await warehouse();
    expect(both.filter((r) => r.startsWith('cost.spend|'))).toHaveLength(30);
    await database.db.execute(sql`TRUNCATE analytics_daily, analytics_sources`);
    await a.roll(at);
    expect(await warehouse()).toEqual(both);
  });

  it('rolls every source and stores a watermark for each', async () => {
    const rollup = createRollupService({ db: database.db, sources: sources() });
    const stats = await rollup.roll(new Date('2026-05-01T00:00:00.000Z'));
    expect(Object.keys(stats)).toEqual([...SOURCES]);
    const states = rowsOf<{ source: string; watermark: string }>(await database.db.execute(sql`SELECT source, watermark::text FROM analytics_sources ORDER BY source`));
    expect(states.map((s) => s.source)).toEqual([...SOURCES].sort());
  });
});
