import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { groupStatement } from './repository.ts';

/**
 * The group statement counts each liar fingerprint's LIAR events of the tarpit window. Prepared,
 * it runs on a generic plan, and with only the (tenant, ts) and (tenant, fingerprint, ts) indexes
 * that plan walked every event of the tenant's window once per liar fingerprint: 300–1,500 ms a
 * group under batched load (docs/performance.md, 2026-11-29 second session). The partial index of
 * LIAR rows makes the count read that fingerprint's liars alone; this reads the generic plan the
 * database makes of the real statement and checks the count goes through it.
 */
let testDb: TestDatabase;
let database: Database;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
});
afterAll(() => testDb.drop());

const literal = (value: unknown) => `'${String(value).replace(/'/g, "''")}'`;

async function genericPlanOf(statement: ReturnType<typeof groupStatement>): Promise<string> {
  const { sql: text, params } = new PgDialect().sqlToQuery(statement);
  return withTransaction(database.db, async (tx) => {
    await tx.execute(sql`SET LOCAL plan_cache_mode = force_generic_plan`);
    await tx.execute(sql.raw(`PREPARE group_plan_check AS ${text}`));
    try {
      const explained = await tx.execute(sql.raw(`EXPLAIN (FORMAT JSON) EXECUTE group_plan_check(${params.map(literal).join(', ')})`));
      return JSON.stringify(rowsOf(explained));
    } finally {
      await tx.execute(sql.raw('DEALLOCATE group_plan_check'));
    }
  });
}

describe('the group statement’s liar count', () => {
  it('reads the partial index of LIAR rows, not the tenant’s whole window', async () => {
    const now = new Date('2026-11-29T12:00:00Z');
    const plan = await genericPlanOf(
      groupStatement({
        rows: [],
        fingerprints: [],
        tarpitKeys: [],
        liarKeys: [{ tenantId: randomUUID(), fingerprintId: 'fp-liar' }],
        liarFrom: new Date(now.getTime() - 600_000),
        liarTo: now,
        now,
      }),
    );
    expect(plan).toContain('honeypot_events_liar_idx');
    expect(plan).not.toContain('honeypot_events_tenant_ts_idx');
    expect(plan).not.toContain('Seq Scan on honeypot_events');
  });
});
