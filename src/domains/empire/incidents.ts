import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../platform/db/paging.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { conflict, notFound } from '../../platform/errors.ts';
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
      return withTransaction(db, async (tx) => {
        const row = isUuid(id) ? await repo.lockIncident(tx, id) : null;
        if (!row) throw notFound(`There is no empire incident ${id}.`);
        const from = row.status as Status;
        if (!canMove(from, input.status)) {
          throw conflict(`Incident ${id} is ${from}; it cannot become ${input.status} (resolved is final).`);
        }
        if (from === input.status) return { incident: incidentView(row) };
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
        return { incident: incidentView(next) };
      });
    },
    async list(input: { toolset?: string | undefined; status?: string | undefined; severity?: string | undefined; cursor?: string | undefined; limit?: number | undefined }) {
      const limit = input.limit ?? INCIDENTS_LIMIT_DEFAULT;
      const rows = await repo.listIncidents(db, { toolset: input.toolset, status: input.status, severity: input.severity, cursor: decodeTimeCursor(input.cursor), limit: limit + 1 });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.openedAt);
      return { incidents: page.map(incidentView), nextCursor };
    },
    /**
     * The incidents opened in [from, to), oldest first: id, toolset and opening time. Only those of
     * `toolsets` when it is given (a token bound to toolsets); none for an empty list.
     */
    async openedBetween(from: Date, to: Date, toolsets: readonly string[] | null = null): Promise<{ id: string; toolset: string; openedAt: Date }[]> {
      if (from.getTime() >= to.getTime() || (toolsets !== null && toolsets.length === 0)) return [];
      return repo.incidentsOpenedBetween(db, from, to, toolsets);
    },
    async read(id: string) {
      const row = isUuid(id) ? await repo.incidentById(db, id) : null;
      if (!row) throw notFound(`There is no empire incident ${id}.`);
      return { incident: incidentView(row) };
    },
  };
}

export type IncidentService = ReturnType<typeof createIncidentService>;
