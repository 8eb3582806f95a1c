import { sql } from 'drizzle-orm';
import type { Db } from './client.ts';

/**
 * Runs `work` in one transaction: a change and the audit fact that records it commit together or
 * not at all. The transaction handle is itself a Db, so repositories take either.
 */
export function withTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction((tx) => work(tx as unknown as Db));
}

/**
 * `withTransaction`, writable even while the database is in its read-only window
 * (Database.setReadOnly, docs/chaos/README.md): the window only changes each session's default, which a
 * transaction may override as its first statement. For the chaos runner's own records, which must
 * be written while it holds the window open; nothing else uses it.
 */
export function withWritableTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SET TRANSACTION READ WRITE`);
    return work(tx as unknown as Db);
  });
}

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

/** True for failures that mean "the database cannot be reached", which the API answers with 503. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (CONNECTION_ERROR_CODES.has(code) || code.startsWith('08'))) return true;
    if (typeof message === 'string' && /Connection terminated|timeout exceeded when trying to connect|Query read timeout|is not queryable|PGlite is closed|Cannot use a pool after calling end/i.test(message)) {
      return true;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** What `pick` finds first along `error` and the errors it wraps (drizzle wraps the driver's). */
function alongCauses<T>(error: unknown, pick: (e: Record<string, unknown>) => T | undefined): T | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const found = pick(e as Record<string, unknown>);
    if (found !== undefined) return found;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The SQLSTATE of a database error, or undefined. */
export const sqlStateOf = (error: unknown): string | undefined =>
  alongCauses(error, (e) => (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined));

/** True when `error` (or what it wraps) is PostgreSQL's unique_violation. */
export const isUniqueViolation = (error: unknown): boolean => sqlStateOf(error) === '23505';

/** True when `error` (or what it wraps) is a write refused by a read-only session (read_only_sql_transaction). */
export const isReadOnlyRefusal = (error: unknown): boolean => sqlStateOf(error) === READ_ONLY_SQL_TRANSACTION;

export const READ_ONLY_SQL_TRANSACTION = '25006';

/** The constraint (or unique index) a database error names, or undefined. */
export const violatedConstraintOf = (error: unknown): string | undefined => alongCauses(error, (e) => (typeof e.constraint === 'string' ? e.constraint : undefined));
