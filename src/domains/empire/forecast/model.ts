/**
 * The forecaster's model (docs/empire/README.md, "Forecasts"): a pure function from a toolset's last
 * 7 days of hourly event counts to an anomaly score in 0..1.
 *
 * - The last RECENT_HOURS buckets are "recent"; the 165 before them are the baseline.
 * - z = |mean(recent) − mean(baseline)| / scale, where scale = max(stddev(baseline),
 *   sqrt(mean(baseline)), 1): the baseline's own spread, but never below Poisson noise of its mean,
 *   nor below one event an hour, so a flat or tiny series does not turn noise into alarms.
 * - score = 1 − e^(−z/3): 0 when recent matches the baseline, 0.4 at z ≈ 1.53, 0.7 at z ≈ 3.61,
 *   approaching 1 for larger deviations. Both a surge and a silence count (`direction`).
 * - A toolset with no event in the whole 7 days scores 0.
 */

export const HOURS = 7 * 24;
export const RECENT_HOURS = 3;
/** Level cut-offs (spec A, Forecast): none below 0.4, watch from 0.4 to 0.7, alert above 0.7. */
export const WATCH_AT = 0.4;
export const ALERT_ABOVE = 0.7;

export type ForecastLevel = 'none' | 'watch' | 'alert';

export interface ForecastScore {
  score: number;
  level: ForecastLevel;
  direction: 'surge' | 'silence' | 'steady';
  recentMean: number;
  baselineMean: number;
  scale: number;
  z: number;
}

export function levelOf(score: number): ForecastLevel {
  if (score > ALERT_ABOVE) return 'alert';
  return score >= WATCH_AT ? 'watch' : 'none';
}

/** Of a non-empty list: scoreSeries only takes means of its 165 baseline and 3 recent buckets. */
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** `hourly` holds HOURS counts, oldest first (missing hours as 0). */
export function scoreSeries(hourly: readonly number[]): ForecastScore {
  if (hourly.length !== HOURS) throw new RangeError(`a forecast needs ${HOURS} hourly buckets, got ${hourly.length}`);
  const baseline = hourly.slice(0, HOURS - RECENT_HOURS);
  const recent = hourly.slice(HOURS - RECENT_HOURS);
  const baselineMean = mean(baseline);
  const recentMean = mean(recent);
  const variance = mean(baseline.map((v) => (v - baselineMean) ** 2));
  const scale = Math.max(Math.sqrt(variance), Math.sqrt(baselineMean), 1);
  // A toolset with no event at all has both means 0, so z = 0 and it scores 0.
  const z = Math.abs(recentMean - baselineMean) / scale;
  const score = Math.round((1 - Math.exp(-z / 3)) * 10_000) / 10_000;
  const direction = recentMean > baselineMean ? 'surge' : recentMean < baselineMean ? 'silence' : 'steady';
  return { score, level: levelOf(score), direction, recentMean, baselineMean, scale, z: Math.round(z * 1000) / 1000 };
}

/**
 * The 3-run latch (spec A): a minor incident opens when the score has been above ALERT_ABOVE on
 * `LATCH_RUNS` consecutive runs, once per such streak. `scores` are the toolset's runs, newest
 * first, the current run included.
 */
export const LATCH_RUNS = 3;
export function latchFires(scoresNewestFirst: readonly number[]): boolean {
  let streak = 0;
  for (const score of scoresNewestFirst) {
    if (score <= ALERT_ABOVE) break;
    streak += 1;
  }
  return streak === LATCH_RUNS;
}
