import type { Db } from '../../platform/db/client.ts';
import { badRequest, notFound } from '../../platform/errors.ts';
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `<openedAt ISO>|<id>` of a page's last incident; a bare ISO time means "opened before it". */
function decodeCursor(cursor: string | undefined): { at: Date; id: string | null } | null {
  if (cursor === undefined) return null;
  const [time, id, ...rest] = cursor.split('|');
  const at = new Date(time ?? '');
  if (rest.length > 0 || Number.isNaN(at.getTime()) || (id !== undefined && !UUID.test(id))) {
    throw badRequest('invalid-query', 'query.cursor must be the nextCursor of an earlier page, or an ISO 8601 time.', { field: 'query.cursor' });
  }
  return { at, id: id ?? null };
}

export function createIncidentService(deps: { db: Db }) {
  const { db } = deps;
  return {
    async list(input: { toolset?: string | undefined; status?: string | undefined; severity?: string | undefined; cursor?: string | undefined; limit?: number | undefined }) {
      const limit = input.limit ?? INCIDENTS_LIMIT_DEFAULT;
      const rows = await repo.listIncidents(db, { toolset: input.toolset, status: input.status, severity: input.severity, before: decodeCursor(input.cursor), limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return { incidents: page.map(incidentView), nextCursor: rows.length > limit && last ? `${last.openedAt.toISOString()}|${last.id}` : null };
    },
    async read(id: string) {
      const row = UUID.test(id) ? await repo.incidentById(db, id) : null;
      if (!row) throw notFound(`There is no empire incident ${id}.`);
      return { incident: incidentView(row) };
    },
  };
}

export type IncidentService = ReturnType<typeof createIncidentService>;
