import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, TimeCursorParam, V1 } from '../../../platform/http/registry.ts';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES, INCIDENTS_LIMIT_DEFAULT, INCIDENTS_LIMIT_MAX, type IncidentService } from './service.ts';

/** Incidents of the empire layer (issue 5): opened by the forecaster's latch or an accepted triage proposal. */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'empire';

const Incident = Type.Object({
  id: Type.String({ format: 'uuid' }),
  toolset: Type.String(),
  severity: StringEnum(INCIDENT_SEVERITIES),
  title: Type.String(),
  status: StringEnum(INCIDENT_STATUSES),
  source: Type.String({ description: 'What opened it: `forecast` for the forecaster\'s latch, `triage` for an accepted triage proposal.' }),
  eventIds: Type.Array(Type.String(), { description: 'The events it concerns: eventIds of the empire ingest, or of the honeypot ingest for an incident about the honeypot fleet (toolset `honeypot`, opened by triage).' }),
  details: Type.Record(Type.String(), Type.Unknown()),
  openedAt: IsoDate,
  resolvedAt: Nullable(IsoDate),
});
const exampleIncident = {
  id: '3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b',
  toolset: 'crawler-lab',
  severity: 'minor',
  title: 'Forecast: crawler-lab event rate surged (score 0.84 on 3 runs)',
  status: 'open',
  source: 'forecast',
  eventIds: ['7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01'],
  details: { z: 5.5, recentMean: 155, baselineMean: 100 },
  openedAt: generatedAt,
  resolvedAt: null,
};

export function empireIncidentEndpoints(deps: { incidents: IncidentService }): Endpoint[] {
  const { incidents } = deps;
  return [
    defineEndpoint({
      id: 'listEmpireIncidents',
      title: 'List empire incidents',
      description: 'Incidents of the toolsets, newest first, with filters and a cursor. A token bound to toolsets lists only theirs (a `toolset` filter outside them is 403) and sees only the event ids of its toolsets.',
      method: 'GET',
      path: `${V1}/empire/incidents`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/incidents',
      query: Type.Object({
        toolset: Type.Optional(Type.String({ maxLength: 128 })),
        status: Type.Optional(StringEnum(INCIDENT_STATUSES)),
        severity: Type.Optional(StringEnum(INCIDENT_SEVERITIES)),
        cursor: TimeCursorParam,
        limit: PageLimitParam(INCIDENTS_LIMIT_DEFAULT, INCIDENTS_LIMIT_MAX),
      }, { examples: [{ toolset: 'crawler-lab', status: 'open', severity: 'minor', cursor: '2026-11-24T12:00:00.000Z', limit: 50 }] }),
      response: { schemaId: 'svc-empire-incidents.v1', fields: { incidents: Type.Array(Incident), nextCursor: Nullable(Type.String()) } },
      example: { schema: 'svc-empire-incidents.v1', generatedAt, incidents: [exampleIncident], nextCursor: null },
      handler: async ({ query, principal }) => incidents.list(query, principal),
    }),
    defineEndpoint({
      id: 'readEmpireIncident',
      title: 'Read an empire incident',
      description: 'One incident with the events it concerns. 404 for an unknown id, and for an incident of a toolset the token is not bound to.',
      method: 'GET',
      path: `${V1}/empire/incidents/{id}`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/incidents',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f' }] }),
      response: { schemaId: 'svc-empire-incident.v1', fields: { incident: Incident } },
      example: { schema: 'svc-empire-incident.v1', generatedAt, incident: exampleIncident },
      handler: async ({ params, principal }) => incidents.read(params.id, principal),
    }),
    defineEndpoint({
      id: 'updateEmpireIncident',
      title: 'Acknowledge or resolve an empire incident',
      description:
        'Moves an incident on: `open` → `acknowledged` → `resolved`, or `open` → `resolved` (stamping `resolvedAt`). Resolved is final (409 `conflict`); asking for the status it has changes nothing and audits nothing. ' +
        'Audited as `empire-incident.update` with `notes`. While a forecast incident of a toolset is open or acknowledged, the forecaster opens no other. 404 for an unknown id, and for an incident of a toolset the token is not bound to.',
      method: 'POST',
      path: `${V1}/empire/incidents/{id}`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/empire/incidents',
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f' }] }),
      body: Type.Object(
        { status: StringEnum(['acknowledged', 'resolved'] as const), notes: Type.Optional(Type.String({ maxLength: 2000 })) },
        { additionalProperties: false, examples: [{ status: 'acknowledged', notes: 'Looking into the surge; a new crawl schedule went live at 08:00.' }] },
      ),
      response: { schemaId: 'svc-empire-incident.v1', fields: { incident: Incident } },
      example: { schema: 'svc-empire-incident.v1', generatedAt, incident: { ...exampleIncident, status: 'resolved', resolvedAt: '2026-11-24T09:30:00.000Z' } },
      handler: async ({ params, body, principal, requestId }) => incidents.update({ principal: principal as Principal, requestId }, params.id, body),
    }),
  ];
}
