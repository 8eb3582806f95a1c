import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { MIGRATIONS, migrateFrom, migrationsBefore } from '../../../test/helpers/migrations.ts';
import { type Database, rowsOf } from '../../platform/db/client.ts';

/**
 * Migration 0021_graph-bounds on a database holding data from before it: the tenants and
 * fingerprints that only toolsets' events name get those toolsets in `named_by` (the rest stay
 * null), and where several operators shared one saved-query name the earliest keeps it shared and
 * the others become private, so the new unique index on shared names can be built.
 */

let testDb: TestDatabase;
let database: Database;
let before0021: ReturnType<typeof migrationsBefore>;

beforeAll(async () => {
  // The shipped migrations up to 0020: the same files, the journal cut before 0021.
  before0021 = migrationsBefore(21);
  testDb = await createTestDatabase({ empty: true });
  database = await testDb.open();
});
afterAll(async () => {
  await testDb.drop();
  before0021.remove();
});

describe('migration 0021 over earlier data', () => {
  it('records who alone names a tenant or fingerprint, and keeps one shared owner per saved-query name', async () => {
    await migrateFrom(database, before0021.folder);
    const db = database.db;
    const node = (id: number, kind: string, key: string, toolset: string | null, props: object) =>
      db.execute(sql`INSERT INTO graph_nodes (id, kind, key, toolset, tenant, props, first_run, materialised_at)
        VALUES (${id}, ${kind}, ${key}, ${toolset}, NULL, ${JSON.stringify(props)}::jsonb, 1, now())`);
    const edge = (kind: string, src: number, dst: number) =>
      db.execute(sql`INSERT INTO graph_edges (kind, src, dst, props, first_run, materialised_at) VALUES (${kind}, ${src}, ${dst}, '{}'::jsonb, 1, now())`);
    await node(1, 'Tenant', 'registered', null, { registered: true });
    await node(2, 'Tenant', 'lab-only', null, { registered: false });
    await node(3, 'Tenant', 'seen-too', null, { registered: false });
    await node(4, 'Fingerprint', 'fp-hp', null, {});
    await node(5, 'Fingerprint', 'fp-lab', null, {});
    await node(6, 'EmpireEvent', 'e-lab', 'lab', {});
    await node(7, 'EmpireEvent', 'e-kit', 'kit', {});
    await edge('FROM_TENANT', 6, 2);
    await edge('FROM_TENANT', 7, 2);
    await edge('FROM_TENANT', 6, 3);
    await edge('SEEN_ON', 4, 3);
    await edge('ABOUT', 6, 5);
    await edge('ABOUT', 7, 4);
    const saved = (id: string, owner: string, name: string, visibility: string, createdAt: string) =>
      db.execute(sql`INSERT INTO graph_saved_queries (id, owner_user_id, name, description, query, visibility, run_count, created_at, updated_at)
        VALUES (${id}::uuid, ${owner}, ${name}, '', 'MATCH (n) RETURN n', ${visibility}, 0, ${createdAt}::timestamptz, ${createdAt}::timestamptz)`);
    await saved('00000000-0000-4000-8000-000000000001', 'bob', 'daily', 'public', '2026-11-02T00:00:00Z');
    await saved('00000000-0000-4000-8000-000000000002', 'alice', 'daily', 'workspace', '2026-11-01T00:00:00Z');
    await saved('00000000-0000-4000-8000-000000000003', 'carol', 'daily', 'private', '2026-10-01T00:00:00Z');

    await migrateFrom(database, MIGRATIONS);

    const namedBy = rowsOf<{ key: string; named_by: string[] | null }>(await db.execute(sql`SELECT key, named_by FROM graph_nodes WHERE kind IN ('Tenant', 'Fingerprint') ORDER BY id`));
    expect(namedBy).toEqual([
      { key: 'registered', named_by: null },
      { key: 'lab-only', named_by: ['kit', 'lab'] },
      { key: 'seen-too', named_by: null },
      { key: 'fp-hp', named_by: null },
      { key: 'fp-lab', named_by: ['lab'] },
    ]);
    const shared = rowsOf<{ owner_user_id: string; visibility: string }>(await db.execute(sql`SELECT owner_user_id, visibility FROM graph_saved_queries WHERE name = 'daily' ORDER BY owner_user_id`));
    expect(shared).toEqual([
      { owner_user_id: 'alice', visibility: 'workspace' },
      { owner_user_id: 'bob', visibility: 'private' },
      { owner_user_id: 'carol', visibility: 'private' },
    ]);
    // Every existing row got a change number, so a fresh query replica copies it.
    const unnumbered = rowsOf<{ n: number }>(await db.execute(sql`SELECT (SELECT count(*) FROM graph_nodes WHERE change_seq IS NULL) + (SELECT count(*) FROM graph_edges WHERE change_seq IS NULL) AS n`));
    expect(Number(unnumbered[0]!.n)).toBe(0);
  });
});
