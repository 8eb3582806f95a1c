import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { toolsetReach } from '../../../platform/http/auth.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import { type Freshness, freshnessOf, type Producer } from '../../../platform/freshness.ts';
// The latch opens its incident in the run's own transaction, unaudited (a job's finding, not an
// operator's act), so it writes through the incidents' repository rather than their service.
import * as incidentRepo from '../incidents/repository.ts';
import { type ForecastLevel, type ForecastScore, HOURS, LATCH_RUNS, latchFires, RECENT_HOURS, scoreSeries } from './model.ts';
import * as repo from './repository.ts';

const HOUR_MS = 3_600_000;
/** The run id of a `stub` pass: the same every time, and nothing is written. */
export const STUB_RUN_ID = '00000000-0000-4000-8000-000000000000';
/** Events named as evidence on an incident the latch opens. */
const INCIDENT_EVENT_IDS = 20;

export interface ForecastView {
  toolset: string;
  score: number;
  level: ForecastLevel;
  direction: ForecastScore['direction'];
  runId: string;
  computedAt: string;
  recentMean: number;
  baselineMean: number;
}

/** The forecaster job: every 15 minutes; each run scores the complete hours before it. */
export const FORECAST_PRODUCER: Producer = { job: 'forecast', schedule: '*/15 * * * *' };

export function createForecaster(deps: { db: Db; clock: Clock }) {
  const { db } = deps;

  /**
   * One forecaster run at `now` (spec B group 2, A "Forecast latch"): for every toolset with events
   * in the 7 days before the current hour, 168 hourly buckets → a score (forecast-model.ts), stored
   * with the run; a toolset whose score has now been above 0.7 on 3 consecutive runs gets one minor
   * incident. Runs are serialised across instances by a transaction-scoped advisory lock.
   */
  async function run(now: Date, stub = false) {
    if (stub) return { ok: true as const, runId: STUB_RUN_ID, forecastsCreated: 0, latchedIncidentIds: [] as string[] };
    const runId = randomUUID();
    const end = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
    const start = new Date(end.getTime() - HOURS * HOUR_MS);
    return withTransaction(db, async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext('empire-forecast'))`);
      const series = new Map<string, number[]>();
      for (const { toolset, hour, count } of await repo.hourlyCounts(tx, start, end)) {
        const buckets = series.get(toolset) ?? new Array<number>(HOURS).fill(0);
        buckets[hour] = count;
        series.set(toolset, buckets);
      }
      const rows: repo.ForecastRow[] = [...series].sort(([a], [b]) => a.localeCompare(b)).map(([toolset, buckets]) => {
        const scored = scoreSeries(buckets);
        return {
          id: randomUUID(),
          runId,
          toolset,
          score: scored.score,
          level: scored.level,
          direction: scored.direction,
          details: { z: scored.z, recentMean: scored.recentMean, baselineMean: scored.baselineMean, scale: scored.scale, windowStart: start.toISOString(), windowEnd: end.toISOString() },
          computedAt: now,
        };
      });
      await repo.insertForecasts(tx, rows);
      const latchedIncidentIds: string[] = [];
      for (const row of rows) {
        if (!latchFires(await repo.recentScores(tx, row.toolset, LATCH_RUNS + 1))) continue;
        if (await incidentRepo.openIncidentFrom(tx, row.toolset, 'forecast')) continue;
        const id = randomUUID();
        await incidentRepo.insertIncident(tx, {
          id,
          toolset: row.toolset,
          severity: 'minor',
          title: `Forecast: ${row.toolset} event rate ${row.direction === 'silence' ? 'fell silent' : 'surged'} (score ${row.score.toFixed(2)} on ${LATCH_RUNS} runs)`,
          status: 'open',
          source: 'forecast',
          eventIds: await repo.recentEventIds(tx, row.toolset, new Date(end.getTime() - RECENT_HOURS * HOUR_MS), INCIDENT_EVENT_IDS),
          details: { runId, forecastId: row.id, ...(row.details as Record<string, unknown>) },
          openedAt: now,
          resolvedAt: null,
        });
        latchedIncidentIds.push(id);
      }
      return { ok: true as const, runId, forecastsCreated: rows.length, latchedIncidentIds };
    });
  }

  return {
    run,
    /**
     * Hourly event counts per toolset for [from, to) by event time, of the toolsets in `reach` unless
     * it is null; `hour` counts from `from` (triage's rule proposer reads its history so, the
     * overview its sparklines).
     */
    hourlyCounts: (from: Date, to: Date, reach: readonly string[] | null = null) => repo.hourlyCounts(db, from, to, reach),
    /** The latest forecast of every toolset the caller reaches. */
    async latest(caller: Pick<Principal, 'toolsets'> | null = null): Promise<{ forecasts: ForecastView[]; freshness: Freshness }> {
      const rows = await repo.latestForecasts(db, toolsetReach(caller));
      // A run scores the complete hours before it (windowEnd): events since are in the next run after the hour ends.
      const ends = rows.map((r) => Date.parse((r.details as { windowEnd?: string }).windowEnd ?? '')).filter((ms) => Number.isFinite(ms));
      const freshness =
        ends.length === 0
          ? freshnessOf(FORECAST_PRODUCER, null, 'No forecast yet: the forecast job scores every toolset with events in the last 7 days, over complete hours.')
          : freshnessOf(FORECAST_PRODUCER, new Date(Math.max(...ends)));
      return {
        freshness,
        forecasts: rows.map((r) => {
          const details = r.details as { recentMean?: number; baselineMean?: number };
          return {
            toolset: r.toolset,
            score: r.score,
            level: r.level as ForecastLevel,
            direction: r.direction as ForecastScore['direction'],
            runId: r.runId,
            computedAt: r.computedAt.toISOString(),
            recentMean: details.recentMean ?? 0,
            baselineMean: details.baselineMean ?? 0,
          };
        }),
      };
    },
  };
}

export type Forecaster = ReturnType<typeof createForecaster>;

/**
 * The model budget scheduled forecaster runs wait on (spec A "Triage budget"): the port the empire
 * declares, which triage's budget serves. Triage is built on the empire, so the budget is built
 * first and handed in.
 */
export interface ModelBudget {
  /** The bucket (of `bucket` or `*`) whose spent or degraded budget defers `agent` at `now`, or null. */
  deferral(agent: 'forecaster', bucket: '*', now: Date): Promise<{ bucket: { month: string; toolset: string } } | null>;
}

/** Why a scheduled forecaster run waits, or null to run (always, without a budget). */
async function deferralOf(budget: ModelBudget | undefined, now: Date): Promise<string | null> {
  const deferred = budget === undefined ? null : await budget.deferral('forecaster', '*', now);
  return deferred ? `the ${deferred.bucket.month} model budget of bucket ${deferred.bucket.toolset} is spent or degraded` : null;
}

/** The forecaster job; a scheduled run waits while `budget` defers it (an on-demand POST forecast does not). */
export function forecastJobs(forecaster: Forecaster, budget?: ModelBudget): JobDefinition[] {
  return [
    {
      name: FORECAST_PRODUCER.job,
      description: "Scores every toolset's last 7 days of hourly events for anomalies and opens a minor incident when a toolset scores above 0.7 on 3 consecutive runs.",
      schedule: FORECAST_PRODUCER.schedule,
      async run({ now }) {
        const deferred = await deferralOf(budget, now);
        if (deferred !== null) return { deferred };
        const result = await forecaster.run(now);
        return { runId: result.runId, forecastsCreated: result.forecastsCreated, latchedIncidents: result.latchedIncidentIds.length };
      },
    },
  ];
}
