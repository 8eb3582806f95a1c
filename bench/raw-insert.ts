/**
 * `ingest-batch-100-raw`: the baseline of the batched-ingest target (docs/performance.md, "Where
 * things stand"). It inserts the rows `ingest-batch-100` stored, copied under new ids, straight into
 * `honeypot_events`: the same table and indexes, 100 rows per statement (the service's own
 * positional-jsonb INSERT, prepared), one commit each, from as many concurrent callers as the
 * scenario has connections, through the app's own pool (node-postgres: DB_POOL_MAX connections;
 * PGlite: its one). No HTTP, no signature, no classification, no rollup queue: what the database
 * and driver alone make of the same rows. Its `rowsPerSec` divides `ingest-batch-100`'s events/s.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { eq, sql } from 'drizzle-orm';
import { honeypotEvents, honeypotTenants } from '../src/domains/honeypot/schema.ts';
import { executePrepared, insertRows } from '../src/platform/db/prepared.ts';
import { type BenchContext, defineScenario } from './scenarios.ts';

const ROWS_PER_STATEMENT = 100;
/** Distinct source rows copied in turn: as varied as the signed run's, enough that no page stays hot by repetition. */
const SOURCE_ROWS = 5_000;

type EventRow = typeof honeypotEvents.$inferSelect;

export const RAW_INSERT_SCENARIO = 'ingest-batch-100-raw';

export function rawInsertScenario(source: { tenantSlug: string; scenario: string }) {
  return defineScenario<EventRow[]>({
    name: RAW_INSERT_SCENARIO,
    description: `The rows ${source.scenario} stored, copied under new ids and inserted straight into honeypot_events, ${ROWS_PER_STATEMENT} a statement (the service's prepared positional-jsonb INSERT), one commit each, from as many concurrent callers as connections, through the app's pool: the raw insert the batched signed ingest is measured against.`,
    setup: async (ctx) => {
      const [tenant] = await ctx.app.database.db.select({ id: honeypotTenants.id }).from(honeypotTenants).where(eq(honeypotTenants.slug, source.tenantSlug));
      const id = tenant?.id;
      if (!id) throw new Error(`${RAW_INSERT_SCENARIO} copies the rows of ${source.scenario}: run it too (tenant ${source.tenantSlug} not found)`);
      const rows = await ctx.app.database.db.select().from(honeypotEvents).where(eq(honeypotEvents.tenantId, id)).limit(SOURCE_ROWS);
      if (rows.length < ROWS_PER_STATEMENT) throw new Error(`${RAW_INSERT_SCENARIO}: ${source.scenario} stored ${rows.length} rows, fewer than one statement's`);
      return rows;
    },
    measure: async (ctx: BenchContext, rows: EventRow[]) => {
      const durationMs = ctx.run.durationSec * 1000;
      const callers = ctx.run.connections;
      const run = randomUUID().slice(0, 8);
      const db = ctx.app.database.db;
      let next = 0;
      let inserted = 0;
      const statementMs: number[] = [];
      const started = performance.now();
      const caller = async () => {
        while (performance.now() - started < durationMs) {
          const batch = Array.from({ length: ROWS_PER_STATEMENT }, () => {
            const n = next++;
            return { ...rows[n % rows.length]!, id: randomUUID(), senderId: `raw-${run}-${n}` };
          });
          const t0 = performance.now();
          await executePrepared(db, 'bench_raw_insert_honeypot_events', sql`INSERT INTO honeypot_events ${insertRows(honeypotEvents, batch)}`);
          statementMs.push(performance.now() - t0);
          inserted += batch.length;
        }
      };
      await Promise.all(Array.from({ length: callers }, caller));
      const seconds = (performance.now() - started) / 1000;
      statementMs.sort((a, b) => a - b);
      return {
        rowsPerSec: Math.round(inserted / seconds),
        statements: statementMs.length,
        statementP50Ms: Math.round(statementMs[Math.floor(statementMs.length * 0.5)]! * 10) / 10,
        statementP99Ms: Math.round(statementMs[Math.floor(statementMs.length * 0.99)]! * 10) / 10,
        callers,
      };
    },
  });
}

