import { describe, expect, it } from 'vitest';
import { ALERT_ABOVE, HOURS, latchFires, levelOf, scoreSeries } from './model.ts';

const flat = (value: number) => Array.from({ length: HOURS }, () => value);
const withRecent = (base: number[], recent: [number, number, number]) => [...base.slice(0, HOURS - 3), ...recent];

describe('forecast model on made-up series', () => {
  it('scores a steady series 0 and a silent toolset 0', () => {
    expect(scoreSeries(flat(40))).toMatchObject({ score: 0, level: 'none', direction: 'steady' });
    expect(scoreSeries(flat(0))).toMatchObject({ score: 0, level: 'none' });
  });

  it('turns the deviation into z with the Poisson floor and z into 1 − e^(−z/3)', () => {
    // Baseline 100/h with no spread: scale = sqrt(100) = 10; recent 130/h: z = 3; score = 1 − e^−1.
    const surge = scoreSeries(withRecent(flat(100), [130, 130, 130]));
    expect(surge.z).toBe(3);
    expect(surge.score).toBeCloseTo(1 - Math.exp(-1), 4);
    expect(surge).toMatchObject({ level: 'watch', direction: 'surge', baselineMean: 100, recentMean: 130, scale: 10 });
    // The same toolset falling silent: z = 10, score = 1 − e^(−10/3) ≈ 0.9643: an alert.
    const silence = scoreSeries(withRecent(flat(100), [0, 0, 0]));
    expect(silence).toMatchObject({ z: 10, direction: 'silence', level: 'alert' });
    expect(silence.score).toBeCloseTo(0.9643, 4);
  });

  it('uses the baseline\'s own spread when it is wider than Poisson noise', () => {
    // Alternating 0 and 200: mean ≈ 100, stddev ≈ 100 (wider than sqrt(100) = 10). Recent 260: z ≈ 1.6, score ≈ 0.41.
    const base = Array.from({ length: HOURS }, (_, i) => (i % 2 === 0 ? 0 : 200));
    const noisy = scoreSeries(withRecent(base, [260, 260, 260]));
    expect(noisy.scale).toBeCloseTo(100, 0);
    expect(noisy.z).toBeCloseTo(1.6, 1);
    expect(noisy.level).toBe('watch');
  });

  it('never lets a tiny series alarm on one stray event (scale is at least 1 event an hour)', () => {
    const stray = scoreSeries(withRecent(flat(0).map((v, i) => (i === 10 ? 1 : v)), [1, 0, 0]));
    expect(stray.scale).toBe(1);
    expect(stray.level).toBe('none');
  });

  it('puts levels at 0.4 and 0.7 exactly as spec A says', () => {
    expect([levelOf(0.39), levelOf(0.4), levelOf(0.7), levelOf(0.7001)]).toEqual(['none', 'watch', 'watch', 'alert']);
  });

  it('refuses a series of the wrong length', () => {
    expect(() => scoreSeries(flat(1).slice(1))).toThrow(RangeError);
  });
});

describe('the 3-run latch', () => {
  const hi = ALERT_ABOVE + 0.1;
  it('fires on the third consecutive run above 0.7, once per streak', () => {
    expect(latchFires([hi])).toBe(false);
    expect(latchFires([hi, hi])).toBe(false);
    expect(latchFires([hi, hi, hi])).toBe(true);
    expect(latchFires([hi, hi, hi, hi])).toBe(false);
    expect(latchFires([hi, hi, hi, 0.2, hi, hi])).toBe(true);
    expect(latchFires([hi, hi, 0.7, hi])).toBe(false);
  });
});
