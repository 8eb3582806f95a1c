import { describe, expect, it } from 'vitest';
import { combine, type DimensionKey, overallBadgeOf, postureCheck, scoreOf, severityBadge, SNAPSHOT_RULES, type SnapshotBadge, thresholdBadge } from './score.ts';

const all = (badge: SnapshotBadge): Record<DimensionKey, SnapshotBadge> => ({ audit: badge, drift: badge, freshness: badge, incidents: badge, integrity: badge, posture: badge });

describe('the trust snapshot rules', () => {
  it('weights are B\'s sample weights and sum to 100', () => {
    expect(SNAPSHOT_RULES.weights).toEqual({ integrity: 30, posture: 25, freshness: 15, incidents: 15, audit: 10, drift: 5 });
    expect(Object.values(SNAPSHOT_RULES.weights).reduce((a, b) => a + b, 0)).toBe(100);
  });

  it('thresholds are inclusive upper bounds; null is unknown', () => {
    const cut = SNAPSHOT_RULES.freshness.graphLagSec;
    expect([null, 0, 300, 301, 1800, 1801].map((v) => thresholdBadge(v, cut))).toEqual(['unknown', 'green', 'green', 'yellow', 'yellow', 'red']);
  });

  it('combine: n/a left out, unknown alone is unknown, worst wins, green over partial evidence is yellow', () => {
    expect(combine([])).toBe('unknown');
    expect(combine(['n/a', 'unknown'])).toBe('unknown');
    expect(combine(['green', 'n/a'])).toBe('green');
    expect(combine(['green', 'unknown'])).toBe('yellow');
    expect(combine(['red', 'unknown', 'green'])).toBe('red');
    expect(combine(['yellow', 'green'])).toBe('yellow');
  });

  it('severity and posture badges', () => {
    expect(severityBadge({ critical: 0, major: 0, minor: 0 })).toBe('green');
    expect(severityBadge({ critical: 0, major: 0, minor: 2 })).toBe('yellow');
    expect(severityBadge({ critical: 1, major: 0, minor: 0 })).toBe('red');
    expect(['green', 'yellow', 'red', 'manual-review', 'unknown'].map(postureCheck)).toEqual(['green', 'yellow', 'red', 'yellow', 'unknown']);
  });

  it('score: all green 100, all red 0, all unknown 0 with badge unknown', () => {
    expect(scoreOf(all('green'))).toMatchObject({ score: 100, badge: 'green', coveragePct: 100 });
    expect(scoreOf(all('red'))).toMatchObject({ score: 0, badge: 'red' });
    const none = scoreOf(all('unknown'));
    expect(none).toMatchObject({ score: 0, badge: 'unknown', coveragePct: 0 });
    expect(none.breakdown.every((r) => r.contribution === 0)).toBe(true);
  });

  it('score: contributions are weight × points over the known weight, and sum to the score', () => {
    const s = scoreOf({ ...all('green'), incidents: 'yellow', drift: 'red' });
    expect(s.breakdown.map((r) => [r.dimension, r.weight, r.contribution])).toEqual([
      ['integrity', 30, 30],
      ['posture', 25, 25],
      ['freshness', 15, 15],
      ['incidents', 15, 7.5],
      ['audit', 10, 10],
      ['drift', 5, 0],
    ]);
    expect(s.score).toBe(88); // 87.5 rounds up
    expect(s.badge).toBe('yellow');
    // Unknown integrity: the 70 known weight is renormalised to 100.
    const r = scoreOf({ ...all('green'), integrity: 'unknown', posture: 'red' });
    expect(r.coveragePct).toBe(70);
    expect(r.breakdown.find((b) => b.dimension === 'freshness')!.contribution).toBe(21.4);
    expect(r.score).toBe(Math.round((100 * 45) / 70)); // 64
    expect(r.badge).toBe('red');
    // Below 60 of known weight the badge is unknown whatever the score.
    expect(scoreOf({ ...all('unknown'), incidents: 'green', drift: 'green' })).toMatchObject({ score: 100, badge: 'unknown', coveragePct: 20 });
  });

  it('score badge cut-offs at 90 and 70', () => {
    // integrity yellow (15 lost) → 85 yellow; posture+freshness yellow → 80; integrity red → 70 yellow; +drift red → 65 red.
    expect(scoreOf({ ...all('green'), audit: 'yellow' }).score).toBe(95);
    expect(scoreOf({ ...all('green'), audit: 'red' })).toMatchObject({ score: 90, badge: 'green' });
    expect(scoreOf({ ...all('green'), integrity: 'red' })).toMatchObject({ score: 70, badge: 'yellow' });
    expect(scoreOf({ ...all('green'), integrity: 'red', drift: 'red' })).toMatchObject({ score: 65, badge: 'red' });
  });

  it('overall badge: red beats everything, then coverage, then yellow or unknown, green only when all green', () => {
    expect(overallBadgeOf(all('green'), 100)).toBe('green');
    expect(overallBadgeOf({ ...all('green'), drift: 'unknown' }, 95)).toBe('yellow');
    expect(overallBadgeOf({ ...all('unknown'), drift: 'red' }, 5)).toBe('red');
    expect(overallBadgeOf({ ...all('unknown'), drift: 'green', incidents: 'green' }, 20)).toBe('unknown');
  });
});
