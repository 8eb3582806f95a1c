import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { percentOf, reaches } from './percent.ts';

// Budget percentages (percent.ts): the shown percentage is ⌊observed × 10000 / budget⌋ / 100, and a
// threshold is reached exactly when observed × 100 ≥ threshold × budget.

/** ⌊n / d⌋ for d > 0, by the definition: the largest q with q × d ≤ n. */
function floorRef(n: bigint, d: bigint): bigint {
  let q = n / d;
  while (q * d > n) q -= 1n;
  while ((q + 1n) * d <= n) q += 1n;
  return q;
}

describe('percentOf', () => {
  it('refuses a budget of 0 or below with its own message (not the bigint division error)', () => {
    expect(() => percentOf(1n, 0n)).toThrow(new Error('a budget must be above 0 (got 0)'));
    expect(() => percentOf(0n, 0n)).toThrow(new Error('a budget must be above 0 (got 0)'));
    expect(() => percentOf(5n, -3n)).toThrow(new Error('a budget must be above 0 (got -3)'));
    expect(() => percentOf(-5n, -1n)).toThrow(new Error('a budget must be above 0 (got -1)'));
  });

  it('accepts the smallest budget, 1', () => {
    expect(percentOf(1n, 1n)).toBe(100);
    expect(percentOf(0n, 1n)).toBe(0);
  });

  it('shows whole hundredths of a percent, cut not rounded', () => {
    expect(percentOf(1n, 10_000n)).toBe(0.01);
    expect(percentOf(9_999n, 10_000n)).toBe(99.99);
    expect(percentOf(19_999n, 10_000n)).toBe(199.99);
    expect(percentOf(2n, 3n)).toBe(66.66);
    expect(percentOf(1n, 20_000n)).toBe(0);
    expect(percentOf(7n, 2n)).toBe(350);
  });

  it('floors an exact negative quotient to itself, and an inexact one downwards', () => {
    // Exact: -1 of 1 is -100%, -3 of 3 too, -1 of 10000 is -0.01%.
    expect(percentOf(-1n, 1n)).toBe(-100);
    expect(percentOf(-3n, 3n)).toBe(-100);
    expect(percentOf(-1n, 10_000n)).toBe(-0.01);
    // Inexact: -1 of 20000 is -0.005%, shown as -0.01; -2 of 3 is -66.67.
    expect(percentOf(-1n, 20_000n)).toBe(-0.01);
    expect(percentOf(-2n, 3n)).toBe(-66.67);
    expect(percentOf(-1n, 3n)).toBe(-33.34);
  });

  it('equals ⌊observed × 10000 / budget⌋ / 100 for any observed and budget > 0', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.bigInt({ min: 1n, max: 10n ** 12n }), (observed, budget) => {
        expect(percentOf(observed, budget)).toBe(Number(floorRef(observed * 10_000n, budget)) / 100);
      }),
      { numRuns: 300 },
    );
  });
});

describe('reaches', () => {
  it('is reached at exactly the threshold, not one below', () => {
    expect(reaches(80n, 100n, 80)).toBe(true);
    expect(reaches(79n, 100n, 80)).toBe(false);
    expect(reaches(81n, 100n, 80)).toBe(true);
    expect(reaches(800_000n, 1_000_000n, 80)).toBe(true);
    expect(reaches(799_999n, 1_000_000n, 80)).toBe(false);
  });

  it('compares observed × 100 with threshold × budget, not quotients', () => {
    // 1 of 3 is 33.33…%: it reaches 33 but not 34; 2 of 3 reaches 66 but not 67.
    expect(reaches(1n, 3n, 33)).toBe(true);
    expect(reaches(1n, 3n, 34)).toBe(false);
    expect(reaches(2n, 3n, 66)).toBe(true);
    expect(reaches(2n, 3n, 67)).toBe(false);
    expect(reaches(3n, 2n, 150)).toBe(true);
    expect(reaches(3n, 2n, 151)).toBe(false);
    expect(reaches(0n, 5n, 0)).toBe(true);
    expect(reaches(0n, 5n, 1)).toBe(false);
    expect(reaches(-1n, 5n, 0)).toBe(false);
  });

  it('agrees with the shown percentage for every whole threshold', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 9n), max: 10n ** 10n }), fc.bigInt({ min: 1n, max: 10n ** 9n }), fc.integer({ min: 0, max: 1000 }), (observed, budget, t) => {
        expect(reaches(observed, budget, t)).toBe(observed * 100n >= BigInt(t) * budget);
        expect(reaches(observed, budget, t)).toBe(percentOf(observed, budget) >= t);
      }),
      { numRuns: 300 },
    );
  });
});
