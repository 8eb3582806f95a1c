import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { isUuid } from '../../platform/db/paging.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { notFound } from '../../platform/errors.ts';
import { inToolsetReach, type ToolsetCaller } from '../../platform/http/auth.ts';
import * as repo from './repository.ts';

/** What a note may be attached to; `event` unless the caller says otherwise. */
export const NOTE_TARGET_KINDS = ['event', 'incident'] as const;
export type NoteTargetKind = (typeof NOTE_TARGET_KINDS)[number];
/**
 * A note's colour is any string of at most NOTE_COLOR_MAX_LENGTH characters, or null (spec A:
 * "string or null"): `amber`, `#ffaa00` and names of other consoles are all kept as sent. The
 * console renders these names and any `#rrggbb`; they are a hint, not a rule.
 */
export const NOTE_COLORS = ['yellow', 'red', 'orange', 'green', 'blue', 'purple', 'gray'] as const;
export const NOTE_COLOR_MAX_LENGTH = 32;
export const NOTE_COLOR_DESCRIPTION = `Any string of at most ${NOTE_COLOR_MAX_LENGTH} characters, kept as sent; null for none. The console renders ${NOTE_COLORS.join(', ')} and #rrggbb.`;

export interface NoteView {
  id: string;
  targetKind: NoteTargetKind;
  note: string;
  pinned: boolean;
  color: string | null;
  userId: string;
  createdAt: string;
  updatedAt: string;
}

const view = (row: repo.NoteRow): NoteView => ({
  id: row.id,
  targetKind: row.targetKind as NoteTargetKind,
  note: row.note,
  pinned: row.pinned,
  color: row.color,
  userId: row.userId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export function createNoteService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;

  /**
   * Whether the caller reaches a note's target. Anyone not bound to toolsets reaches every target,
   * stored or not (a note may be on an event another region holds). A token bound to toolsets
   * reaches only the stored events and incidents of its toolsets, named by the id the service gave
   * them: an id of another toolset's record and an id of nothing are answered alike, so a bound
   * token learns neither whose a record is nor that it exists.
   */
  async function targetInReach(principal: ToolsetCaller, targetKind: NoteTargetKind, id: string): Promise<boolean> {
    if (principal === null || principal.toolsets === null) return true;
    if (!isUuid(id)) return false;
    const target = targetKind === 'incident' ? await repo.incidentById(db, id) : await repo.eventById(db, id);
    return target !== null && inToolsetReach(principal, target.toolset);
  }

  return {
    /** The note on an event (or other target), or null; null too for a target out of the caller's reach. */
    async read(input: { eventId: string; tenant?: string | undefined; targetKind?: NoteTargetKind | undefined }, principal: ToolsetCaller) {
      const targetKind = input.targetKind ?? 'event';
      const row = (await targetInReach(principal, targetKind, input.eventId)) ? await repo.noteFor(db, { targetKind, eventId: input.eventId, tenant: input.tenant ?? '' }) : null;
      return { eventId: input.eventId, tenant: input.tenant ?? null, note: row ? view(row) : null };
    },

    /** Writes the note of a target, replacing the one it had; the caller becomes its `userId`. Audited. */
    async upsert(
      ctx: CallContext,
      input: { eventId: string; note: string; pinned?: boolean | undefined; color?: string | null | undefined; tenant?: string | undefined; targetKind?: NoteTargetKind | undefined },
    ) {
      if (!(await targetInReach(ctx.principal, input.targetKind ?? 'event', input.eventId))) {
        throw notFound(`There is no empire ${input.targetKind ?? 'event'} ${input.eventId}.`);
      }
      const now = clock.now();
      const row: repo.NoteRow = {
        id: randomUUID(),
        targetKind: input.targetKind ?? 'event',
        eventId: input.eventId,
        tenant: input.tenant ?? '',
        note: input.note,
        pinned: input.pinned ?? false,
        color: input.color ?? null,
        userId: ctx.principal.userId,
        createdAt: now,
        updatedAt: now,
      };
      const stored = await withTransaction(db, async (tx) => {
        const { stored, before } = await repo.upsertNote(tx, row);
        await audit.record(tx, {
          verb: 'empire.note-upsert',
          target: `empire-note:${stored.targetKind}:${stored.eventId}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: before ? view(before) : null,
          after: view(stored),
          requestId: ctx.requestId,
        });
        return stored;
      });
      return { ok: true as const, id: stored.id, eventId: stored.eventId, updatedAt: stored.updatedAt.toISOString() };
    },
  };
}

export type NoteService = ReturnType<typeof createNoteService>;
