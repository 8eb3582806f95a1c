import type { Db } from '../../../platform/db/client.ts';
import { type Freshness, freshnessOf } from '../../../platform/freshness.ts';
import { checkDayRange, dayText } from '../../../platform/days.ts';
import { assertToolsetInReach, toolsetReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { microToNumber } from '../../../platform/money.ts';
import { DIMENSIONS, type Dimension, type MetricDefinition, METRICS, metricByKey } from '../metrics.ts';
import * as repo from './repository.ts';
import { ROLLUP_PRODUCER } from './rollup.ts';

/**
 * `GET analytics/query` and `analytics/metrics` (spec B group 4; docs/analytics/README.md, "Query"). The
 * answer is a pure function of the warehouse rows and the request: series sorted by day, then by
 * each requested dimension by UTF-16 code units; values formatted from exact integers. So the same
 * warehouse state answers the same bytes apart from `generatedAt`.
 */

/** The longest `from`..`to` range, in days: a year, leap day included. */
export const QUERY_RANGE_DAYS_MAX = 366;
/** How a filter of the query names its dimension. */
const FILTER_OF: Record<Dimension, 'workspace' | 'toolset' | 'severity' | 'region'> = {
  workspaceId: 'workspace',
  toolset: 'toolset',
  severity: 'severity',
  region: 'region',
};

export interface AnalyticsQueryInput {
  metric: string;
  from: string;
  to: string;
  dims?: string | undefined;
  workspace?: string | undefined;
  toolset?: string | undefined;
  severity?: string | undefined;
  region?: string | undefined;
}

export interface SeriesPoint {
  dimDate: string;
  dimWorkspaceId: string;
  dimToolset: string;
  dimSeverity: string;
  dimRegion: string;
  value: number;
  count: number;
}

/**
 * Pure: the requested dimension names → the valid ones (in DIMENSIONS order) and the invalid ones
 * (request order, once each): a name outside spec A's four, or one the metric does not carry. A
 * filter on a dimension the metric lacks is listed too (it is applied, and matches only '').
 */
export function resolveDims(metric: MetricDefinition | undefined, dimsText: string | undefined, filtered: readonly Dimension[]): { dims: Dimension[]; invalidDims: string[] } {
  const requested = [...new Set((dimsText ?? '').split(',').map((d) => d.trim()).filter((d) => d !== ''))];
  const carried = (name: string): name is Dimension => (DIMENSIONS as readonly string[]).includes(name) && (metric === undefined || metric.dimensions.includes(name as Dimension));
  const dims = DIMENSIONS.filter((d) => requested.includes(d) && carried(d));
  const invalidDims = requested.filter((d) => !carried(d));
  if (metric !== undefined) {
    for (const d of filtered) if (!metric.dimensions.includes(d) && !invalidDims.includes(d)) invalidDims.push(d);
  }
  return { dims, invalidDims };
}

/** Exact order of series points: day, then workspace, toolset, severity, region by UTF-16 code units. */
export function compareSeries(a: repo.WarehouseRow, b: repo.WarehouseRow): number {
  for (const key of ['day', 'workspaceId', 'toolset', 'severity', 'region'] as const) {
    if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  }
  return 0;
}

export function createAnalyticsQueryService(deps: { db: Db }) {
  const { db } = deps;

  /**
   * The warehouse holds a metric's facts as of its source's last rollup (the watermark the
   * `analytics-rollup` job saved): facts recorded later are not in the answer until the next run.
   */
  async function freshness(metric: MetricDefinition | undefined): Promise<Freshness> {
    if (metric === undefined) return freshnessOf(ROLLUP_PRODUCER, null, 'Unknown metric: the warehouse holds nothing for it.');
    const state = await repo.sourceState(db, metric.source);
    if (state?.watermark == null) {
      return freshnessOf(ROLLUP_PRODUCER, null, `The analytics-rollup job has not rolled up the source of ${metric.key} (${metric.source}) yet: until it runs, the warehouse holds none of its facts and the series is 0.`);
    }
    return freshnessOf(ROLLUP_PRODUCER, state.watermark);
  }

  return {
    metrics() {
      return { metrics: METRICS.map((m) => ({ key: m.key, title: m.title, description: m.description, dimensions: [...m.dimensions], unit: m.unit })) };
    },

    async query(principal: Principal | null, input: AnalyticsQueryInput) {
      const range = checkDayRange(input.from, input.to, QUERY_RANGE_DAYS_MAX);
      const metric = metricByKey(input.metric);
      const filters: Partial<Record<Dimension, string>> = {};
      for (const d of DIMENSIONS) {
        const value = input[FILTER_OF[d]];
        if (value !== undefined) filters[d] = value;
      }
      const { dims, invalidDims } = resolveDims(metric, input.dims, Object.keys(filters) as Dimension[]);
      if (filters.toolset !== undefined) assertToolsetInReach(principal, filters.toolset, 'read the analytics of');
      // A metric divided by toolset is narrowed to a bound caller's toolsets; one that is not (the
      // honeypot fleet's) holds no toolset's facts and follows the scope alone (docs/operations.md, "Toolset binding").
      const toolsets = metric?.dimensions.includes('toolset') ? toolsetReach(principal) : null;
      // Read before the rows: a rollup committing in between makes the rows newer, never older, than asOf.
      const fresh = await freshness(metric);
      const rows = metric === undefined ? [] : await repo.queryDaily(db, { metric: metric.key, from: input.from, to: input.to, dims, filters, toolsets });
      rows.sort(compareSeries);
      if (metric !== undefined && dims.length === 0) {
        // Without dimensions a chart wants every day: the ones without rows answer 0.
        const byDay = new Map(rows.map((r) => [r.day, r]));
        rows.length = 0;
        for (let n = range.from; n < range.to; n++) {
          const day = dayText(n);
          rows.push(byDay.get(day) ?? { day, workspaceId: '', toolset: '', severity: '', region: '', valueMicro: 0n, count: 0n });
        }
      }
      let value = 0n;
      let count = 0n;
      for (const r of rows) {
        value += r.valueMicro;
        count += r.count;
      }
      return {
        metric: input.metric,
        unit: metric?.unit ?? null,
        from: input.from,
        to: input.to,
        dims,
        filters: { workspace: filters.workspaceId ?? null, toolset: filters.toolset ?? null, severity: filters.severity ?? null, region: filters.region ?? null },
        total: { value: microToNumber(value), count: Number(count) },
        series: rows.map(
          (r): SeriesPoint => ({
            dimDate: r.day,
            dimWorkspaceId: r.workspaceId,
            dimToolset: r.toolset,
            dimSeverity: r.severity,
            dimRegion: r.region,
            value: microToNumber(r.valueMicro),
            count: Number(r.count),
          }),
        ),
        unknownMetric: metric === undefined,
        invalidDims,
        freshness: fresh,
      };
    },
  };
}

export type AnalyticsQueryService = ReturnType<typeof createAnalyticsQueryService>;
