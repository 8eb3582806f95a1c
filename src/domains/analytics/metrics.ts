/**
 * The warehouse's metrics (spec A "Analytics metric"; docs/analytics/README.md): what each counts, over
 * which dimensions, fed by which fact source. A dimension a metric does not list is '' on every
 * one of its rows.
 */

/** The dimensions of spec A, in the order the API lists them. */
export const DIMENSIONS = ['workspaceId', 'toolset', 'severity', 'region'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** The fact sources the rollup reads, each re-rolled on its own watermark. */
export const SOURCES = ['honeypot-events', 'honeypot-tarpits', 'empire-events', 'empire-incidents', 'triage-decisions', 'cost-records'] as const;
export type SourceKey = (typeof SOURCES)[number];

export interface MetricDefinition {
  key: string;
  title: string;
  description: string;
  dimensions: readonly Dimension[];
  /** What `value` measures: `count` (value equals count), `usd` or `seconds`. */
  unit: 'count' | 'usd' | 'seconds';
  source: SourceKey;
}

const REGION = 'region is the OBSERVATORY_REGION of the deployment that recorded it';

export const METRICS: readonly MetricDefinition[] = [
  {
    key: 'honeypot.events',
    title: 'Honeypot events',
    description: `Honeypot events captured, by the UTC day of the event's own time; workspaceId is the tenant slug, ${REGION}.`,
    dimensions: ['workspaceId', 'region'],
    unit: 'count',
    source: 'honeypot-events',
  },
  {
    key: 'honeypot.liar-events',
    title: 'Liar events',
    description: `Honeypot events classified LIAR (a user agent claiming a vendor its address does not prove), by the UTC day of the event's time; workspaceId is the tenant slug, ${REGION}.`,
    dimensions: ['workspaceId', 'region'],
    unit: 'count',
    source: 'honeypot-events',
  },
  {
    key: 'honeypot.tarpits-opened',
    title: 'Tarpits opened',
    description: `Fingerprints put under tarpit, by the UTC day the tarpit opened; workspaceId is the tenant slug, ${REGION}.`,
    dimensions: ['workspaceId', 'region'],
    unit: 'count',
    source: 'honeypot-tarpits',
  },
  {
    key: 'empire.events',
    title: 'Empire events',
    description: `Events the toolsets sent, by the UTC day of the event's ts; workspaceId is the event's source tenant ('' when it names none), ${REGION}.`,
    dimensions: ['workspaceId', 'toolset', 'region'],
    unit: 'count',
    source: 'empire-events',
  },
  {
    key: 'empire.incidents-opened',
    title: 'Incidents opened',
    description: `Empire incidents opened, by the UTC day they opened, with the toolset and severity (critical, major, minor); ${REGION}.`,
    dimensions: ['toolset', 'severity', 'region'],
    unit: 'count',
    source: 'empire-incidents',
  },
  {
    key: 'empire.incidents-resolved',
    title: 'Incidents resolved',
    description: `Empire incidents resolved, by the UTC day they were resolved, with the toolset and severity; ${REGION}.`,
    dimensions: ['toolset', 'severity', 'region'],
    unit: 'count',
    source: 'empire-incidents',
  },
  {
    key: 'empire.incident-open-seconds',
    title: 'Time incidents stayed open',
    description: `Seconds from opening to resolution, summed over the incidents resolved on each UTC day (count: those incidents, so value/count is the mean time to resolve); ${REGION}.`,
    dimensions: ['toolset', 'severity', 'region'],
    unit: 'seconds',
    source: 'empire-incidents',
  },
  {
    key: 'triage.proposals-decided',
    title: 'Triage proposals decided',
    description: `Triage proposals an operator accepted or rejected (automatic rejections are not decisions), by the UTC day of the decision; toolset '' for fleet-wide proposals, ${REGION}.`,
    dimensions: ['toolset', 'region'],
    unit: 'count',
    source: 'triage-decisions',
  },
  {
    key: 'triage.proposals-accepted',
    title: 'Triage proposals accepted',
    description: `Triage proposals an operator accepted, by the UTC day of the decision; toolset '' for fleet-wide proposals, ${REGION}.`,
    dimensions: ['toolset', 'region'],
    unit: 'count',
    source: 'triage-decisions',
  },
  {
    key: 'cost.spend',
    title: 'Cost',
    description:
      "Spend in USD from the cost records (exact to the micro-dollar; credits are negative), by the record's day; count: cost records. workspaceId, toolset and region are the record's own (region is the vendor's region id, '' when none).",
    dimensions: ['workspaceId', 'toolset', 'region'],
    unit: 'usd',
    source: 'cost-records',
  },
];

const BY_KEY = new Map(METRICS.map((m) => [m.key, m]));

export function metricByKey(key: string): MetricDefinition | undefined {
  return BY_KEY.get(key);
}

/** The metric keys a source feeds. */
export function metricsOfSource(source: SourceKey): string[] {
  return METRICS.filter((m) => m.source === source).map((m) => m.key);
}
