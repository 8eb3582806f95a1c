import { describe, expect, it } from 'vitest';
import { windowBounds, WINDOWS } from './urlState';

const NOW = Date.parse('2026-11-23T08:05:42.500Z');

describe('windowBounds', () => {
  it('ends at the current minute, rounded down, so a reload asks the same thing', () => {
    const a = windowBounds('1h', NOW);
    const b = windowBounds('1h', NOW + 15_000);
    expect(a.to).toBe('2026-11-23T08:05:00.000Z');
    expect(b).toEqual(a);
  });

  it('spans each named window back from its end', () => {
    const expected: Record<string, [string, number]> = {
      '1h': ['2026-11-23T07:05:00.000Z', 3_600_000],
      '6h': ['2026-11-23T02:05:00.000Z', 21_600_000],
      '24h': ['2026-11-22T08:05:00.000Z', 86_400_000],
      '7d': ['2026-11-16T08:05:00.000Z', 604_800_000],
      '30d': ['2026-10-24T08:05:00.000Z', 2_592_000_000],
    };
    for (const name of WINDOWS) {
      const bounds = windowBounds(name, NOW);
      expect([bounds.from, bounds.ms], name).toEqual(expected[name]);
      expect(Date.parse(bounds.to) - Date.parse(bounds.from)).toBe(bounds.ms);
    }
  });

  it('falls back to 24 hours for a name it does not know', () => {
    expect(windowBounds('2w', NOW)).toEqual(windowBounds('24h', NOW));
    expect(windowBounds('', NOW).ms).toBe(86_400_000);
  });
});
