import { Type } from '@sinclair/typebox';
import type { Clock } from '../../platform/clock.ts';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, TimeCursorParam, V1 } from '../../platform/http/registry.ts';
import { exampleFreshness, Freshness } from '../../platform/freshness.ts';
import { FORECAST_PRODUCER, type Forecaster } from './forecast.ts';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES, INCIDENTS_LIMIT_DEFAULT, INCIDENTS_LIMIT_MAX, type IncidentService } from './incidents.ts';

/** Forecasts and incidents of the empire layer (spec B group 2; incidents: issue 5). */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'empire';

const Forecast = Type.Object({
  toolset: Type.String(),
  score: Type.Number({ minimum: 0, maximum: 1 }),
  level: StringEnum(['none', 'watch', 'alert'] as const, { description: 'none below 0.4, watch from 0.4 to 0.7, alert above 0.7.' }),
  direction: StringEnum(['surge', 'silence', 'steady'] as const),
  runId: Type.String({ format: 'uuid' }),
  computedAt: IsoDate,
  recentMean: Type.Number({ description: 'Events an hour over the last 3 complete hours.' }),
  baselineMean: Type.Number({ description: 'Events an hour over the 165 hours before them.' }),
});

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

export function empireForecastEndpoints(deps: { forecaster: Forecaster; incidents: IncidentService; clock: Clock }): Endpoint[] {
  const { forecaster, incidents, clock } = deps;
  return [
    defineEndpoint({
      id: 'empireForecasts',
      title: 'Latest forecasts',
      description:
        'The latest forecaster score of every toolset (docs/empire.md, "Forecasts"); of the token\'s toolsets only when it is bound to toolsets. ' +
        'The job `forecast` scores every 15 minutes the complete hours before it runs: `freshness.asOf` is the end of the newest run\'s window (an event counts once its hour has ended and a run followed; null, with `reason`, before any forecast).',
      method: 'GET',
      path: `${V1}/empire/forecast`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/empire/forecasts',
      response: { schemaId: 'svc-empire-forecast.v1', fields: { forecasts: Type.Array(Forecast), freshness: Freshness } },
      example: {
        schema: 'svc-empire-forecast.v1',
        generatedAt,
        freshness: exampleFreshness(FORECAST_PRODUCER, '2026-11-24T08:00:00.000Z'),
        forecasts: [{ toolset: 'crawler-lab', score: 0.8408, level: 'alert', direction: 'surge', runId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', computedAt: generatedAt, recentMean: 155, baselineMean: 100 }],
      },
      handler: async ({ principal }) => forecaster.latest(principal),
    }),
    defineEndpoint({
      id: 'runEmpireForecast',
      title: 'Run the forecaster',
      description:
        'Runs the forecaster now (the job `forecast` runs it every 15 minutes): 7 days of hourly buckets per toolset become a score in 0..1; a toolset above 0.7 on 3 consecutive runs gets one minor incident. `stub: true` returns a deterministic empty pass and writes nothing. A token bound to toolsets cannot run it (403).',
      method: 'POST',
      path: `${V1}/empire/forecast`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      spansEveryToolset: 'a forecaster run (it scores every toolset and opens their incidents)',
      tag: TAG,
      kind: 'write',
      uiPath: '/empire/forecasts',
      body: Type.Object({ stub: Type.Optional(Type.Boolean({ default: false })) }, { additionalProperties: false, examples: [{ stub: false }] }),
      response: {
        schemaId: 'svc-empire-forecast-run.v1',
        fields: { ok: Type.Boolean(), runId: Type.String({ format: 'uuid' }), forecastsCreated: Type.Integer(), latchedIncidentIds: Type.Array(Type.String({ format: 'uuid' })) },
      },
      example: { schema: 'svc-empire-forecast-run.v1', generatedAt, ok: true, runId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', forecastsCreated: 3, latchedIncidentIds: [] },
      handler: async ({ body }) => forecaster.run(clock.now(), body.stub ?? false),
    }),
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
