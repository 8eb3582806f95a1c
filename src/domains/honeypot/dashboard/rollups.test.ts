import { describe, expect, it } from 'vitest';
import { hourStart, windowStart, windowStarts } from './rollups.ts';

const NOW = new Date('2026-11-23T10:30:00.000Z');

// What each rollup counts is SQL (repository.ts); dashboard.test.ts checks it against
// the events table through the API. These are the window rules both sides share.
describe('windows', () => {
  it('start at the current hour minus N-1 hours', () => {
    expect(windowStart('24h', NOW).toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(windowStart('7d', NOW).toISOString()).toBe('2026-11-16T11:00:00.000Z');
    expect(windowStart('30d', NOW).toISOString()).toBe('2026-10-24T11:00:00.000Z');
    expect(windowStart('24h', new Date('2026-11-23T10:00:00.000Z')).toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(windowStart('24h', new Date('2026-11-23T09:59:59.999Z')).toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });

  it('are hour buckets in UTC, all three at once', () => {
    expect(hourStart(new Date('2026-11-23T10:59:59.999Z')).toISOString()).toBe('2026-11-23T10:00:00.000Z');
    expect(windowStarts(NOW)).toEqual({ '24h': windowStart('24h', NOW), '7d': windowStart('7d', NOW), '30d': windowStart('30d', NOW) });
  });
});
