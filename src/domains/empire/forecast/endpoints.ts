import { Type } from '@sinclair/typebox';
import type { Clock } from '../../../platform/clock.ts';
import { defineEndpoint, type Endpoint, IsoDate, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { exampleFreshness, Freshness } from '../../../platform/freshness.ts';
import { FORECAST_PRODUCER, type Forecaster } from './service.ts';

/** Forecasts of the empire layer (spec B group 2). */

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

export function empireForecastEndpoints(deps: { forecaster: Forecaster; clock: Clock }): Endpoint[] {
  const { forecaster, clock } = deps;
  return [
    defineEndpoint({
      id: 'empireForecasts',
      title: 'Latest forecasts',
      description:
        'The latest forecaster score of every toolset (docs/empire/README.md, "Forecasts"); of the token\'s toolsets only when it is bound to toolsets. ' +
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
  ];
}
