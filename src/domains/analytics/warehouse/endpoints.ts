import { Type } from '@sinclair/typebox';
import { DayParam, defineEndpoint, type Endpoint, Nullable, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { exampleFreshness, Freshness } from '../../../platform/freshness.ts';
import { DIMENSIONS } from '../metrics.ts';
import { type AnalyticsQueryService, QUERY_RANGE_DAYS_MAX } from './query.ts';
import { ROLLUP_PRODUCER } from './rollup.ts';

/** The warehouse reads (spec B group 4 `analytics/metrics`, `analytics/query`; docs/analytics/README.md). */

const TAG = 'analytics';
const UI_PATH = '/analytics';
const generatedAt = '2026-11-26T08:00:00.000Z';
const TEXT_MAX = 128;

const Filter = (what: string) =>
  Type.Optional(Type.String({ maxLength: TEXT_MAX, pattern: '^[^\\x00-\\x1F\\x7F]*$', description: `Only rows of this ${what} ('' matches rows naming none).` }));
const Unit = StringEnum(['count', 'usd', 'seconds'] as const, { description: 'What `value` measures: a count (value equals count), USD, or seconds.' });

const Metric = Type.Object({
  key: Type.String(),
  title: Type.String(),
  description: Type.String({ description: 'What is counted, by which day, and what each dimension holds.' }),
  dimensions: Type.Array(StringEnum(DIMENSIONS), { description: 'The dimensions the metric can be grouped and filtered by.' }),
  unit: Unit,
});

const SeriesPoint = Type.Object({
  dimDate: Type.String({ format: 'date', description: 'The UTC day.' }),
  dimWorkspaceId: Type.String({ description: "'' when not requested." }),
  dimToolset: Type.String({ description: "'' when not requested." }),
  dimSeverity: Type.String({ description: "'' when not requested." }),
  dimRegion: Type.String({ description: "'' when not requested." }),
  value: Type.Number({ description: 'Exact sum of the day\'s values (at most 6 decimal places).' }),
  count: Type.Integer({ minimum: 0, description: 'Facts summed (events, incidents, decisions, cost records).' }),
});

export function analyticsWarehouseEndpoints(service: AnalyticsQueryService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listAnalyticsMetrics',
      title: 'Analytics metrics',
      description: 'The metrics the warehouse keeps (docs/analytics/README.md): key, title, what each counts, the dimensions it carries and the unit of its value. The list is fixed by the deployment; every metric answers `analytics/query`.',
      method: 'GET',
      path: `${V1}/analytics/metrics`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      response: { schemaId: 'svc-analytics-metrics.v1', fields: { metrics: Type.Array(Metric) } },
      example: {
        schema: 'svc-analytics-metrics.v1',
        generatedAt,
        metrics: [
          {
            key: 'honeypot.events',
            title: 'Honeypot events',
            description: "Honeypot events captured, by the UTC day of the event's own time; workspaceId is the tenant slug, region is the OBSERVATORY_REGION of the deployment that recorded it.",
            dimensions: ['workspaceId', 'region'],
            unit: 'count',
          },
        ],
      },
      handler: async () => service.metrics(),
    }),
    defineEndpoint({
      id: 'queryAnalytics',
      title: 'Analytics query',
      description:
        `One metric per UTC day over [from, to) (\`to\` exclusive; at most ${QUERY_RANGE_DAYS_MAX} days), read from the warehouse the \`analytics-rollup\` job keeps (never from the events). ` +
        '`dims` (comma list) groups the series by those dimensions; the others are summed over and answer \'\'. Without `dims` the series has every day of the range (0 for a day without facts); with `dims` only the combinations that have facts. ' +
        'Filters match exactly. An unknown metric answers `unknownMetric` true with an empty series; a dimension that is not one of spec A\'s four or that the metric does not carry (asked in `dims` or filtered on) is listed in `invalidDims` and not grouped by (a filter on it matches only \'\'). ' +
        'Sorted by `dimDate`, then each dimension by UTF-16 code units; values are exact decimals: the same warehouse state answers the same bytes apart from `generatedAt`. ' +
        'The warehouse is as fresh as the last `analytics-rollup` run (every 15 minutes, at :07, :22, :37 and :52 UTC, or `POST {v1}/ops/jobs/analytics-rollup/run`): facts recorded since are not in the answer yet. `freshness.asOf` is when the metric\'s source was last rolled up (null, with `reason`, before its first rollup: the series is then 0). ' +
        'A token bound to toolsets reads only its toolsets\' rows of a metric divided by toolset (a `toolset` filter outside them is 403), and the honeypot metrics, which belong to no toolset, whole. 400 `invalid-date` or `invalid-range` for a bad range.',
      method: 'GET',
      path: `${V1}/analytics/query`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          metric: Type.String({ minLength: 1, maxLength: TEXT_MAX, description: 'A metric key (`analytics/metrics`).', examples: ['empire.incidents-opened'] }),
          from: DayParam('First day (inclusive), YYYY-MM-DD.', '2026-11-01'),
          to: DayParam(`Day after the last one (exclusive), YYYY-MM-DD; at most ${QUERY_RANGE_DAYS_MAX} days after from.`, '2026-11-26'),
          dims: Type.Optional(Type.String({ maxLength: 200, description: `Comma list of dimensions to group by: ${DIMENSIONS.join(', ')}.`, examples: ['toolset,severity'] })),
          workspace: Filter('workspace'),
          toolset: Filter('toolset'),
          severity: Filter('severity'),
          region: Filter('region'),
        },
        { examples: [{ metric: 'empire.incidents-opened', from: '2026-11-01', to: '2026-11-26', dims: 'toolset,severity', workspace: '', toolset: 'crawler-lab', severity: 'minor', region: 'local' }] },
      ),
      response: {
        schemaId: 'svc-analytics-query.v1',
        fields: {
          metric: Type.String(),
          unit: Nullable(Unit),
          from: Type.String({ format: 'date' }),
          to: Type.String({ format: 'date' }),
          dims: Type.Array(StringEnum(DIMENSIONS), { description: 'The dimensions grouped by, in the order of spec A.' }),
          filters: Type.Object(
            { workspace: Nullable(Type.String()), toolset: Nullable(Type.String()), severity: Nullable(Type.String()), region: Nullable(Type.String()) },
            { description: 'The filters applied; null: not filtered.' },
          ),
          total: Type.Object({ value: Type.Number(), count: Type.Integer({ minimum: 0 }) }),
          series: Type.Array(SeriesPoint),
          unknownMetric: Type.Boolean(),
          invalidDims: Type.Array(Type.String(), { description: 'Requested or filtered dimensions the metric does not carry, in the order asked.' }),
          freshness: Freshness,
        },
      },
      example: {
        schema: 'svc-analytics-query.v1',
        generatedAt,
        metric: 'empire.incidents-opened',
        unit: 'count',
        from: '2026-11-01',
        to: '2026-11-26',
        dims: ['toolset', 'severity'],
        filters: { workspace: '', toolset: 'crawler-lab', severity: 'minor', region: 'local' },
        total: { value: 3, count: 3 },
        series: [
          { dimDate: '2026-11-03', dimWorkspaceId: '', dimToolset: 'crawler-lab', dimSeverity: 'minor', dimRegion: '', value: 2, count: 2 },
          { dimDate: '2026-11-20', dimWorkspaceId: '', dimToolset: 'crawler-lab', dimSeverity: 'minor', dimRegion: '', value: 1, count: 1 },
        ],
        unknownMetric: false,
        invalidDims: ['workspaceId'],
        freshness: exampleFreshness(ROLLUP_PRODUCER, '2026-11-26T07:52:00.000Z'),
      },
      handler: async ({ query, principal }) => service.query(principal, query),
    }),
  ];
}
