import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onServer, openTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { type Database, rowsOf } from './client.ts';
import { executePrepared } from './prepared.ts';
import { isUniqueViolation, withTransaction } from './transaction.ts';

// executePrepared (prepared.ts): a named statement parsed once per session. On PGlite it sends the
// extended protocol itself; these tests hold it to what a plain execute answers.

let testDb: TestDatabase;
let database: Database;
const db = () => database.db;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  await db().execute(sql`CREATE TABLE prepared_probe (k text PRIMARY KEY, at timestamptz NOT NULL, body jsonb)`);
});
afterAll(() => testDb.drop());

const insertProbe = (k: string) =>
  sql`INSERT INTO prepared_probe (k, at, body) VALUES (${k}, ${'2026-11-29T12:00:00.000Z'}::timestamptz, ${JSON.stringify({ k, n: [1, 2] })}::jsonb) RETURNING k, at, body, 42::bigint AS big, NULL::text AS none`;

describe('executePrepared', () => {
  it('answers what a plain execute of the same statement answers, row for row', async () => {
    const prepared = rowsOf(await executePrepared(db(), 'probe_insert', insertProbe('a')));
    const plain = rowsOf(await db().execute(insertProbe('b')));
    expect(prepared).toHaveLength(1);
    expect({ ...(prepared[0] as object), k: 'b', body: { k: 'b', n: [1, 2] } }).toEqual(plain[0]);
    const selected = sql`SELECT k, at, body FROM prepared_probe WHERE k = ${'a'}`;
    expect(rowsOf(await executePrepared(db(), 'probe_select', selected))).toEqual(rowsOf(await db().execute(selected)));
  });

  it.skipIf(onServer)('parses the statement once on PGlite: the session holds it by name', async () => {
    for (const k of ['c', 'd', 'e']) await executePrepared(db(), 'probe_insert', insertProbe(k));
    const held = rowsOf<{ statement: string }>(await db().execute(sql`SELECT statement FROM pg_prepared_statements WHERE name = 'probe_insert'`));
    expect(held).toHaveLength(1);
    expect(held[0]!.statement).toContain('INSERT INTO prepared_probe');
  });

  it('fails with the database error (a unique violation) and leaves the session usable', async () => {
    await executePrepared(db(), 'probe_insert', insertProbe('dup'));
    const error = await executePrepared(db(), 'probe_insert', insertProbe('dup')).catch((e: unknown) => e);
    expect(isUniqueViolation(error)).toBe(true);
    expect(rowsOf(await executePrepared(db(), 'probe_insert', insertProbe('after-dup')))).toHaveLength(1);
    expect(rowsOf(await db().execute(sql`SELECT 1 AS one`))).toEqual([{ one: 1 }]);
  });

  it('runs inside a transaction, and is rolled back with it', async () => {
    await expect(
      withTransaction(db(), async (tx) => {
        await executePrepared(tx, 'probe_insert', insertProbe('in-tx'));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(rowsOf(await db().execute(sql`SELECT k FROM prepared_probe WHERE k = 'in-tx'`))).toEqual([]);
  });

  it('refuses another text under a name already used', async () => {
    await executePrepared(db(), 'probe_once', sql`SELECT 1 AS one`);
    await expect(executePrepared(db(), 'probe_once', sql`SELECT 2 AS two`)).rejects.toThrow();
  });
});
