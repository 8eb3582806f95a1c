import { and, asc, eq } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Db } from '../db/client.ts';

/**
 * Where the alert-rule engine (engine.ts) keeps one kind of rule: each kind has a table of its own
 * (`honeypot_alert_rules`, `empire_alert_rules`) with the columns every rule has, and the engine's
 * SQL over it is the same. The table is a parameter rather than one rules table with a source
 * column, so rule ids, rows and migrations stay as they are (docs/architecture.md, "Alert rules").
 * What only one kind needs (a listing joined with tenants, a filter by toolset) stays in that
 * domain's repository.
 */

/** The columns of a rule that the engine reads and writes; a kind adds the columns of its owner (a tenant, a toolset). */
export interface StoredRule {
  id: string;
  name: string;
  enabled: boolean;
  /** As stored (jsonb, defaults filled in); read back through the kind's predicates. */
  predicate: unknown;
  /** As stored, whole (webhook secrets included: the evaluation needs them to enqueue); never returned. */
  destinations: unknown;
  createdAt: Date;
  lastFiredAt: Date | null;
  silenceUntil: Date | null;
  /** Events received up to here have been evaluated against the rule. */
  evaluatedUntil: Date | null;
}

/** The changeable columns: a change request's fields, and what a run moves. */
export type RulePatch = Partial<Pick<StoredRule, 'name' | 'enabled' | 'silenceUntil' | 'evaluatedUntil' | 'lastFiredAt'>>;

export interface RuleStore<Row extends StoredRule> {
  insert(db: Db, row: Row): Promise<void>;
  /** Locks one rule for a change (`FOR UPDATE`): waits for an evaluation holding it. */
  lock(db: Db, id: string): Promise<Row | null>;
  /**
   * Locks one enabled rule for evaluation, or returns null when it is disabled, gone, or being
   * evaluated by another run right now (`SKIP LOCKED`: that run owns it; this one moves on).
   */
  lockForEvaluation(db: Db, id: string): Promise<Row | null>;
  update(db: Db, id: string, patch: RulePatch): Promise<void>;
  /** The enabled rules, oldest first: the order a run evaluates them in. */
  enabledIds(db: Db): Promise<string[]>;
}

/** A Drizzle table with every column of `StoredRule` (by its property name). */
export type RuleTable = PgTable & { [K in keyof StoredRule]: PgColumn };

/** The engine's store over `table`; `Row` is the table's row, which must carry every `StoredRule` column. */
export function ruleStoreOf<T extends RuleTable>(table: T): RuleStore<T['$inferSelect'] & StoredRule> {
  type Row = T['$inferSelect'] & StoredRule;
  // Drizzle's builders cannot infer a row from a generic table; the casts say what `T` guarantees.
  const from = table as PgTable;
  return {
    async insert(db, row) {
      await db.insert(from).values(row as never);
    },
    async lock(db, id) {
      const [row] = await db.select().from(from).where(eq(table.id, id)).for('update');
      return (row as Row | undefined) ?? null;
    },
    async lockForEvaluation(db, id) {
      const [row] = await db
        .select()
        .from(from)
        .where(and(eq(table.id, id), eq(table.enabled, true)))
        .for('update', { skipLocked: true });
      return (row as Row | undefined) ?? null;
    },
    async update(db, id, patch) {
      await db.update(from).set(patch as never).where(eq(table.id, id));
    },
    async enabledIds(db) {
      const rows = await db.select({ id: table.id }).from(from).where(eq(table.enabled, true)).orderBy(asc(table.createdAt), asc(table.id));
      return rows.map((r) => r.id as string);
    },
  };
}
