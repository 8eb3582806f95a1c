import { api, unwrap } from '../../../api/client';

/** The analytics reads, typed from the served OpenAPI document. */
export const loadMetrics = () => unwrap(api.GET('/api/observatory/v1/analytics/metrics'));

export const loadMetricSeries = (query: { metric: string; from: string; to: string; dims?: string }) =>
  unwrap(api.GET('/api/observatory/v1/analytics/query', { params: { query } }));

export const loadCohort = (query: { key: string; from: string; to: string }) => unwrap(api.GET('/api/observatory/v1/analytics/cohort', { params: { query } }));

export type Metric = Awaited<ReturnType<typeof loadMetrics>>['metrics'][number];
export type MetricAnswer = Awaited<ReturnType<typeof loadMetricSeries>>;
export type CohortAnswer = Awaited<ReturnType<typeof loadCohort>>;
export type Dimension = Metric['dimensions'][number];

/** The registered cohorts (the answer's `key`): a removed one breaks the build. */
export const COHORTS: readonly { key: CohortAnswer['key']; title: string }[] = [
  { key: 'developer-token-7d', title: 'API tokens: used again in their first week' },
  { key: 'incident-postmortem-7d', title: 'Incidents: postmortem written within a week' },
];

/** A metric's value in its unit. */
export function formatValue(value: number, unit: Metric['unit'] | null): string {
  if (unit === 'usd') return `$${value.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
  if (unit === 'seconds') return `${value.toLocaleString(undefined, { maximumFractionDigits: 1 })} s`;
  return value.toLocaleString();
}
