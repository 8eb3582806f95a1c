import { describe, expect, it } from 'vitest';
import { percentOf, reaches } from './percent.ts';

describe('percentOf and reaches', () => {
  it('cuts the percentage to two decimals, so a threshold is crossed exactly when the shown value reaches it', () => {
    expect(percentOf(1_218_750_000n, 1_500_000_000n)).toBe(81.25);
    expect(percentOf(799_999n, 1_000_000n)).toBe(79.99);
    expect(reaches(799_999n, 1_000_000n, 80)).toBe(false);
    expect(percentOf(800_000n, 1_000_000n)).toBe(80);
    expect(reaches(800_000n, 1_000_000n, 80)).toBe(true);
    expect(percentOf(1n, 3n)).toBe(33.33);
    expect(percentOf(2n, 3n)).toBe(66.66);
    expect(percentOf(0n, 3n)).toBe(0);
    expect(percentOf(3_000_000n, 1_000_000n)).toBe(300);
    expect(reaches(10_000_000n, 1_000_000n, 1000)).toBe(true);
  });

  it('floors a negative spend (credits) towards minus infinity', () => {
    expect(percentOf(-1n, 3n)).toBe(-33.34);
    expect(reaches(-1n, 3n, 1)).toBe(false);
  });

  it('agrees with the exact comparison for every threshold', () => {
    const budget = 7_777_777n;
    for (let observed = 0n; observed <= 80_000_000n; observed += 123_457n) {
      const pct = percentOf(observed, budget);
      for (const t of [1, 33, 50, 99, 100, 101, 333, 1000]) expect(pct >= t, `${observed} ${t}`).toBe(reaches(observed, budget, t));
    }
  });
});
