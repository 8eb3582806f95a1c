import { createHash } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  digestTables,
  driftedTables,
  pinOutputSettings,
  rowCountsSha256,
  type SqlRunner,
  STABLE_OUTPUT_SETTINGS,
  type TableDigest,
  tableDigestSql,
  tableKey,
} from './hashing.ts';

/**
 * Backups' table hashing against an independent reading of docs/backups/README.md ("Hashing"):
 * each row's text form is hashed with MD5 here in Node, its two 64-bit halves read as signed
 * integers and summed as bigints, and the table's hash is SHA-256 of "n:s1:s2". One in-memory
 * PGlite (no migrations) holds the tables.
 */

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let db: PGlite;
const runner = (): SqlRunner => ({ query: (text) => db.query(text) as never });

beforeAll(async () => {
  db = new PGlite();
  await db.waitReady;
});
afterAll(async () => {
  await db.close();
});

/** Runs `work` in a transaction that is always rolled back: nothing a test creates outlives it. */
async function inRollback<T>(work: () => Promise<T>): Promise<T> {
  await db.exec('BEGIN');
  try {
    return await work();
  } finally {
    await db.exec('ROLLBACK');
  }
}

/** The table's count and hash computed from its rows' text forms, outside the database. */
async function expectedDigest(qualified: string): Promise<{ n: number; hash: string }> {
  const { rows } = await db.query<{ text: string }>(`SELECT t::text AS text FROM ${qualified} AS t`);
  let s1 = 0n;
  let s2 = 0n;
  for (const { text } of rows) {
    const md5 = createHash('md5').update(text, 'utf8').digest('hex');
    s1 += BigInt.asIntN(64, BigInt(`0x${md5.slice(0, 16)}`));
    s2 += BigInt.asIntN(64, BigInt(`0x${md5.slice(16)}`));
  }
  return { n: rows.length, hash: sha256(`${rows.length}:${s1}:${s2}`) };
}

const digestOf = (byTable: Record<string, number>, tableHashes: Record<string, string> = {}): TableDigest => ({ byTable, tableHashes });

describe('output settings', () => {
  it('pins the five settings a row\'s text form depends on, in order, one statement each', async () => {
    const seen: string[] = [];
    await pinOutputSettings({ query: async (text) => (seen.push(text), { rows: [] }) });
    expect(seen).toEqual([
      "SET LOCAL TimeZone = 'UTC'",
      "SET LOCAL DateStyle = 'ISO, YMD'",
      "SET LOCAL IntervalStyle = 'postgres'",
      'SET LOCAL extra_float_digits = 3',
      "SET LOCAL bytea_output = 'hex'",
    ]);
    expect(STABLE_OUTPUT_SETTINGS).toEqual(seen);
  });

  it('gives a row the same text and the table the same hash whatever the session had set, for this transaction only', async () => {
    await db.exec(`CREATE TABLE pinned (at timestamptz, day date, span interval, ratio float8, bytes bytea);
      INSERT INTO pinned VALUES ('2026-01-02 03:04:05.5+00', '2026-01-02', '1 day 2 hours', 0.1::float8 + 0.2::float8, '\\x00ff'::bytea)`);
    try {
      const underDefaults = await inRollback(async () => {
        await pinOutputSettings(runner());
        const [row] = (await db.query<{ text: string }>('SELECT p::text AS text FROM pinned p')).rows;
        expect(row!.text).toBe('("2026-01-02 03:04:05.5+00",2026-01-02,"1 day 02:00:00",0.30000000000000004,"\\\\x00ff")');
        return digestTables(runner());
      });
      // Every setting moved away from what the pin sets: each alone would change the row's text.
      await db.exec(`SET TimeZone = 'Pacific/Chatham'; SET DateStyle = 'SQL, DMY'; SET IntervalStyle = 'iso_8601';
        SET extra_float_digits = 0; SET bytea_output = 'escape'`);
      try {
        const unpinned = (await db.query<{ text: string }>('SELECT p::text AS text FROM pinned p')).rows[0]!.text;
        expect(unpinned).not.toBe('("2026-01-02 03:04:05.5+00",2026-01-02,"1 day 02:00:00",0.30000000000000004,"\\\\x00ff")');
        const underOddSession = await inRollback(async () => {
          await pinOutputSettings(runner());
          return digestTables(runner());
        });
        expect(underOddSession).toEqual(underDefaults);
        // SET LOCAL: the session's own settings are back once the transaction ends.
        expect((await db.query<{ tz: string }>('SELECT current_setting(\'TimeZone\') AS tz')).rows[0]!.tz).toBe('Pacific/Chatham');
        expect((await db.query<{ text: string }>('SELECT p::text AS text FROM pinned p')).rows[0]!.text).toBe(unpinned);
      } finally {
        await db.exec('RESET ALL');
      }
    } finally {
      await db.exec('DROP TABLE pinned');
    }
  });
});

describe('one table\'s count and hash', () => {
  const rowArb = fc.record({
    id: fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }),
    note: fc.option(fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/\0/g, '')), { nil: null }),
    ratio: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
  });

  async function load(table: string, rows: readonly { id: number; note: string | null; ratio: number | null }[]) {
    await db.exec(`CREATE TABLE ${table} (id int, note text, ratio float8)`);
    for (const row of rows) await db.query(`INSERT INTO ${table} VALUES ($1, $2, $3)`, [row.id, row.note, row.ratio]);
  }

  async function digestOne(schema: string, table: string) {
    const [row] = (await db.query<{ n: string; s1: string; s2: string }>(tableDigestSql(schema, table))).rows;
    return row!;
  }

  it('counts the rows and folds their MD5 halves into two signed sums, as the text forms say (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { maxLength: 12 }), async (rows) =>
        inRollback(async () => {
          await pinOutputSettings(runner());
          await load('sample', rows);
          const got = await digestOne('public', 'sample');
          const expected = await expectedDigest('sample');
          expect(Number(got.n)).toBe(rows.length);
          expect(got.n).toBe(String(rows.length));
          expect(sha256(`${got.n}:${got.s1}:${got.s2}`)).toBe(expected.hash);
        }),
      ),
      { numRuns: 25 },
    );
  });

  it('does not depend on the order rows come back in, and notices one changed, lost or doubled row (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(rowArb, { minLength: 2, maxLength: 10, selector: (r) => r.id }),
        fc.nat(),
        async (rows, pick) =>
          inRollback(async () => {
            await pinOutputSettings(runner());
            await load('forward', rows);
            await load('backward', [...rows].reverse());
            const forward = await digestTables(runner());
            expect(forward.tableHashes.backward).toBe(forward.tableHashes.forward);
            const changed = rows[pick % rows.length]!;
            await db.query('UPDATE backward SET id = id # 1 WHERE id = $1', [changed.id]);
            await db.query('DELETE FROM forward WHERE id = $1', [changed.id]);
            const after = await digestTables(runner());
            expect(after.tableHashes.backward).not.toBe(forward.tableHashes.forward);
            expect(after.tableHashes.forward).not.toBe(forward.tableHashes.forward);
            expect(after.byTable).toEqual({ forward: rows.length - 1, backward: rows.length });
            await db.query('INSERT INTO forward SELECT * FROM forward WHERE id = $1', [rows[(pick + 1) % rows.length]!.id]);
            const doubled = await digestTables(runner());
            expect(doubled.byTable.forward).toBe(rows.length);
            expect(doubled.tableHashes.forward).not.toBe(forward.tableHashes.forward);
          }),
      ),
      { numRuns: 15 },
    );
  });

  it('hashes an empty table as zero rows with zero sums', async () => {
    await inRollback(async () => {
      await db.exec('CREATE TABLE nothing (id int)');
      expect(await digestOne('public', 'nothing')).toEqual({ n: '0', s1: '0', s2: '0' });
      expect((await digestTables(runner())).tableHashes).toEqual({ nothing: sha256('0:0:0') });
    });
  });

  it('quotes schema and table names, quotes inside them included', async () => {
    await inRollback(async () => {
      await db.exec('CREATE SCHEMA "Odd ""Schema"""; CREATE TABLE "Odd ""Schema"""."we""ird ""Table""" (v text); INSERT INTO "Odd ""Schema"""."we""ird ""Table""" VALUES (\'a\'), (\'b\')');
      expect(tableDigestSql('Odd "Schema"', 'we"ird "Table"')).toContain('FROM "Odd ""Schema"""."we""ird ""Table""" AS obs_backup_row');
      const digest = await digestTables(runner());
      expect(digest.byTable).toEqual({ 'Odd "Schema".we"ird "Table"': 2 });
      expect(digest.tableHashes['Odd "Schema".we"ird "Table"']).toBe((await expectedDigest('"Odd ""Schema"""."we""ird ""Table"""')).hash);
    });
  });
});

describe('every table', () => {
  it('names public tables by name and others as schema.table; counts partitions in their parent; skips views, temporary and system tables', async () => {
    await inRollback(async () => {
      await pinOutputSettings(runner());
      await db.exec(`
        CREATE TABLE plain (id int); INSERT INTO plain SELECT generate_series(1, 3);
        CREATE SCHEMA drizzle; CREATE TABLE drizzle.__drizzle_migrations (id int); INSERT INTO drizzle.__drizzle_migrations VALUES (1);
        CREATE SCHEMA pgx; CREATE TABLE pgx.kept (id int);
        CREATE TABLE events (day date, id int) PARTITION BY RANGE (day);
        CREATE TABLE events_2026 PARTITION OF events FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
        CREATE TABLE events_2027 PARTITION OF events FOR VALUES FROM ('2027-01-01') TO ('2028-01-01');
        INSERT INTO events VALUES ('2026-05-01', 1), ('2027-05-01', 2);
        CREATE VIEW plain_view AS SELECT * FROM plain;
        CREATE MATERIALIZED VIEW plain_matview AS SELECT * FROM plain;
        CREATE SEQUENCE counter;
        CREATE TEMPORARY TABLE scratch (id int); INSERT INTO scratch VALUES (1);
      `);
      const digest = await digestTables(runner());
      expect(digest.byTable).toEqual({ plain: 3, 'drizzle.__drizzle_migrations': 1, 'pgx.kept': 0, events: 2 });
      expect(Object.keys(digest.tableHashes).sort()).toEqual(Object.keys(digest.byTable).sort());
      for (const [key, qualified] of [
        ['plain', 'plain'],
        ['drizzle.__drizzle_migrations', 'drizzle.__drizzle_migrations'],
        ['pgx.kept', 'pgx.kept'],
        ['events', 'events'],
      ] as const) {
        expect(digest.tableHashes[key], key).toBe((await expectedDigest(qualified)).hash);
      }
    });
  });

  it('asks for the table list, then one statement per table, and keeps counts as numbers', async () => {
    const asked: string[] = [];
    const fake: SqlRunner = {
      query: async (text) => {
        asked.push(text);
        if (asked.length === 1) return { rows: [{ schema: 'public', name: 'a' }, { schema: 'audit', name: 'b' }] as never[] };
        return { rows: [text.includes('"a"') ? { n: '12', s1: '-5', s2: '7' } : { n: '0', s1: '0', s2: '0' }] as never[] };
      },
    };
    const digest = await digestTables(fake);
    expect(asked[0]).toMatch(/FROM pg_catalog\.pg_class/);
    expect(asked.slice(1)).toEqual([tableDigestSql('public', 'a'), tableDigestSql('audit', 'b')]);
    expect(digest).toEqual({ byTable: { a: 12, 'audit.b': 0 }, tableHashes: { a: sha256('12:-5:7'), 'audit.b': sha256('0:0:0') } });
  });

  it('keys a table of public by its name alone', () => {
    expect(tableKey('public', 'honeypot_events')).toBe('honeypot_events');
    expect(tableKey('drizzle', '__drizzle_migrations')).toBe('drizzle.__drizzle_migrations');
    expect(tableKey('Public', 't')).toBe('Public.t');
  });
});

describe('row counts hash', () => {
  it('is SHA-256 of the canonical JSON of the counts: keys sorted, whatever order they were set in', () => {
    expect(rowCountsSha256({ b: 2, a: 1 })).toBe(sha256('{"a":1,"b":2}'));
    expect(rowCountsSha256({})).toBe(sha256('{}'));
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.nat()), (counts) => {
        const reversed = Object.fromEntries(Object.entries(counts).reverse());
        expect(rowCountsSha256(reversed)).toBe(rowCountsSha256(counts));
      }),
    );
  });
});

describe('drift between a record and a restore', () => {
  const digestArb = fc.dictionary(
    fc.stringMatching(/^[a-z_.]{1,12}$/),
    fc.record({ n: fc.nat({ max: 5 }), hash: fc.constantFrom('h1', 'h2', 'h3') }),
  ).map((tables) => digestOf(
    Object.fromEntries(Object.entries(tables).map(([k, v]) => [k, v.n])),
    Object.fromEntries(Object.entries(tables).map(([k, v]) => [k, v.hash])),
  ));

  it('lists, sorted, every table whose count or hash differs or that only one side has (fast-check)', () => {
    fc.assert(
      fc.property(digestArb, digestArb, (recorded, restored) => {
        const names = [...new Set([...Object.keys(recorded.byTable), ...Object.keys(restored.byTable)])];
        const expected = names
          .filter((name) => !(name in recorded.byTable) || !(name in restored.byTable)
            || recorded.byTable[name] !== restored.byTable[name] || recorded.tableHashes[name] !== restored.tableHashes[name])
          .sort();
        expect(driftedTables(recorded, restored)).toEqual(expected);
        expect(driftedTables(recorded, recorded)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('names each kind of difference', () => {
    const recorded = digestOf({ same: 1, count: 2, hash: 3, gone: 4 }, { same: 'a', count: 'b', hash: 'c', gone: 'd' });
    const restored = digestOf({ same: 1, count: 5, hash: 3, added: 0 }, { same: 'a', count: 'b', hash: 'x', added: 'e' });
    expect(driftedTables(recorded, restored)).toEqual(['added', 'count', 'gone', 'hash']);
    expect(driftedTables(restored, recorded)).toEqual(['added', 'count', 'gone', 'hash']);
    // Unicode code-unit order, as Array.prototype.sort gives.
    expect(driftedTables(digestOf({ b: 1, B: 1, a: 1 }), digestOf({}))).toEqual(['B', 'a', 'b']);
  });
});
