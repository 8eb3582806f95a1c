import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import { type RecordFilters, type RollupGroup, rollupSql } from '../src/domains/cost/records/repository.ts';
import { dayNumber, dayText } from '../src/platform/days.ts';
import { type Db, rowsOf } from '../src/platform/db/client.ts';
import { V1 } from '../src/platform/http/registry.ts';
import { type BenchContext, defineScenario, type Scenario } from './scenarios.ts';

/**
 * The cost rollup (docs/cost/README.md, "Performance"; issue 18, "Tests and speed"): `GET {v1}/cost/rollup`
 * over 90 days of a table of 1,000,000 cost records, grouped by toolset (every record of the range
 * summed), and grouped by sku with a toolset filter (a tenth of them).
 *
 * What is stored (straight into cost_records, bulk INSERT … SELECT over generate_series, a month of
 * days a statement, in day order as daily imports would leave the table): two years of days
 * (2025-01-01 to 2026-12-31, 730 days) × 1,370 records a day = 1,000,100 records. Record i of a day
 * has toolset `bench-cost-<i mod 10>`, sku `sku-<(i div 10) mod 35>` of one of 5 vendors (7 skus
 * each) in one of 3 regions (both follow from the sku), and workspace `ws-<i div 350>` (4 of
 * them): every key distinct. Amounts are up to $5 with 6 decimals, units whole numbers. A second
 * scenario, or a second run on the same server database, finds the table seeded and skips it.
 *
 * The 90-day range is the last 90 seeded days (2026-10-02 to 2026-12-31 exclusive): 123,300
 * records. Before the load the setup prints the plan PostgreSQL chose (EXPLAIN ANALYZE): which
 * index serves the range, how many rows it read and how long it ran.
 *
 * Four connections: a rollup is an operator's page or a chart, not a hot path; 20 connections on
 * a two-core machine would measure the queue for the CPU rather than one rollup.
 */

const FIRST_DAY = '2025-01-01';
const DAYS = 730;
const TOOLSETS = 10;
const SKUS = 35;
const VENDORS = ['openai', 'anthropic', 'aws', 'gcp', 'cloudflare'] as const;
const REGIONS = ['us-east-1', 'eu-west-1', 'ap-south-1'] as const;
/** Records of one key set a workspace holds per day (10 toolsets × 35 skus). */
const PER_WORKSPACE = TOOLSETS * SKUS;
const DAYS_PER_STATEMENT = 30;
const RANGE_DAYS = 90;
const CONNECTIONS = 4;

const TO = dayText(dayNumber(FIRST_DAY)! + DAYS);
const FROM = dayText(dayNumber(TO)! - RANGE_DAYS);

async function seededCount(db: Db): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await db.execute(sql`SELECT count(*)::int AS n FROM cost_records WHERE toolset LIKE 'bench-cost-%'`));
  return row?.n ?? 0;
}

async function seedCostRecords(ctx: BenchContext, size: number): Promise<void> {
  const db = ctx.app.database.db;
  const perDay = Math.ceil(size / DAYS);
  if ((await seededCount(db)) === perDay * DAYS) return;
  const started = performance.now();
  await db.execute(sql`DELETE FROM cost_records WHERE toolset LIKE 'bench-cost-%'`);
  const vendors = `{${VENDORS.join(',')}}`;
  const regions = `{${REGIONS.join(',')}}`;
  for (let first = 0; first < DAYS; first += DAYS_PER_STATEMENT) {
    const last = Math.min(first + DAYS_PER_STATEMENT, DAYS) - 1;
    await db.execute(sql`
      INSERT INTO cost_records (day, toolset, vendor, sku, workspace, region, amount_micro_usd, units_micro, updated_at)
      SELECT ${FIRST_DAY}::date + d,
             'bench-cost-' || (i % ${TOOLSETS}::int),
             (${vendors}::text[])[1 + ((i / ${TOOLSETS}::int) % ${SKUS}::int) % ${VENDORS.length}::int],
             'sku-' || ((i / ${TOOLSETS}::int) % ${SKUS}::int),
             'ws-' || (i / ${PER_WORKSPACE}::int),
             (${regions}::text[])[1 + ((i / ${TOOLSETS}::int) % ${SKUS}::int) % ${REGIONS.length}::int],
             1 + ((i::bigint * 7919 + d::bigint * 104729) % 4999999),
             ((i::bigint * 31 + d::bigint * 17) % 1000000) * 1000000,
             now()
      FROM generate_series(${first}::int, ${last}::int) AS d
      CROSS JOIN generate_series(0, ${perDay - 1}::int) AS i`);
  }
  await db.execute(sql`VACUUM (ANALYZE) cost_records`);
  process.stdout.write(
    `  (cost: ${(perDay * DAYS).toLocaleString('en')} records, ${perDay.toLocaleString('en')} a day from ${FIRST_DAY} for ${DAYS} days, in ${((performance.now() - started) / 1000).toFixed(1)} s)\n`,
  );
}

interface PlanNode {
  'Node Type': string;
  Strategy?: string;
  'Parallel Aware'?: boolean;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** EXPLAIN ANALYZE of the rollup statement the endpoint runs: the path through the plan, its indexes, and the time. */
async function explainRollup(db: Db, group: RollupGroup, filters: RecordFilters): Promise<string> {
  const result = await db.execute(sql`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${rollupSql(group, FROM, TO, filters)}`);
  const [row] = rowsOf<Record<string, unknown>>(result);
  const raw = Object.values(row ?? {})[0];
  const [plan] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode; 'Execution Time': number; 'Planning Time': number }];
  const steps: string[] = [];
  const walk = (node: PlanNode) => {
    const kind = `${node['Parallel Aware'] ? 'Parallel ' : ''}${node.Strategy === 'Hashed' ? 'Hash' : ''}${node['Node Type']}`;
    steps.push(`${kind}${node['Index Name'] ? ` on ${node['Index Name']}` : ''} (${((node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1)).toLocaleString('en')} rows)`);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan.Plan);
  return `${steps.join(' ← ')}; planning ${plan['Planning Time'].toFixed(1)} ms, execution ${plan['Execution Time'].toFixed(1)} ms`;
}

function rollupScenario(name: string, size: number, group: RollupGroup, filters: RecordFilters, description: string): Scenario {
  const query = new URLSearchParams({ from: FROM, to: TO, group, ...(filters as Record<string, string>) }).toString();
  const path = `${V1}/cost/rollup?${query}`;
  return defineScenario({
    name,
    description,
    connections: CONNECTIONS,
    setupBudgetSec: size >= 1_000_000 ? 900 : 60,
    setup: async (ctx) => {
      await seedCostRecords(ctx, size);
      // One request before the load: the cost endpoints must be served and answer the expected rows.
      const answer = await ctx.api<{ rows: unknown[]; total: { rows: number } }>('GET', path);
      const expectedRows = group === 'toolset' ? TOOLSETS : SKUS;
      if (answer.rows.length !== expectedRows) throw new Error(`${name}: expected ${expectedRows} rows, got ${answer.rows.length}`);
      process.stdout.write(`  (${name}: ${answer.total.rows.toLocaleString('en')} records summed; plan: ${await explainRollup(ctx.app.database.db, group, filters)})\n`);
    },
    request: (ctx) => ({ method: 'GET', path, headers: ctx.adminHeaders }),
  });
}

export const costRollupScenarios: Scenario[] = [
  rollupScenario(
    'cost-rollup',
    1_000_000,
    'toolset',
    {},
    `GET /v1/cost/rollup over the last ${RANGE_DAYS} days of 1,000,100 cost records (two years × 1,370 a day), grouped by toolset: 123,300 records summed exactly into 10 rows. ${CONNECTIONS} connections.`,
  ),
  rollupScenario(
    'cost-rollup-sku',
    1_000_000,
    'sku',
    { toolset: 'bench-cost-3' },
    `GET /v1/cost/rollup over the same ${RANGE_DAYS} days grouped by sku with toolset=bench-cost-3: 12,330 records summed into 35 rows. ${CONNECTIONS} connections.`,
  ),
];
