import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { assertToolsetInReach, toolsetReach, type ToolsetCaller } from '../../../platform/http/auth.ts';
import type { Forecaster } from '../forecast/service.ts';
import * as repo from './repository.ts';

/**
 * The per-toolset dashboard and the overview of every toolset (spec B group 2; docs/empire/README.md,
 * "Dashboard and overview"). Windows are whole UTC hours by event time (`ts`): the current hour
 * (still filling) and the hours before it, so a 24-hour window is 24 buckets ending with the
 * current hour. Events stamped later than the current hour are not counted anywhere.
 */

export const HOUR_MS = 3_600_000;
export const DASHBOARD_WINDOWS = { '24h': 24, '7d': 168, '30d': 720 } as const;
export type DashboardWindow = keyof typeof DASHBOARD_WINDOWS;
/** Rows listed in the event-type and tenant breakdowns (the KPIs count all of them). */
export const BREAKDOWN_LIMIT = 50;

/** [from, to) of the last `hours` UTC hours, the current one included. */
export function hourWindow(now: Date, hours: number): { from: Date; to: Date } {
  const to = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS;
  return { from: new Date(to - hours * HOUR_MS), to: new Date(to) };
}

/** `hours` counts, zeros included, from sparse (hour index, count) pairs; indexes outside are dropped. */
export function denseHours(hours: number, sparse: readonly { hour: number; count: number }[]): number[] {
  const dense = new Array<number>(hours).fill(0);
  for (const { hour, count } of sparse) if (hour >= 0 && hour < hours) dense[hour] = (dense[hour] ?? 0) + count;
  return dense;
}

export interface Kpi {
  id: string;
  label: string;
  /** Decimal places to show. */
  precision: number;
  unit: string | null;
  /** null when it cannot be computed (a share of no events). */
  value: number | null;
}

const round = (value: number, precision: number) => Math.round(value * 10 ** precision) / 10 ** precision;
const share = (part: number, whole: number) => (whole === 0 ? null : round((part * 100) / whole, 1));

/** The dashboard's KPIs (the table in docs/empire/README.md), from its counts. */
export function dashboardKpis(counts: repo.DashboardCounts, perHour: readonly number[]): Kpi[] {
  const { count, signed, linked } = counts.total;
  const namedTenants = counts.tenants.filter((t) => t.tenant !== null).length;
  return [
    { id: 'events', label: 'Events', precision: 0, unit: null, value: count },
    { id: 'events-per-hour', label: 'Events per hour (mean)', precision: 1, unit: 'events/h', value: round(count / perHour.length, 1) },
    { id: 'peak-hour', label: 'Busiest hour', precision: 0, unit: 'events/h', value: Math.max(0, ...perHour) },
    { id: 'active-hours', label: 'Hours with events', precision: 0, unit: 'h', value: perHour.filter((n) => n > 0).length },
    { id: 'tenants', label: 'Source tenants', precision: 0, unit: null, value: namedTenants },
    { id: 'event-types', label: 'Event types', precision: 0, unit: null, value: counts.eventTypes.length },
    { id: 'signed-pct', label: 'Signed events', precision: 1, unit: '%', value: share(signed, count) },
    { id: 'linked-pct', label: 'Events with a cause (causedBy)', precision: 1, unit: '%', value: share(linked, count) },
  ];
}

const WINDOW_WORDS: Record<DashboardWindow, string> = { '24h': '24 hours', '7d': '7 days', '30d': '30 days' };
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** One sentence on what the dashboard shows. */
export function dashboardBlurb(input: {
  toolset: string;
  tenant: string | null;
  window: DashboardWindow;
  counts: repo.DashboardCounts;
  lastEventAt: Date | null;
}): string {
  const { toolset, tenant, window, counts } = input;
  const whose = tenant === null ? toolset : `${toolset} for tenant ${tenant}`;
  if (counts.total.count === 0) {
    return input.lastEventAt === null
      ? `No events have been received from ${whose}.`
      : `No events from ${whose} in the last ${WINDOW_WORDS[window]}; the latest is from ${input.lastEventAt.toISOString()}.`;
  }
  const top = [...counts.eventTypes].sort((a, b) => b.count - a.count || (a.eventType < b.eventType ? -1 : 1))[0]!;
  const tenants = counts.tenants.filter((t) => t.tenant !== null).length;
  const from = tenant === null ? ` from ${plural(tenants, 'tenant')}` : '';
  return (
    `${plural(counts.total.count, 'event')} from ${whose} in the last ${WINDOW_WORDS[window]}${from}; ` +
    `${share(counts.total.signed, counts.total.count)}% signed; most common type ${top.eventType} (${share(top.count, counts.total.count)}%).`
  );
}

export interface OverviewRow {
  toolset: string;
  blurb: string;
  events24h: number;
  events7d: number;
  lastEventAt: string | null;
  sparkline24h: number[];
}

/**
 * How the last 24 hours compare with the toolset's 7-day hourly mean: `busier` above 1.5 times,
 * `quieter` below two thirds, else `usual`; `new` when nothing came in the 6 days before the last
 * day (no baseline to compare with), null with no events in 7 days.
 */
export function trendOf(events24h: number, events7d: number): 'busier' | 'quieter' | 'usual' | 'new' | null {
  if (events7d === 0) return null;
  if (events7d === events24h) return 'new';
  const ratio = events24h / 24 / (events7d / 168);
  return ratio > 1.5 ? 'busier' : ratio < 2 / 3 ? 'quieter' : 'usual';
}

const TREND_WORDS = {
  busier: 'busier than its 7-day average',
  quieter: 'quieter than its 7-day average',
  usual: 'about as usual',
  new: 'none in the 6 days before',
} as const;

/** A toolset's overview row from its 168 hourly counts (oldest first) and latest event time. */
export function overviewRow(toolset: string, last168: readonly number[], lastEventAt: Date | null): OverviewRow {
  const sparkline24h = last168.slice(-24);
  const events24h = sparkline24h.reduce((a, b) => a + b, 0);
  const events7d = last168.reduce((a, b) => a + b, 0);
  const trend = trendOf(events24h, events7d);
  const last = lastEventAt === null ? 'no events yet' : `latest event ${lastEventAt.toISOString()}`;
  const blurb =
    trend === null
      ? `No events in the last 7 days; ${last}.`
      : `${plural(events24h, 'event')} in the last 24 hours, ${TREND_WORDS[trend]}; ${last}.`;
  return { toolset, blurb, events24h, events7d, lastEventAt: lastEventAt?.toISOString() ?? null, sparkline24h };
}

/** `forecaster` gives the overview its hourly counts: the same buckets the forecaster scores. */
export function createDashboardService(deps: { db: Db; clock: Clock; forecaster: Pick<Forecaster, 'hourlyCounts'> }) {
  const { db, clock } = deps;
  return {
    async dashboard(toolset: string, query: { tenant?: string | undefined; window?: DashboardWindow | undefined }, caller: ToolsetCaller) {
      assertToolsetInReach(caller, toolset, 'read the dashboard of');
      const window = query.window ?? '24h';
      const tenant = query.tenant ?? null;
      const hours = DASHBOARD_WINDOWS[window];
      const { from, to } = hourWindow(clock.now(), hours);
      const [counts, lastEventAt] = await Promise.all([repo.dashboardCounts(db, { toolset, tenant, from, to }), repo.lastEventAt(db, { toolset, tenant, to })]);
      const perHour = denseHours(hours, counts.hours);
      const byCount = <T extends { count: number }>(key: (row: T) => string) => (a: T, b: T) => b.count - a.count || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
      return {
        toolset,
        tenant,
        window,
        windowStartIso: from.toISOString(),
        windowEndIso: to.toISOString(),
        blurb: dashboardBlurb({ toolset, tenant, window, counts, lastEventAt }),
        kpis: dashboardKpis(counts, perHour),
        eventsPerHour: perHour.map((count, i) => ({ bucketIso: new Date(from.getTime() + i * HOUR_MS).toISOString(), count })),
        eventTypeBreakdown: [...counts.eventTypes].sort(byCount((r) => r.eventType)).slice(0, BREAKDOWN_LIMIT),
        // The events that named no tenant sort after every named tenant with as many.
        tenantBreakdown: [...counts.tenants].sort(byCount((r) => r.tenant ?? '\uffff')).slice(0, BREAKDOWN_LIMIT),
        lastEventAt: lastEventAt?.toISOString() ?? null,
      };
    },

    /** Every toolset that has sent an event, by name; only the caller's when it is bound to toolsets. */
    async overview(caller: ToolsetCaller): Promise<{ toolsets: OverviewRow[]; windowEndIso: string }> {
      const { from, to } = hourWindow(clock.now(), 168);
      const reach = toolsetReach(caller);
      const [toolsets, counts] = await Promise.all([repo.toolsetsWithLastEvent(db, to, reach), deps.forecaster.hourlyCounts(from, to, reach)]);
      const sparse = new Map<string, { hour: number; count: number }[]>();
      for (const c of counts) (sparse.get(c.toolset) ?? sparse.set(c.toolset, []).get(c.toolset)!).push(c);
      return {
        toolsets: toolsets.map((t) => overviewRow(t.toolset, denseHours(168, sparse.get(t.toolset) ?? []), t.lastEventAt)),
        windowEndIso: to.toISOString(),
      };
    },
  };
}

export type DashboardService = ReturnType<typeof createDashboardService>;
