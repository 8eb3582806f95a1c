import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { isUuid } from '../../../platform/db/paging.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, notFound } from '../../../platform/errors.ts';
import { inToolsetReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import type { IncidentService } from '../incidents/service.ts';
import * as repo from './repository.ts';

/** Stored events one at a time (spec B group 2): the lineage of an event, and the notes on events and incidents. */

/** Steps walked each way by default and at most (a 1,000-event chain fits in one request). */
export const LINEAGE_DEPTH_DEFAULT = 1000;
export const LINEAGE_DEPTH_MAX = 5000;
/** Events listed each way at most; beyond it the direction is `truncated`. */
export const LINEAGE_ROWS_MAX = 5000;

export interface LineageEvent {
  eventId: string;
  id: string;
  toolset: string;
  eventType: string;
  ts: string;
  tenant: string | null;
  causedBy: string | null;
  receivedAt: string;
  compatMode: boolean;
  /** Steps from the focal event (0 for the focal event itself). */
  depth: number;
}

const lineageView = (r: repo.LineageRow): LineageEvent => ({
  eventId: r.eventId,
  id: r.senderId,
  toolset: r.toolset,
  eventType: r.eventType,
  ts: r.ts.toISOString(),
  tenant: r.tenant,
  causedBy: r.causedBy,
  receivedAt: r.receivedAt.toISOString(),
  compatMode: r.compatMode,
  depth: r.depth,
});

/** Nearest first; within one step, oldest first. */
const byDistance = (a: repo.LineageRow, b: repo.LineageRow) => a.depth - b.depth || a.ts.getTime() - b.ts.getTime() || a.eventId.localeCompare(b.eventId);

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

const noteView = (row: repo.NoteRow): NoteView => ({
  id: row.id,
  targetKind: row.targetKind as NoteTargetKind,
  note: row.note,
  pinned: row.pinned,
  color: row.color,
  userId: row.userId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export function createEventService(deps: { db: Db; clock: Clock; audit: AuditLog; incidents: Pick<IncidentService, 'toolsetOf'> }) {
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
    const toolset = targetKind === 'incident' ? await deps.incidents.toolsetOf(id) : ((await repo.eventById(db, id))?.toolset ?? null);
    return toolset !== null && inToolsetReach(principal, toolset);
  }

  return {
    /**
     * Walks `causedBy` both ways from one event (spec B group 2): `upstream` is the chain of causes,
     * nearest first; `downstream` every event it led to, level by level. A cycle stops where it
     * closes; the walk stops at `depth` steps and at LINEAGE_ROWS_MAX events each way
     * (`truncated`). An event of a toolset out of the caller's reach is answered as unknown; the
     * walk never leaves the focal event's toolset (`causedBy` names an event of the same toolset).
     */
    async lineage(eventId: string, requestedDepth: number | undefined, principal: ToolsetCaller) {
      const depth = requestedDepth ?? LINEAGE_DEPTH_DEFAULT;
      if (!isUuid(eventId)) throw notFound(`There is no empire event ${eventId}.`);
      if (depth < 1 || depth > LINEAGE_DEPTH_MAX) throw badRequest('invalid-query', `query.depth must be 1 to ${LINEAGE_DEPTH_MAX}.`, { field: 'query.depth' });
      const focal = await repo.eventById(db, eventId);
      if (!focal || !inToolsetReach(principal, focal.toolset)) throw notFound(`There is no empire event ${eventId}.`);
      const [up, down] = await Promise.all([repo.lineage(db, focal, 'up', depth, LINEAGE_ROWS_MAX), repo.lineage(db, focal, 'down', depth, LINEAGE_ROWS_MAX)]);
      const side = (rows: repo.LineageRow[]) => ({ events: rows.slice(0, LINEAGE_ROWS_MAX).sort(byDistance).map(lineageView), truncated: rows.length > LINEAGE_ROWS_MAX });
      const upstream = side(up);
      const downstream = side(down);
      return {
        focal: lineageView(focal),
        upstream: upstream.events,
        downstream: downstream.events,
        depth,
        upstreamTruncated: upstream.truncated,
        downstreamTruncated: downstream.truncated,
      };
    },

    /** The note on an event (or other target), or null; null too for a target out of the caller's reach. */
    async readNote(input: { eventId: string; tenant?: string | undefined; targetKind?: NoteTargetKind | undefined }, principal: ToolsetCaller) {
      const targetKind = input.targetKind ?? 'event';
      const row = (await targetInReach(principal, targetKind, input.eventId)) ? await repo.noteFor(db, { targetKind, eventId: input.eventId, tenant: input.tenant ?? '' }) : null;
      return { eventId: input.eventId, tenant: input.tenant ?? null, note: row ? noteView(row) : null };
    },

    /** Writes the note of a target, replacing the one it had; the caller becomes its `userId`. Audited. */
    async upsertNote(
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
          before: before ? noteView(before) : null,
          after: noteView(stored),
          requestId: ctx.requestId,
        });
        return stored;
      });
      return { ok: true as const, id: stored.id, eventId: stored.eventId, updatedAt: stored.updatedAt.toISOString() };
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;
