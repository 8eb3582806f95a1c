import type { Db } from '../../platform/db/client.ts';
import { isUuid } from '../../platform/db/paging.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
import { inToolsetReach, type ToolsetCaller } from '../../platform/http/auth.ts';
import * as repo from './repository.ts';

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

const view = (r: repo.LineageRow): LineageEvent => ({
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

/**
 * Walks `causedBy` both ways from one event (spec B group 2): `upstream` is the chain of causes,
 * nearest first; `downstream` every event it led to, level by level. A cycle stops where it closes;
 * the walk stops at `depth` steps and at LINEAGE_ROWS_MAX events each way (`truncated`). An event
 * of a toolset out of the caller's reach is answered as unknown; the walk never leaves the focal
 * event's toolset (`causedBy` names an event of the same toolset).
 */
export async function lineageOf(db: Db, eventId: string, requestedDepth: number | undefined, principal: ToolsetCaller) {
  const depth = requestedDepth ?? LINEAGE_DEPTH_DEFAULT;
  if (!isUuid(eventId)) throw notFound(`There is no empire event ${eventId}.`);
  if (depth < 1 || depth > LINEAGE_DEPTH_MAX) throw badRequest('invalid-query', `query.depth must be 1 to ${LINEAGE_DEPTH_MAX}.`, { field: 'query.depth' });
  const focal = await repo.eventById(db, eventId);
  if (!focal || !inToolsetReach(principal, focal.toolset)) throw notFound(`There is no empire event ${eventId}.`);
  const [up, down] = await Promise.all([repo.lineage(db, focal, 'up', depth, LINEAGE_ROWS_MAX), repo.lineage(db, focal, 'down', depth, LINEAGE_ROWS_MAX)]);
  const side = (rows: repo.LineageRow[]) => ({ events: rows.slice(0, LINEAGE_ROWS_MAX).sort(byDistance).map(view), truncated: rows.length > LINEAGE_ROWS_MAX });
  const upstream = side(up);
  const downstream = side(down);
  return {
    focal: view(focal),
    upstream: upstream.events,
    downstream: downstream.events,
    depth,
    upstreamTruncated: upstream.truncated,
    downstreamTruncated: downstream.truncated,
  };
}
