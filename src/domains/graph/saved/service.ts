import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { isUniqueViolation, violatedConstraintOf, withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, conflict, notFound, ServiceError } from '../../../platform/errors.ts';
import * as repo from './repository.ts';

/**
 * Saved graph queries (spec A "Saved graph query"; docs/graph/README.md "Saved queries"). A name is
 * unique per owner, and among shared queries: `private` queries are seen and run by their owner
 * only, `workspace` and `public` ones by every operator of this deployment (this service has one
 * workspace; `public` additionally marks a query meant to be shared beyond it, which no surface
 * does yet), and a shared name belongs to the operator who shared it first, so nobody can put
 * their own text under the name others run. Running a saved query runs its text with the
 * runner's own visibility, never the owner's.
 */

export const SAVED_QUERY_VISIBILITIES = ['private', 'workspace', 'public'] as const;
export type SavedQueryVisibility = (typeof SAVED_QUERY_VISIBILITIES)[number];
export const SAVED_QUERY_NAME_MAX = 128;
export const SAVED_QUERY_DESCRIPTION_MAX = 2000;
/** Saved queries one operator may own: the POST is open to every read:empire holder, so it is bounded. */
export const SAVED_QUERIES_PER_OWNER_MAX = 500;
/** The longest list answered; the per-owner cap keeps real lists far below it. */
export const SAVED_QUERIES_LIST_MAX = 2000;

export interface SavedQueryView {
  id: string;
  name: string;
  description: string;
  query: string;
  visibility: SavedQueryVisibility;
  ownerUserId: string;
  runCount: number;
  lastRunAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export const savedQueryView = (row: repo.SavedQueryRow): SavedQueryView => ({
  id: row.id,
  name: row.name,
  description: row.description,
  query: row.query,
  visibility: row.visibility as SavedQueryVisibility,
  ownerUserId: row.ownerUserId,
  runCount: row.runCount,
  lastRunAt: row.lastRunAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export interface SaveQueryInput {
  name: string;
  query: string;
  description?: string | undefined;
  visibility?: SavedQueryVisibility | undefined;
}

export function createSavedQueryService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  /** Parses a query; throws the parser's 400 for invalid text. */
  validate: (query: string) => void;
}) {
  const { db, clock, audit, validate } = deps;
  return {
    async list(userId: string): Promise<SavedQueryView[]> {
      return (await repo.listVisible(db, userId, SAVED_QUERIES_LIST_MAX)).map(savedQueryView);
    },

    /**
     * Creates or replaces the caller's query of that name; the text is parsed first and an invalid
     * one is refused with the parser's reason, nothing stored. Run counts survive a replacement.
     * Audited as graph.saved-query-upsert.
     */
    async save(ctx: CallContext, input: SaveQueryInput): Promise<{ created: boolean; row: SavedQueryView }> {
      const name = input.name.trim();
      if (name.length === 0) throw badRequest('invalid-body', 'body.name must hold a character other than white space.');
      validate(input.query);
      const now = clock.now();
      const owner = ctx.principal.userId;
      const sharedNameTaken = () =>
        conflict(`Another operator already shares a saved graph query named "${name}"; choose another name, or keep yours private.`);
      return withTransaction(db, async (tx) => {
        const before = await repo.findOwn(tx, owner, name, true);
        const visibility = input.visibility ?? before?.visibility ?? 'private';
        if (visibility !== 'private' && (await repo.sharedByOther(tx, owner, name))) throw sharedNameTaken();
        let stored: repo.SavedQueryRow;
        if (before) {
          stored = await repo.update(tx, before.id, {
            query: input.query,
            description: input.description ?? before.description,
            visibility,
            updatedAt: now,
          });
        } else {
          if ((await repo.countOwned(tx, owner)) >= SAVED_QUERIES_PER_OWNER_MAX) {
            throw new ServiceError(409, 'limit-reached', `An operator may keep at most ${SAVED_QUERIES_PER_OWNER_MAX} saved graph queries; replace or reuse one.`);
          }
          stored = await repo.insert(tx, {
            id: randomUUID(),
            ownerUserId: owner,
            name,
            description: input.description ?? '',
            query: input.query,
            visibility,
            runCount: 0,
            lastRunAt: null,
            createdAt: now,
            updatedAt: now,
          });
        }
        await audit.record(tx, {
          verb: 'graph.saved-query-upsert',
          target: `graph-saved-query:${stored.id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: before ? savedQueryView(before) : null,
          after: savedQueryView(stored),
          requestId: ctx.requestId,
        });
        return { created: before === null, row: savedQueryView(stored) };
      }).catch((error: unknown) => {
        // Two saves of one name at the same moment: a unique index lets one through.
        if (!isUniqueViolation(error)) throw error;
        if (violatedConstraintOf(error) === OWN_NAME_INDEX) throw conflict(`Your saved graph query "${name}" was saved by another request at the same moment; send it again.`);
        throw sharedNameTaken();
      });
    },

    /**
     * The saved query `name` the caller may run: its own, else the workspace or public query of
     * that name (one at most: a shared name belongs to one operator); 404 when none.
     */
    async resolve(userId: string, name: string): Promise<SavedQueryView> {
      const [row] = await repo.findVisibleByName(db, userId, name, 1);
      if (row === undefined) throw notFound(`No saved graph query named "${name}" is visible to you.`);
      return savedQueryView(row);
    },

    async recordRun(id: string): Promise<void> {
      await repo.recordRun(db, id, clock.now());
    },
  };
}

export type SavedQueryService = ReturnType<typeof createSavedQueryService>;

const OWN_NAME_INDEX = 'graph_saved_queries_owner_name_idx';

