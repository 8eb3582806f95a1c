import { describe, expect, it } from 'vitest';
import { describePredicate, fromLocalInput, toLocalInput } from './predicate';
import { dailySums } from './TenantTrend';
import { describeProof } from './VendorVerdict';

describe('honeypot page helpers', () => {
  it('sums an hourly series into days, the newest chunk ending with the current hour', () => {
    const hours = (n: number) => Array.from({ length: n }, (_, i) => ({ count: i + 1 }));
    expect(dailySums(hours(48))).toEqual([300, 876]);
    // 25 hours: the oldest hour alone is a (partial) day, then 24 whole hours.
    expect(dailySums(hours(25))).toEqual([1, 324]);
    expect(dailySums([])).toEqual([]);
  });

  it('says a predicate in words, with defaults filled in', () => {
    expect(describePredicate({ kind: 'liar_rate_above', pct: 30, windowMinutes: 15 })).toBe('LIAR share above 30% over 15 min (at least 20 events)');
    expect(describePredicate({ kind: 'liar_rate_above', pct: 10, windowMinutes: 60, minEvents: 1 })).toBe('LIAR share above 10% over 60 min (at least 1 event)');
    expect(describePredicate({ kind: 'event_count_above', count: 1000, windowMinutes: 5, uaClass: 'LIAR' })).toBe('more than 1,000 LIAR events in 5 min');
    expect(describePredicate({ kind: 'new_fingerprint_cluster', minEvents: 22 })).toBe('a fingerprint reaches its 22nd event');
    expect(describePredicate({ kind: 'new_fingerprint_cluster', minEvents: 12 })).toBe('a fingerprint reaches its 12th event');
    expect(describePredicate({ kind: 'tarpit_triggered' })).toBe('a tarpit is opened');
  });

  it('reads a stored proof into its kind and its value', () => {
    expect(describeProof('ip-range:52.230.152.0/24')).toEqual({ kind: 'Client IP inside the published range', value: '52.230.152.0/24' });
    expect(describeProof('ip-range:2001:4860:4801:10::/64').value).toBe('2001:4860:4801:10::/64');
    expect(describeProof('web-bot-auth:kid-1')).toEqual({ kind: 'Web Bot Auth signature verified with key', value: 'kid-1' });
    expect(describeProof('fcrdns:crawl-66-249-66-1.googlebot.com')).toMatchObject({ kind: expect.stringContaining('Reverse DNS'), value: 'crawl-66-249-66-1.googlebot.com' });
    expect(describeProof('something-new')).toEqual({ kind: 'something-new', value: '' });
  });

  it('turns a datetime-local value into ISO and back, in the browser zone', () => {
    const iso = fromLocalInput('2031-01-02T03:04');
    expect(iso).toBe(new Date(2031, 0, 2, 3, 4).toISOString());
    expect(toLocalInput(iso)).toBe('2031-01-02T03:04');
    expect(fromLocalInput('')).toBeNull();
    expect(toLocalInput(null)).toBe('');
  });
});
