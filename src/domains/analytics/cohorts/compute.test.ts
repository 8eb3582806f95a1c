import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dayNumber } from '../../../platform/days.ts';
import { type CohortBucket, cohortBuckets, COHORT_DAYS, type CohortMember, fraction } from './compute.ts';

const D = dayNumber('2026-11-02')!;
const column = (buckets: readonly CohortBucket[], field: keyof CohortBucket) => buckets.map((b) => b[field]);

describe('cohortBuckets', () => {
  it('each-day: a member active on days 0, 1 and 3 is retained on exactly those days', () => {
    const members: CohortMember[] = [
      { anchorDay: D, followDays: [D + 3, D, D + 1] },
      { anchorDay: D, followDays: [] },
    ];
    const { cohortSize, buckets } = cohortBuckets(members, 'each-day', D + 30);
    expect(cohortSize).toBe(2);
    expect(buckets.map((b) => b.day)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(column(buckets, 'eligible')).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    expect(column(buckets, 'retained')).toEqual([1, 1, 0, 1, 0, 0, 0, 0]);
    expect(column(buckets, 'pct')).toEqual([0.5, 0.5, 0, 0.5, 0, 0, 0, 0]);
  });

  it('each-day: activity before the anchor day or after day 7 counts nowhere', () => {
    const { buckets } = cohortBuckets([{ anchorDay: D, followDays: [D - 1, D + 8, D + 20] }], 'each-day', D + 30);
    expect(column(buckets, 'retained')).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('cumulative: retained from the day of the first follow on', () => {
    const members: CohortMember[] = [
      { anchorDay: D, followDays: [D] },
      { anchorDay: D, followDays: [D + 2] },
      { anchorDay: D, followDays: [] },
    ];
    const { buckets } = cohortBuckets(members, 'cumulative', D + 30);
    expect(column(buckets, 'retained')).toEqual([1, 1, 2, 2, 2, 2, 2, 2]);
    expect(column(buckets, 'pct')).toEqual([0.3333, 0.3333, 0.6667, 0.6667, 0.6667, 0.6667, 0.6667, 0.6667]);
  });

  it('counts only members whose day has begun: a running cohort is not shown as churned', () => {
    const members: CohortMember[] = [
      { anchorDay: D, followDays: [D, D + 1] },
      { anchorDay: D + 1, followDays: [D + 1] },
      { anchorDay: D + 1, followDays: [] },
    ];
    const { cohortSize, buckets } = cohortBuckets(members, 'each-day', D + 1);
    expect(cohortSize).toBe(3);
    expect(column(buckets, 'eligible')).toEqual([3, 1, 0, 0, 0, 0, 0, 0]);
    expect(column(buckets, 'retained')).toEqual([2, 1, 0, 0, 0, 0, 0, 0]);
    expect(column(buckets, 'pct')).toEqual([0.6667, 1, 0, 0, 0, 0, 0, 0]);
  });

  it('answers 8 empty buckets for an empty cohort', () => {
    const { cohortSize, buckets } = cohortBuckets([], 'cumulative', D);
    expect(cohortSize).toBe(0);
    expect(buckets).toEqual(Array.from({ length: COHORT_DAYS }, (_, day) => ({ day, eligible: 0, retained: 0, pct: 0 })));
  });

  it('rounds pct to 4 decimals', () => {
    expect(fraction(1, 3)).toBe(0.3333);
    expect(fraction(2, 3)).toBe(0.6667);
    expect(fraction(1, 7)).toBe(0.1429);
    expect(fraction(0, 0)).toBe(0);
    expect(fraction(5, 5)).toBe(1);
  });
});

describe('cohortBuckets (fast-check)', () => {
  const member = fc.record({
    anchorDay: fc.integer({ min: D, max: D + 20 }),
    followDays: fc.array(fc.integer({ min: D - 3, max: D + 40 }), { maxLength: 10 }),
  });
  const mode = fc.constantFrom('each-day' as const, 'cumulative' as const);

  it('retained ≤ eligible ≤ cohortSize, pct in [0, 1] with 4 decimals, 8 buckets ascending', () => {
    fc.assert(
      fc.property(fc.array(member, { maxLength: 40 }), mode, fc.integer({ min: D - 2, max: D + 40 }), (members, m, today) => {
        const { cohortSize, buckets } = cohortBuckets(members, m, today);
        expect(cohortSize).toBe(members.length);
        expect(buckets.map((b) => b.day)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
        for (const b of buckets) {
          expect(b.retained).toBeGreaterThanOrEqual(0);
          expect(b.retained).toBeLessThanOrEqual(b.eligible);
          expect(b.eligible).toBeLessThanOrEqual(cohortSize);
          expect(b.pct).toBeGreaterThanOrEqual(0);
          expect(b.pct).toBeLessThanOrEqual(1);
          expect(Math.round(b.pct * 10_000) / 10_000).toBe(b.pct);
          if (b.eligible === 0) expect(b.pct).toBe(0);
        }
        // Eligibility only shrinks with the day: a later day begins later.
        for (let k = 1; k < buckets.length; k++) expect(buckets[k]!.eligible).toBeLessThanOrEqual(buckets[k - 1]!.eligible);
      }),
    );
  });

  it('cumulative: retained never decreases with the day when every day is eligible', () => {
    fc.assert(
      fc.property(fc.array(member, { maxLength: 40 }), fc.integer({ min: 0, max: 30 }), (members, extra) => {
        const { buckets } = cohortBuckets(members, 'cumulative', D + 20 + COHORT_DAYS - 1 + extra);
        for (const b of buckets) expect(b.eligible).toBe(members.length);
        for (let k = 1; k < buckets.length; k++) expect(buckets[k]!.retained).toBeGreaterThanOrEqual(buckets[k - 1]!.retained);
      }),
    );
  });
});
