import { describe, expect, it } from 'vitest';
import { freshAtRead, freshnessOf } from '../freshness.ts';
import { rulesFreshness } from './freshness.ts';

// How fresh a rule listing is (docs/operations.md, "How fresh is an answer"), and the shared shape.

const producer = { job: 'alert-evaluate', schedule: '* * * * *' };
const at = (iso: string) => new Date(iso);

describe('rulesFreshness', () => {
  it('is the earliest evaluation bound of the enabled rules; disabled ones do not count', () => {
    const f = rulesFreshness(producer, [
      { name: 'a', enabled: true, evaluatedUntil: at('2026-11-23T10:05:00Z') },
      { name: 'b', enabled: true, evaluatedUntil: at('2026-11-23T10:03:00Z') },
      { name: 'off', enabled: false, evaluatedUntil: at('2026-11-01T00:00:00Z') },
      { name: 'off-never', enabled: false, evaluatedUntil: null },
    ]);
    expect(f).toEqual({ asOf: '2026-11-23T10:03:00.000Z', producer: 'alert-evaluate', schedule: '* * * * *', refresh: 'POST /api/observatory/v1/ops/jobs/alert-evaluate/run', reason: null });
  });

  it('is null, naming the rules, while an enabled rule was never evaluated', () => {
    const rules = ['r1', 'r2', 'r3', 'r4', 'r5'].map((name) => ({ name, enabled: true, evaluatedUntil: null }));
    const f = rulesFreshness(producer, [{ name: 'done', enabled: true, evaluatedUntil: at('2026-11-23T10:03:00Z') }, ...rules]);
    expect(f.asOf).toBeNull();
    expect(f.reason).toBe('Not evaluated yet: "r1", "r2", "r3" and 2 more. alert-evaluate evaluates enabled rules every minute, over the events received up to 60 s before it runs.');
  });

  it('is null when no rule is enabled', () => {
    expect(rulesFreshness(producer, []).reason).toBe('No enabled rule in the list: nothing is evaluated.');
    expect(rulesFreshness(producer, [{ name: 'x', enabled: false, evaluatedUntil: at('2026-11-23T10:03:00Z') }]).asOf).toBeNull();
  });
});

describe('freshnessOf', () => {
  it('refuses an unknown asOf without a reason: an answer never pretends', () => {
    expect(() => freshnessOf(producer, null)).toThrow(/needs a reason/);
    expect(freshnessOf(producer, at('2026-11-23T10:00:00Z'), 'ignored when asOf is known').reason).toBeNull();
  });

  it('a read that includes everything acknowledged is as of the read, with nothing to run', () => {
    expect(freshAtRead(at('2026-11-23T10:00:00Z'))).toEqual({ asOf: '2026-11-23T10:00:00.000Z', producer: 'read', schedule: null, refresh: null, reason: null });
  });
});
