import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../../platform/db/paging.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { conflict, notFound } from '../../../platform/errors.ts';
import { assertToolsetInReach, inToolsetReach, toolsetReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import * as repo from './repository.ts';

export const INCIDENT_SEVERITIES = ['critical', 'major', 'minor'] as const;
export const INCIDENT_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export const INCIDENTS_LIMIT_DEFAULT = 50;
export const INCIDENTS_LIMIT_MAX = 200;

export interface IncidentView {
  id: string;
  toolset: string;
  severity: (typeof INCIDENT_SEVERITIES)[number];
  title: string;
  status: (typeof INCIDENT_STATUSES)[number];
  source: string;
  eventIds: string[];
  details: Record<string, unknown>;
  openedAt: string;
  resolvedAt: string | null;
}

export const incidentView = (row: repo.IncidentRow): IncidentView => ({
  id: row.id,
  toolset: row.toolset,
  severity: row.severity as IncidentView['severity'],
  title: row.title,
  status: row.status as IncidentView['status'],
  source: row.source,
  eventIds: row.eventIds,
  details: row.details as Record<string, unknown>,
  openedAt: row.openedAt.toISOString(),
  resolvedAt: row.resolvedAt?.toISOString() ?? null,
});

type Status = (typeof INCIDENT_STATUSES)[number];

/**
 * The moves an incident's status may make: open → acknowledged → resolved, or open → resolved at
 * once. Resolved is final: a problem that returns is a new incident (the forecaster opens one on
 * its next streak). Asking for the status it already has changes nothing.
 */
export function canMove(from: Status, to: Status): boolean {
  if (from === to) return true;
  return from === 'open' ? to !== 'open' : from === 'acknowledged' ? to === 'resolved' : false;
}

export function createIncidentService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;

  /**
   * Incidents as a caller sees them. An incident may name events of toolsets other than its own (a
   * cross-toolset signal of triage); a caller bound to toolsets sees only the ids of events it
   * reaches, and of ids that are no stored empire event (honeypot events, which belong to no toolset).
   */
  async function viewsFor(rows: readonly repo.IncidentRow[], caller: ToolsetCaller): Promise<IncidentView[]> {
    const views = rows.map(incidentView);
    if (caller === null || caller.toolsets === null) return views;
    const ids = [...new Set(views.flatMap((v) => v.eventIds).filter(isUuid))];
    const toolsetOf = await repo.toolsetsOfEvents(db, ids);
    const reached = (id: string) => {
      const toolset = toolsetOf.get(id);
      return toolset === undefined || inToolsetReach(caller, toolset);
    };
    return views.map((v) => ({ ...v, eventIds: v.eventIds.filter(reached) }));
  }

  return {
    /**
     * Opens an incident inside the caller's transaction (triage opens one when an operator accepts
     * an incident proposal, and records the decision in the same transaction). Audited as
     * `empire-incident.open`.
     */
    async openWithin(
      tx: Db,
      ctx: CallContext,
      input: { toolset: string; severity: IncidentView['severity']; title: string; source: string; eventIds: string[]; details: Record<string, unknown> },
    ): Promise<IncidentView> {
      const row: repo.IncidentRow = { id: randomUUID(), ...input, status: 'open', openedAt: clock.now(), resolvedAt: null };
      await repo.insertIncident(tx, row);
      await audit.record(tx, {
        verb: 'empire-incident.open',
        target: `empire-incident:${row.id}`,
        surface: 'api',
        actor: actorOf(ctx.principal),
        after: incidentView(row),
        requestId: ctx.requestId,
      });
      return incidentView(row);
    },
    /** Acknowledges or resolves an incident (`resolvedAt` stamped); audited as `empire-incident.update`. */
    async update(ctx: CallContext, id: string, input: { status: 'acknowledged' | 'resolved'; notes?: string | undefined }) {
      const updated = await withTransaction(db, async (tx) => {
        const row = isUuid(id) ? await repo.lockIncident(tx, id) : null;
        // An incident of a toolset out of the caller's reach is answered as unknown.
        if (!row || !inToolsetReach(ctx.principal, row.toolset)) throw notFound(`There is no empire incident ${id}.`);
        const from = row.status as Status;
        if (!canMove(from, input.status)) {
          throw conflict(`Incident ${id} is ${from}; it cannot become ${input.status} (resolved is final).`);
        }
        if (from === input.status) return row;
        const next: repo.IncidentRow = { ...row, status: input.status, resolvedAt: input.status === 'resolved' ? clock.now() : null };
        await repo.updateIncidentStatus(tx, id, { status: next.status, resolvedAt: next.resolvedAt });
        await audit.record(tx, {
          verb: 'empire-incident.update',
          target: `empire-incident:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: { status: from },
          after: { status: next.status, resolvedAt: next.resolvedAt?.toISOString() ?? null, ...(input.notes === undefined ? {} : { notes: input.notes }) },
          requestId: ctx.requestId,
        });
        return next;
      });
      const [view] = await viewsFor([updated], ctx.principal);
      return { incident: view! };
    },
    /** Newest first; a caller bound to toolsets lists only theirs (a `toolset` filter outside them is 403). */
    async list(
      input: { toolset?: string | undefined; status?: string | undefined; severity?: string | undefined; cursor?: string | undefined; limit?: number | undefined },
      caller: ToolsetCaller,
    ) {
      if (input.toolset !== undefined) assertToolsetInReach(caller, input.toolset, 'read the incidents of');
      const limit = input.limit ?? INCIDENTS_LIMIT_DEFAULT;
      const rows = await repo.listIncidents(db, {
        toolset: input.toolset,
        status: input.status,
        severity: input.severity,
        reach: toolsetReach(caller),
        cursor: decodeTimeCursor(input.cursor),
        limit: limit + 1,
      });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.openedAt);
      return { incidents: await viewsFor(page, caller), nextCursor };
    },
    /**
     * The incidents opened in [from, to), oldest first: id, toolset and opening time. Only those of
     * `toolsets` when it is given (a token bound to toolsets); none for an empty list.
     */
    async openedBetween(from: Date, to: Date, toolsets: readonly string[] | null = null): Promise<{ id: string; toolset: string; openedAt: Date }[]> {
      if (from.getTime() >= to.getTime()) return [];
      return repo.incidentsOpenedBetween(db, from, to, toolsets);
    },
    /** Incidents not resolved yet (open or acknowledged) by severity, over every toolset (the trust snapshot; an internal read). */
    async unresolvedCounts(): Promise<Record<(typeof INCIDENT_SEVERITIES)[number], number>> {
      const counts = { critical: 0, major: 0, minor: 0 };
      for (const row of await repo.unresolvedIncidentCounts(db)) if (row.severity in counts) counts[row.severity as keyof typeof counts] += Number(row.n);
      return counts;
    },
    /** The toolset of a stored incident, or null for an id of none (a note on an incident is in reach through it). */
    async toolsetOf(id: string): Promise<string | null> {
      return (await repo.incidentById(db, id))?.toolset ?? null;
    },
    /** One incident; 404 for an unknown id, and for an incident of a toolset out of the caller's reach. */
    async read(id: string, caller: ToolsetCaller) {
      const row = isUuid(id) ? await repo.incidentById(db, id) : null;
      if (!row || !inToolsetReach(caller, row.toolset)) throw notFound(`There is no empire incident ${id}.`);
      const [view] = await viewsFor([row], caller);
      return { incident: view! };
    },
  };
}

export type IncidentService = ReturnType<typeof createIncidentService>;
