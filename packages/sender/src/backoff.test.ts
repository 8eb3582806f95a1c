import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.ts';

const policy = { baseMs: 500, maxMs: 60_000 };

describe('backoffDelay', () => {
  it('doubles its ceiling from the base up to the maximum, and waits between half the ceiling and the ceiling', () => {
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, policy, () => 0))).toEqual([250, 500, 1000, 2000]);
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, policy, () => 1))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffDelay(8, policy, () => 1)).toBe(60_000);
    expect(backoffDelay(1000, policy, () => 0)).toBe(30_000);
    expect(backoffDelay(0, policy, () => 1)).toBe(500);
  });

  it('stays within its bounds for any attempt and draw (fast-check)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, draw) => {
        const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(attempt - 1, 30));
        const delay = backoffDelay(attempt, policy, () => draw);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(ceiling / 2));
        expect(delay).toBeLessThanOrEqual(ceiling);
      }),
    );
  });
});
