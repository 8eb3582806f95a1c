import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../../platform/db/client.ts';
import { dayNumber, dayText } from '../../../platform/days.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import type { JobDefinition } from '../../../platform/jobs/scheduler.ts';
import type { Producer } from '../../../platform/freshness.ts';
import { metricsOfSource } from '../metrics.ts';
import * as repo from './repository.ts';
import type { FactSource } from './sources.ts';

/**
 * The `analytics-rollup` job (spec D5; docs/analytics/README.md, "Rollup"). Each source keeps a
 * watermark; a run asks the source for the days whose facts changed after it (less a lag, for
 * writes whose change time was stamped before they committed), recomputes those whole days from
 * the facts and replaces them, then moves the watermark to the run's time, all in one transaction
 * per source under an advisory lock. Recomputing rather than adding makes a run idempotent: a
 * rerun, or two instances, write the same rows; late data (an event time days ago) re-rolls the
 * day it lands on.
 */

export const JOB_NAME = 'analytics-rollup';
/** Every 15 minutes, off the quarter hours the other 15-minute jobs use. */
export const JOB_SCHEDULE = '7,22,37,52 * * * *';
export const ROLLUP_PRODUCER: Producer = { job: JOB_NAME, schedule: JOB_SCHEDULE };
/** Rows whose change time is this far before the watermark are read again: a write commits within it. */
export const ROLLUP_LAG_MS = 10 * 60_000;
/** Longest run of days one read covers, so a first run over years of history reads a month at a time. */
export const RANGE_DAYS_MAX = 31;

/** Pure: distinct days (any order, `YYYY-MM-DD`) → [from, to) ranges of consecutive days, ascending, each at most `maxDays` long. */
export function dayRanges(days: readonly string[], maxDays: number = RANGE_DAYS_MAX): { from: string; to: string }[] {
  const numbers = [...new Set(days.map((d) => dayNumber(d)).filter((n): n is number => n !== null))].sort((a, b) => a - b);
  const ranges: { from: number; to: number }[] = [];
  for (const n of numbers) {
    const last = ranges[ranges.length - 1];
    if (last && last.to === n && last.to - last.from < maxDays) last.to = n + 1;
    else ranges.push({ from: n, to: n + 1 });
  }
  return ranges.map((r) => ({ from: dayText(r.from), to: dayText(r.to) }));
}

export interface SourceRollStats {
  days: number;
  rows: number;
}

export function createRollupService(deps: { db: Db; sources: readonly FactSource[] }) {
  const { db, sources } = deps;

  async function rollSource(source: FactSource, now: Date): Promise<SourceRollStats> {
    return withTransaction(db, async (tx) => {
      await repo.lockSource(tx, source.key);
      const state = await repo.sourceState(tx, source.key);
      const since = state?.watermark ? new Date(state.watermark.getTime() - ROLLUP_LAG_MS) : null;
      const days = await source.touchedDays(tx, since);
      const metrics = metricsOfSource(source.key);
      let rows = 0;
      for (const range of dayRanges(days)) {
        const facts = await source.facts(tx, range.from, range.to);
        await repo.replaceDays(tx, metrics, range.from, range.to, facts, now);
        rows += facts.length;
      }
      await repo.saveSourceState(tx, source.key, now, now, days.length);
      return { days: days.length, rows };
    });
  }

  return {
    /** Rolls every source up to `now`; one source's failure stops the run (the next run retries it, nothing half-written stays). */
    async roll(now: Date, log?: FastifyBaseLogger): Promise<Record<string, SourceRollStats>> {
      const stats: Record<string, SourceRollStats> = {};
      for (const source of sources) {
        stats[source.key] = await rollSource(source, now);
        log?.debug({ source: source.key, ...stats[source.key] }, 'analytics rollup');
      }
      return stats;
    },

    /**
     * Seconds from the oldest source watermark to `now`: how far behind the warehouse is (a metrics
     * gauge); null until every source has been rolled once.
     */
    async lagSec(now: Date): Promise<number | null> {
      const watermarks = await repo.watermarks(db);
      let oldest: Date | null = null;
      for (const source of sources) {
        const watermark = watermarks.get(source.key) ?? null;
        if (watermark === null) return null;
        if (oldest === null || watermark < oldest) oldest = watermark;
      }
      return oldest === null ? null : Math.max(0, Math.floor((now.getTime() - oldest.getTime()) / 1000));
    },
  };
}

export type RollupService = ReturnType<typeof createRollupService>;

export function rollupJobs(rollup: RollupService): JobDefinition[] {
  return [
    {
      name: JOB_NAME,
      description:
        'Every 15 minutes (:07, :22, :37, :52 UTC): for each analytics fact source, recomputes the UTC days whose facts changed since its last run (less a 10-minute lag) and replaces them in the warehouse; the first run rolls all history. Idempotent: a rerun writes the same rows.',
      schedule: JOB_SCHEDULE,
      run: async ({ now, log }) => ({ sources: await rollup.roll(now, log) }),
    },
  ];
}
