import { describe, expect, it } from 'vitest';
import { integerIn, WINDOW_MINUTES_MAX, WINDOW_MINUTES_MIN, WindowMinutes, windowIn } from './checks.ts';

// The value checks both domains' alert predicates share (docs/honeypot/alerts.md, docs/empire/alerts.md).

describe('integerIn', () => {
  it('allows whole numbers from min to max, both included', () => {
    expect(integerIn('count', 1, 1, 10)).toBeNull();
    expect(integerIn('count', 10, 1, 10)).toBeNull();
    expect(integerIn('count', 5, 1, 10)).toBeNull();
  });

  it('refuses below, above and between whole numbers with a sentence naming the field', () => {
    expect(integerIn('count', 0, 1, 10)).toEqual({ field: 'predicate.count', human: 'predicate.count must be a whole number from 1 to 10 (got 0).' });
    expect(integerIn('count', 11, 1, 10)?.field).toBe('predicate.count');
    expect(integerIn('count', 2.5, 1, 10)?.human).toBe('predicate.count must be a whole number from 1 to 10 (got 2.5).');
    expect(integerIn('lagSec', 0, 1, 60, ' seconds')?.human).toBe('predicate.lagSec must be a whole number from 1 to 60 seconds (got 0).');
  });
});

describe('windowIn', () => {
  it(`allows ${WINDOW_MINUTES_MIN} to ${WINDOW_MINUTES_MAX} minutes`, () => {
    expect([WINDOW_MINUTES_MIN, WINDOW_MINUTES_MAX]).toEqual([5, 1440]);
    expect(windowIn({ windowMinutes: 5 })).toBeNull();
    expect(windowIn({ windowMinutes: 1440 })).toBeNull();
    expect(windowIn({ windowMinutes: 4 })).toEqual({
      field: 'predicate.windowMinutes',
      human: 'predicate.windowMinutes must be a whole number from 5 to 1440 minutes (got 4).',
    });
    expect(windowIn({ windowMinutes: 1441 })?.field).toBe('predicate.windowMinutes');
  });

  it('describes its bounds in the schema', () => {
    expect(WindowMinutes.type).toBe('integer');
    expect(WindowMinutes.description).toBe('The sliding window, in minutes: 5 to 1440. A rule that keeps matching fires again at most once per window.');
  });
});
