import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { freshAtRead } from '../../../platform/freshness.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import type { TenantService } from '../tenants/service.ts';
import * as repo from './repository.ts';
import {
  HOUR_MS,
  hourStart,
  type Window,
  WINDOW_HOURS,
  WINDOWS,
  type WindowStarts,
  windowStarts,
} from './rollups.ts';
import { VERIFIED_CLASSES } from '../vendors/classify.ts';

/**
 * The dashboard, clusters, fleet, heartbeat and db-health reads (docs/honeypot/dashboard.md).
 * Every read comes from the rollups; none scans the event history.
 */

/** Length of every top list of the dashboard. */
export const TOP_N = 10;
/** At most this many clusters are returned. */
export const CLUSTER_LIMIT = 100;
/** Cadence alarm: the last 24 h below this share of the daily average of the 7 days before… */
export const CADENCE_RATIO = 0.25;
/** …provided that average is at least this many events a day. */
export const CADENCE_MIN_DAILY = 24;
/** Heartbeat: silent means no event in this many minutes… */
export const SILENCE_MINUTES = 60;
/** …while the hour buckets of the 14 days before the current hour hold at least one event. */
export const BASELINE_HOURS = 14 * 24;

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
const pct = (part: number, whole: number) => (whole === 0 ? 0 : round((part / whole) * 100, 2));

export interface DashboardQuery {
  tenant?: string | undefined;
  window: Window;
}

export interface DashboardDeps {
  db: Db;
  clock: Clock;
  /** Resolves the tenant a read names (404 for an unknown one). */
  tenants: Pick<TenantService, 'idOf'>;
  log?: FastifyBaseLogger;
  flushSamples?: () => Promise<void>;
  /** How long after a group commit the background applier adds pending events (OBSERVATORY_ROLLUP_APPLY_DELAY_MS). */
  applyDelayMs?: number;
}

export function createDashboardService(deps: DashboardDeps) {
  const { db, clock } = deps;

  /**
   * Applies pending rows until none is left (more than one statement's worth may be waiting),
   * holding the rollup lock shared so that no re-judge changes an event under an apply; `tx` is
   * the caller's transaction (the advance, the rebuild), else one is opened.
   */
  async function applyAll(tx?: Db): Promise<void> {
    if (!(await repo.hasPending(tx ?? db))) return;
    const apply = async (on: Db) => {
      await repo.lockForApply(on);
      while ((await repo.applyPending(on)) === repo.APPLY_GROUPS_PER_STATEMENT);
    };
    await (tx ? apply(tx) : withTransaction(db, apply));
  }

  // One apply at a time per instance. A caller that arrives while one runs may hold events that
  // committed after that apply's snapshot, so it waits for one more apply, which it shares with
  // every caller that arrived meanwhile.
  let applying: Promise<void> | null = null;
  let applyingNext: Promise<void> | null = null;
  function applyPending(): Promise<void> {
    if (applying === null) {
      applying = applyAll().finally(() => {
        applying = null;
      });
      return applying;
    }
    applyingNext ??= applying
      .catch(() => {})
      .then(() => {
        applyingNext = null;
        return applyPending();
      });
    return applyingNext;
  }

  let applyTimer: NodeJS.Timeout | null = null;
  /**
   * Ingest calls this after a group committed: pending events are added to the rollups shortly
   * after, off the ingest path, one statement for every group that committed meanwhile. Counter
   * reads apply first anyway, so this only keeps the queue short.
   */
  function schedulePending(): void {
    applyTimer ??= setTimeout(() => {
      applyTimer = null;
      applyPending().catch((error: unknown) => {
        deps.log?.warn({ err: error }, 'could not apply pending rollups; the next group or read retries');
      });
    }, deps.applyDelayMs ?? 500).unref();
  }

  /** Applies what is pending and stops the background applier (shutdown, after ingest drained). */
  async function close(): Promise<void> {
    if (applyTimer) clearTimeout(applyTimer);
    applyTimer = null;
    await applyPending().catch((error: unknown) => {
      deps.log?.warn({ err: error }, 'could not apply pending rollups at shutdown; the next start applies them');
    });
  }

  /** Until this time (ms) the window columns are known to be current: they only go stale when an hour begins. */
  let freshUntil = 0;

  const later = (a: WindowStarts, b: WindowStarts): WindowStarts => ({
    '24h': a['24h'] > b['24h'] ? a['24h'] : b['24h'],
    '7d': a['7d'] > b['7d'] ? a['7d'] : b['7d'],
    '30d': a['30d'] > b['30d'] ? a['30d'] : b['30d'],
  });

  /** Creates the rollup state on first start and builds the rollups from the events already stored. */
  async function ensureRollups(): Promise<void> {
    const now = clock.now();
    const starts = windowStarts(now);
    await withTransaction(db, async (tx) => {
      if (await repo.createState(tx, starts, now)) await repo.rebuildRollups(tx, starts);
    });
  }

  /**
   * Moves every window to the hours it covers at `now`, subtracting the hours that left it.
   * Idempotent; the hourly `honeypot-rollup-advance` job calls it, and so does a read that finds
   * the windows behind.
   */
  async function advance(now: Date): Promise<{ advanced: boolean; windows: WindowStarts }> {
    // Look before locking: the lock makes ingest wait, and it is needed only once an hour.
    const seen = await repo.readState(db);
    if (seen !== null && WINDOWS.every((w) => seen[w] >= windowStarts(now)[w])) return { advanced: false, windows: seen };
    return withTransaction(db, async (tx) => {
      const current = await repo.lockWindowStarts(tx);
      if (current === null) throw new Error('honeypot_rollup_state has no row; the dashboard service creates it at start');
      const next = later(current, windowStarts(now));
      if (WINDOWS.every((w) => next[w].getTime() === current[w].getTime())) return { advanced: false, windows: current };
      // Pending events are added against the starts they were stored under before any hour is
      // subtracted: the subtraction reads the events, and must find each counted.
      await applyAll(tx);
      await repo.subtractLeaving(tx, current, next);
      await repo.setState(tx, next, now);
      return { advanced: true, windows: next };
    });
  }

  /** Recomputes every rollup from the stored events (on-demand job; the bench seeds through it). */
  async function rebuild(): Promise<{ events: number }> {
    const now = clock.now();
    const starts = windowStarts(now);
    const events = await withTransaction(db, async (tx) => {
      if ((await repo.lockWindowStarts(tx)) === null) await repo.createState(tx, starts, now);
      // Pending rows feed the fingerprints too, which the rebuild leaves alone: apply, then rebuild.
      await applyAll(tx);
      await repo.rebuildRollups(tx, starts);
      await repo.setState(tx, starts, now);
      return repo.totalEvents(tx, null);
    });
    freshUntil = 0;
    return { events };
  }

  /** Moves the windows on when an hour has begun, then adds every pending event: a read sees every acknowledged event. */
  async function ensureFresh(now: Date): Promise<void> {
    if (now.getTime() >= freshUntil) {
      const state = await repo.readState(db);
      const target = windowStarts(now);
      if (state === null || WINDOWS.some((w) => state[w] < target[w])) await advance(now);
      freshUntil = hourStart(now).getTime() + HOUR_MS;
    }
    await applyPending();
  }

  async function dashboard(query: DashboardQuery) {
    const id = await deps.tenants.idOf(query.tenant);
    const now = clock.now();
    await ensureFresh(now);
    const from = windowStarts(now)[query.window];
    const { dims, uniqueFingerprints, hours } = await repo.dashboardRows(db, id, query.window, from, TOP_N);
    const of = (dim: string) => dims.filter((d) => d.dim === dim);
    const classes = of('class');
    const totalEvents = classes.reduce((sum, c) => sum + c.count, 0);
    const liarCount = classes.find((c) => c.value === 'LIAR')?.count ?? 0;
    const knownVerifiedCount = classes.filter((c) => VERIFIED_CLASSES.includes(c.value)).reduce((sum, c) => sum + c.count, 0);
    const attributed = of('attributed').find((c) => c.value === 'yes')?.count ?? 0;
    const perHour = new Map(hours.map((h) => [h.hour.getTime(), h.events]));
    const eventsPerHour = Array.from({ length: WINDOW_HOURS[query.window] }, (_, i) => {
      const t = from.getTime() + i * HOUR_MS;
      return { bucketIso: new Date(t).toISOString(), count: perHour.get(t) ?? 0 };
    });
    return {
      tenant: query.tenant ?? null,
      window: query.window,
      kpis: {
        totalEvents,
        uniqueFingerprints,
        liarCount,
        liarRatePct: pct(liarCount, totalEvents),
        knownVerifiedCount,
        attributionCoveragePct: pct(attributed, totalEvents),
      },
      uaClassBreakdown: classes.map((c) => ({ uaClass: c.value, count: c.count })),
      topPaths: of('path').map((d) => ({ path: d.value, count: d.count })),
      topCountries: of('country').map((d) => ({ countryCode: d.value, count: d.count })),
      topUas: of('ua').map((d) => ({ uaRaw: d.value, count: d.count })),
      topVerifiedVendors: of('verified-ua').map((d) => ({ uaRaw: d.value, count: d.count })),
      eventsPerHour,
      freshness: freshAtRead(now),
    };
  }

  async function clusters(query: DashboardQuery) {
    const id = await deps.tenants.idOf(query.tenant);
    const now = clock.now();
    await ensureFresh(now);
    const rows = await repo.topClusters(db, id, query.window, CLUSTER_LIMIT);
    return {
      tenant: query.tenant ?? null,
      window: query.window,
      clusters: rows.map((r) => ({ ...r, firstSeen: r.firstSeen.toISOString(), lastSeen: r.lastSeen.toISOString() })),
      freshness: freshAtRead(now),
    };
  }

  /** The last 24 h / 7 d / 30 d (the dashboard windows) and the 7 days before the 24 h window. */
  function fleetRanges(now: Date) {
    const starts = windowStarts(now);
    const end = new Date(hourStart(now).getTime() + HOUR_MS);
    return {
      '24h': { from: starts['24h'], to: end },
      '7d': { from: starts['7d'], to: end },
      '30d': { from: starts['30d'], to: end },
      prior7d: { from: new Date(starts['24h'].getTime() - 7 * 24 * HOUR_MS), to: starts['24h'] },
    };
  }

  async function fleet() {
    const now = clock.now();
    await ensureFresh(now);
    const tenants = await repo.tenantActivity(db, fleetRanges(now));
    return {
      tenants: tenants.map((t) => {
        const events24h = t.sums['24h'] ?? 0;
        const prior = t.sums.prior7d ?? 0;
        const cadence = cadenceOf({ disabled: t.disabledAt !== null, events24h, prior7d: prior });
        return {
          slug: t.slug,
          name: t.name,
          disabled: t.disabledAt !== null,
          events24h,
          events7d: t.sums['7d'] ?? 0,
          events30d: t.sums['30d'] ?? 0,
          lastSeenAt: t.lastSeenAt?.toISOString() ?? null,
          baselineDailyAvg: round(prior / 7, 2),
          cadenceAlarm: cadence.alarm,
          cadenceReason: cadence.reason,
        };
      }),
      freshness: freshAtRead(now),
    };
  }

  async function heartbeat() {
    const now = clock.now();
    await ensureFresh(now);
    const current = hourStart(now);
    const baselineFrom = new Date(current.getTime() - BASELINE_HOURS * HOUR_MS);
    const silentBefore = now.getTime() - SILENCE_MINUTES * 60_000;
    const tenants = await repo.tenantActivity(db, { baseline: { from: baselineFrom, to: current } });
    return {
      silentTenants: tenants
        .filter((t) => t.disabledAt === null && (t.sums.baseline ?? 0) > 0 && (t.lastSeenAt === null || t.lastSeenAt.getTime() <= silentBefore))
        .map((t) => ({
          slug: t.slug,
          name: t.name,
          lastSeenAt: t.lastSeenAt?.toISOString() ?? null,
          lastHourCount: 0,
          baselineEvents14d: t.sums.baseline ?? 0,
          baselineHourlyAvg: round((t.sums.baseline ?? 0) / BASELINE_HOURS, 3),
          baselineFromIso: baselineFrom.toISOString(),
        })),
    };
  }

  async function dbHealth() {
    const started = performance.now();
    await dashboard({ window: '24h' });
    const dashboardQueryMs = round(performance.now() - started, 2);
    await deps.flushSamples?.();
    const now = clock.now();
    const [honeypotEventCount, honeypotEvent24hCount, fingerprints, samples, span, state] = await Promise.all([
      repo.totalEvents(db, null),
      repo.totalEvents(db, windowStarts(now)['24h']),
      repo.tableRows(db, 'honeypot_fingerprints'),
      repo.tableRows(db, 'ingest_samples'),
      repo.sampleSpan(db),
      repo.readState(db),
    ]);
    return {
      honeypotEventCount,
      fingerprintCount: fingerprints.count,
      ingestSampleCount: samples.count,
      honeypotEvent24hCount,
      oldestSampleIso: span.oldest?.toISOString() ?? null,
      newestSampleIso: span.newest?.toISOString() ?? null,
      dashboardQueryMs,
      estimatedFields: [...(fingerprints.exact ? [] : ['fingerprintCount']), ...(samples.exact ? [] : ['ingestSampleCount'])],
      rollupsAdvancedAt: state?.advancedAt.toISOString() ?? null,
    };
  }

  /** Seconds the rollups are behind the committed events (0 when nothing is pending): a metrics gauge. */
  const rollupLagSec = () => repo.pendingLagSec(db);

  return { ensureRollups, advance, rebuild, applyPending, schedulePending, close, dashboard, clusters, fleet, heartbeat, dbHealth, rollupLagSec };
}

export type DashboardService = ReturnType<typeof createDashboardService>;

export function dashboardJobs(dashboard: DashboardService): JobDefinition[] {
  return [
    {
      name: 'honeypot-rollup-advance',
      description:
        'At the start of every hour, moves the 24h, 7d and 30d rollup windows on by subtracting the hour that left each one (reads also do it when they find the windows behind).',
      schedule: '0 * * * *',
      async run({ now }) {
        const { advanced, windows } = await dashboard.advance(now);
        return { advanced, from24h: windows['24h'].toISOString(), from30d: windows['30d'].toISOString() };
      },
    },
    {
      name: 'honeypot-rollup-rebuild',
      description: 'Recomputes every honeypot rollup from the stored events (repair; ingest waits while it runs).',
      schedule: null,
      async run() {
        return dashboard.rebuild();
      },
    },
  ];
}

/**
 * The fleet cadence rule: an enabled tenant whose 7 days before the last 24 h averaged at least
 * CADENCE_MIN_DAILY events a day alarms when its last 24 h hold fewer than CADENCE_RATIO of
 * that average.
 */
export function cadenceOf(input: { disabled: boolean; events24h: number; prior7d: number }): { alarm: boolean; reason: string } {
  const daily = input.prior7d / 7;
  const avg = round(daily, 2);
  if (input.disabled) return { alarm: false, reason: 'disabled: its ingest is refused, so silence is expected' };
  if (daily < CADENCE_MIN_DAILY) {
    return {
      alarm: false,
      reason: `no baseline: the 7 days before the last 24 h averaged ${avg} events a day, under the ${CADENCE_MIN_DAILY} needed to judge cadence`,
    };
  }
  const floor = daily * CADENCE_RATIO;
  if (input.events24h < floor) {
    return {
      alarm: true,
      reason: `below cadence: ${input.events24h} events in the last 24 h, under ${Math.round(CADENCE_RATIO * 100)}% of the ${avg} a day averaged over the 7 days before`,
    };
  }
  return { alarm: false, reason: `ok: ${input.events24h} events in the last 24 h against ${avg} a day over the 7 days before` };
}
