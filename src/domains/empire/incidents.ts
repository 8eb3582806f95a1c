import type { Db } from '../../platform/db/client.ts';
import { decodeTimeCursor, isUuid, pageOf } from '../../platform/db/paging.ts';
import { notFound } from '../../platform/errors.ts';
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

export function createIncidentService(deps: { db: Db }) {
  const { db } = deps;
  return {
    async list(input: { toolset?: string | undefined; status?: string | undefined; severity?: string | undefined; cursor?: string | undefined; limit?: number | undefined }) {
      const limit = input.limit ?? INCIDENTS_LIMIT_DEFAULT;
      const rows = await repo.listIncidents(db, { toolset: input.toolset, status: input.status, severity: input.severity, cursor: decodeTimeCursor(input.cursor), limit: limit + 1 });
      const { page, nextCursor } = pageOf(rows, limit, (r) => r.openedAt);
      return { incidents: page.map(incidentView), nextCursor };
    },
    async read(id: string) {
      const row = isUuid(id) ? await repo.incidentById(db, id) : null;
      if (!row) throw notFound(`There is no empire incident ${id}.`);
      return { incident: incidentView(row) };
    },
  };
}

export type IncidentService = ReturnType<typeof createIncidentService>;
