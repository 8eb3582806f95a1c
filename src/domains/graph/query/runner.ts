import { type SQL, sql } from 'drizzle-orm';
import { type Db, rowsOf } from '../../../platform/db/client.ts';
import { sqlStateOf, withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, type ServiceError } from '../../../platform/errors.ts';
import { ANCHORED_PLAN_SETTINGS, type CompiledQuery, CUT_SETTINGS, PLAN_SETTINGS, TRUNCATION_CAUSES, type TruncationCause } from './compile.ts';

/**
 * Where a compiled query runs (docs/graph/query.md, "Where a query runs"): on a PostgreSQL server
 * in a read-only transaction with a statement timeout (this file), or on the embedded database in a
 * worker thread over a copy of the graph that is abandoned when it runs too long (replica/).
 * Both run the same three statements, in one transaction: the settings, the query, and the read of
 * what the query cut.
 */

export interface StatementOutcome {
  rows: Record<string, unknown>[];
  /** The caps the statement hit (compile.ts `MATCH_ROW_CAP`, `WALK_ROW_CAP`), in TRUNCATION_CAUSES order: the answer is truncated. */
  cuts: TruncationCause[];
}

export interface GraphQueryRunner {
  run(compiled: CompiledQuery): Promise<StatementOutcome>;
  close(): Promise<void>;
}

/** `SELECT set_config(…, true), …`: settings for the query's transaction only. */
export function transactionSettings(statementTimeoutMs: number, anchored: boolean): SQL {
  const settings: Record<string, string> = {
    transaction_read_only: 'on',
    statement_timeout: String(statementTimeoutMs),
    // Cleared, so what the read after the statement finds was set by this statement.
    ...Object.fromEntries(Object.values(CUT_SETTINGS).map((name) => [name, '0'])),
    ...PLAN_SETTINGS,
    ...(anchored ? ANCHORED_PLAN_SETTINGS : {}),
  };
  // The names are this module's own constants (written into the text so a statement log reads plainly); the values are parameters.
  return sql`SELECT ${sql.join(Object.entries(settings).map(([name, value]) => sql`set_config(${sql.raw(`'${name}'`)}, ${value}, true)`), sql`, `)}`;
}

/** Reads, after the query, which caps it hit (the statement records them with set_config). */
export const READ_CUTS = sql.raw(`SELECT ${Object.entries(CUT_SETTINGS).map(([cause, name]) => `current_setting('${name}', true) AS "${cause}"`).join(', ')}`);

/** The causes READ_CUTS's row says were hit. */
export const cutsOf = (row: Partial<Record<TruncationCause, unknown>> | undefined): TruncationCause[] => TRUNCATION_CAUSES.filter((cause) => row?.[cause] === '1');

export function queryTimeout(timeoutMs: number): ServiceError {
  return badRequest(
    'query-timeout',
    `The query ran longer than ${timeoutMs / 1000} s and was stopped. Narrow the pattern: give the first node a label and a key (e.g. (i:Incident {key: '…'})), name relationship types, shorten variable-length ranges, or lower LIMIT.`,
    { timeoutMs },
  );
}

/** A data exception (SQLSTATE class 22: a value the database cannot hold or compare) is a problem of the query text. */
export const valueRefused = () => badRequest('invalid-query', 'A value in the query cannot be used by the database; check its strings and numbers.');

/** SQLSTATE query_canceled: statement_timeout (or a cancel request) stopped the statement. */
const QUERY_CANCELED = '57014';

/**
 * On a PostgreSQL server: the statement runs in another process, so a long one holds a connection,
 * not this event loop, and `statement_timeout` cancels it (SQLSTATE 57014, answered 400
 * `query-timeout`, not 503: the platform's "database unavailable" rule does not match it).
 */
export function createServerRunner(db: Db, options: { statementTimeoutMs: number }): GraphQueryRunner {
  const { statementTimeoutMs } = options;
  return {
    async run(compiled) {
      try {
        return await withTransaction(db, async (tx) => {
          await tx.execute(transactionSettings(statementTimeoutMs, compiled.anchored));
          const rows = rowsOf<Record<string, unknown>>(await tx.execute(compiled.statement));
          const [cuts] = rowsOf<Record<TruncationCause, unknown>>(await tx.execute(READ_CUTS));
          return { rows, cuts: cutsOf(cuts) };
        });
      } catch (error) {
        const state = sqlStateOf(error);
        if (state === QUERY_CANCELED) throw queryTimeout(statementTimeoutMs);
        if (state?.startsWith('22')) throw valueRefused();
        throw error;
      }
    },
    close: async () => {},
  };
}
