import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import * as repo from './repository.ts';

/** The only scope of the switch (spec A "Freeze switch"): it stops chaos on the whole deployment. */
export const FREEZE_SCOPE = 'global';
export const REASON_MAX = 500;

/** The freeze switch as the API answers it. */
export interface FreezeView {
  scope: typeof FREEZE_SCOPE;
  frozen: boolean;
  reason: string;
  /** The operator who last set it; null before anyone did. */
  updatedBy: string | null;
  updatedAt: string;
}

/**
 * The migration seeds the row; a database without it (restored from before the migration ran, or
 * edited by hand) reads as never set: not frozen. Only a POST writes it back.
 */
const NEVER_SET: repo.FreezeRow = { scope: FREEZE_SCOPE, frozen: false, reason: '', updatedBy: null, updatedAt: new Date(0) };

const toView = (row: repo.FreezeRow): FreezeView => ({
  scope: FREEZE_SCOPE,
  frozen: row.frozen,
  reason: row.reason,
  updatedBy: row.updatedBy,
  updatedAt: row.updatedAt.toISOString(),
});

/** What the abortion of an open run says of the freeze that caused it (the run's abortReason). */
export const freezeAbortReason = (username: string, reason: string) => `chaos was frozen by ${username}${reason === '' ? '' : `: ${reason}`}`;

export interface FreezeServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  /**
   * Ends the run in progress, if any, as `aborted` with this reason, and undoes what it injected.
   * Called before the switch is written: the run may hold this instance's database sessions
   * read-only (prisma-readonly-window), and aborting it gives the write back.
   */
  abortOpenRun(reason: string): Promise<void>;
}

/** The freeze switch (docs/chaos/README.md, "Freeze"): while on, the schedule starts nothing and manual runs are refused. */
export function createFreezeService(deps: FreezeServiceDeps) {
  const { db, clock, audit } = deps;

  async function current(): Promise<FreezeView> {
    return toView((await repo.freezeRow(db, FREEZE_SCOPE)) ?? NEVER_SET);
  }

  return {
    current,
    /** Whether chaos is frozen now (what the chaos-schedule job and a manual run ask first). */
    isFrozen: async (): Promise<boolean> => (await current()).frozen,

    /**
     * Freezes (`frozen` true: the open run is aborted first, then the switch written) or thaws.
     * Audited as `chaos.freeze` or `chaos.thaw` with the switch before and after; setting the
     * state and reason it has changes and audits nothing.
     */
    async set(ctx: CallContext, input: { frozen: boolean; reason?: string | undefined }): Promise<FreezeView> {
      const reason = input.reason ?? '';
      if (input.frozen) await deps.abortOpenRun(freezeAbortReason(ctx.principal.username, reason));
      const row = await withTransaction(db, async (tx) => {
        const before = await repo.lockFreezeRow(tx, FREEZE_SCOPE);
        if (before !== null && before.frozen === input.frozen && before.reason === reason) return before;
        const after: repo.FreezeRow = { scope: FREEZE_SCOPE, frozen: input.frozen, reason, updatedBy: ctx.principal.username, updatedAt: clock.now() };
        await repo.writeFreezeRow(tx, after);
        await audit.record(tx, {
          verb: input.frozen ? 'chaos.freeze' : 'chaos.thaw',
          target: `chaos-freeze:${FREEZE_SCOPE}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toView(before ?? NEVER_SET),
          after: toView(after),
          requestId: ctx.requestId,
        });
        return after;
      });
      return toView(row);
    },
  };
}

export type FreezeService = ReturnType<typeof createFreezeService>;
