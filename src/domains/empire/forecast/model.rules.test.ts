import { describe, expect, it } from 'vitest';
import { ALERT_ABOVE, HOURS, LATCH_RUNS, latchFires, levelOf, RECENT_HOURS, scoreSeries, WATCH_AT } from './model.ts';

// The edges of the forecast model and its latch (spec A "Forecast", docs/empire/README.md "Forecasts").

const flat = (value: number) => Array.from({ length: HOURS }, () => value);
const withRecent = (base: readonly number[], recent: readonly number[]) => [...base.slice(0, HOURS - recent.length), ...recent];

describe('scoreSeries', () => {
  it('takes the last 3 buckets as recent and the 165 before them as the baseline', () => {
    expect(HOURS - RECENT_HOURS).toBe(165);
    // 100 an hour, then the 4th-last bucket high: that bucket is baseline, so recent equals the
    // old mean and only the baseline mean moves.
    const series = withRecent(flat(100), [265, 100, 100, 100]);
    const scored = scoreSeries(series);
    expect(scored.recentMean).toBe(100);
    expect(scored.baselineMean).toBe(101);
    expect(scored.direction).toBe('silence');
  });

  it('gives an all-zero week score 0, steady', () => {
    expect(scoreSeries(flat(0))).toEqual({ score: 0, level: 'none', direction: 'steady', recentMean: 0, baselineMean: 0, scale: 1, z: 0 });
  });

  it('calls a rise a surge, a fall a silence and no change steady', () => {
    expect(scoreSeries(withRecent(flat(10), [11, 10, 10])).direction).toBe('surge');
    expect(scoreSeries(withRecent(flat(10), [9, 10, 10])).direction).toBe('silence');
    expect(scoreSeries(withRecent(flat(10), [10, 10, 10])).direction).toBe('steady');
  });

  it('rounds the score to 4 decimals and z to 3', () => {
    // Baseline 100/h (scale 10), recent 101/h: z = 0.1, score = 1 − e^(−1/30) = 0.032784…
    const scored = scoreSeries(withRecent(flat(100), [101, 101, 101]));
    expect(scored.z).toBe(0.1);
    expect(scored.score).toBe(0.0328);
    // recent 100.333…: z = 0.0333…, reported as 0.033.
    expect(scoreSeries(withRecent(flat(100), [101, 100, 100])).z).toBe(0.033);
  });

  it('names the expected length when refusing a series', () => {
    expect(() => scoreSeries(flat(1).slice(1))).toThrow(`a forecast needs ${HOURS} hourly buckets, got ${HOURS - 1}`);
    expect(() => scoreSeries([...flat(1), 1])).toThrow(RangeError);
  });

  it('divides by the largest of spread, Poisson noise and 1', () => {
    // Tiny baseline with spread: mean 0.5, stddev 0.5, sqrt(mean) ≈ 0.707 → scale 1.
    const tiny = Array.from({ length: HOURS }, (_, i) => i % 2);
    expect(scoreSeries(withRecent(tiny, [0, 0, 0])).scale).toBe(1);
    // Poisson floor above spread: 400/h flat → scale 20.
    expect(scoreSeries(withRecent(flat(400), [440, 440, 440]))).toMatchObject({ scale: 20, z: 2 });
  });
});

describe('levelOf', () => {
  it('is none below 0.4, watch from 0.4 through 0.7, alert above 0.7', () => {
    expect(levelOf(0)).toBe('none');
    expect(levelOf(WATCH_AT - 0.0001)).toBe('none');
    expect(levelOf(WATCH_AT)).toBe('watch');
    expect(levelOf(ALERT_ABOVE)).toBe('watch');
    expect(levelOf(ALERT_ABOVE + 0.0001)).toBe('alert');
    expect(levelOf(1)).toBe('alert');
  });
});

describe('latchFires', () => {
  const hi = ALERT_ABOVE + 0.0001;
  it('counts only scores above 0.7: a run at exactly 0.7 breaks the streak', () => {
    expect(LATCH_RUNS).toBe(3);
    expect(latchFires([hi, hi, ALERT_ABOVE])).toBe(false);
    expect(latchFires([hi, hi, ALERT_ABOVE, hi, hi])).toBe(false);
    expect(latchFires([hi, hi, hi, ALERT_ABOVE])).toBe(true);
  });

  it('fires once per streak: on its third run, not on the fourth or later', () => {
    expect(latchFires([])).toBe(false);
    expect(latchFires([hi, hi, hi])).toBe(true);
    expect(latchFires([hi, hi, hi, hi])).toBe(false);
    expect(latchFires([hi, hi, hi, hi, hi])).toBe(false);
    expect(latchFires([0.1, hi, hi, hi])).toBe(false);
  });
});
