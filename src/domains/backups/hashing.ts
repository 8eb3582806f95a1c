import { canonicalJson, sha256Hex } from '../../platform/crypto.ts';

/**
 * Row counts and content hashes per table, computed the same way on the live database (inside the
 * transaction the dump is taken from) and on a restored copy (docs/backups/README.md, "Hashing").
 *
 * Each row is digested as MD5 of its text form (`row::text`) under fixed output settings, so the
 * same row gives the same bytes on any connection; the digests are folded by an order-independent
 * aggregate (two sums of 64-bit slices, exact as numeric), so the hash does not
 * depend on the physical row order a restore produces and PostgreSQL streams the table once in
 * constant memory.
 */

/** What runs the statements: a node-postgres client, or a PGlite transaction. */
export interface SqlRunner {
  query<T>(text: string): Promise<{ rows: T[] }>;
}

export interface TableDigest {
  /** Table → row count. Tables of `public` by name, others as `schema.table`. */
  byTable: Record<string, number>;
  /** Table → SHA-256 hex over "count:s1:s2" (the two slice sums). */
  tableHashes: Record<string, string>;
}

/**
 * Output settings every hashed text form depends on, pinned for the current transaction: time
 * zone and date style (timestamps), float digits (shortest exact form), bytea and interval styles.
 */
export const STABLE_OUTPUT_SETTINGS = [
  "SET LOCAL TimeZone = 'UTC'",
  "SET LOCAL DateStyle = 'ISO, YMD'",
  "SET LOCAL IntervalStyle = 'postgres'",
  'SET LOCAL extra_float_digits = 3',
  "SET LOCAL bytea_output = 'hex'",
] as const;

export async function pinOutputSettings(q: SqlRunner): Promise<void> {
  for (const statement of STABLE_OUTPUT_SETTINGS) await q.query(statement);
}

/** Ordinary and partitioned tables outside the system schemas (partitions are counted in their parent). */
const TABLES_SQL = `
  SELECT n.nspname AS schema, c.relname AS name
    FROM pg_catalog.pg_class c
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
     AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
   ORDER BY 1, 2`;

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The statement that counts and hashes one table in a single pass. Rows are digested with MD5, not
 * SHA-256: PGlite's WebAssembly SHA-256 is about five times slower (11 s against 2 s for 200,000
 * rows), and the fold of digests is a fingerprint against accidental change, not a security
 * boundary (the file's SHA-256 and the audit chain are).
 */
export function tableDigestSql(schema: string, table: string): string {
  const slice = (from: number) => `coalesce(sum(('x' || substr(h, ${from}, 16))::bit(64)::bigint), 0)::text`;
  return `SELECT count(*)::text AS n, ${slice(1)} AS s1, ${slice(17)} AS s2
    FROM (SELECT md5(obs_backup_row::text) AS h
            FROM ${quoteIdent(schema)}.${quoteIdent(table)} AS obs_backup_row) AS digests`;
}

export const tableKey = (schema: string, table: string) => (schema === 'public' ? table : `${schema}.${table}`);

/** Counts and hashes every table; call it inside a transaction after `pinOutputSettings`. */
export async function digestTables(q: SqlRunner): Promise<TableDigest> {
  const tables = (await q.query<{ schema: string; name: string }>(TABLES_SQL)).rows;
  const byTable: Record<string, number> = {};
  const tableHashes: Record<string, string> = {};
  for (const { schema, name } of tables) {
    const [row] = (await q.query<{ n: string; s1: string; s2: string }>(tableDigestSql(schema, name))).rows;
    const key = tableKey(schema, name);
    byTable[key] = Number(row!.n);
    tableHashes[key] = sha256Hex(`${row!.n}:${row!.s1}:${row!.s2}`);
  }
  return { byTable, tableHashes };
}

/** rowCountsSha256 (and restoredRowSha256): SHA-256 of the RFC 8785 canonical JSON of byTable. */
export const rowCountsSha256 = (byTable: Record<string, number>): string => sha256Hex(canonicalJson(byTable));

/** The tables whose count or hash differs between the record and the restore, or that only one of them has; sorted. */
export function driftedTables(recorded: TableDigest, restored: TableDigest): string[] {
  const names = new Set([...Object.keys(recorded.byTable), ...Object.keys(restored.byTable)]);
  return [...names]
    .filter((name) => recorded.byTable[name] !== restored.byTable[name] || recorded.tableHashes[name] !== restored.tableHashes[name])
    .sort();
}
