import { describe, expect, it, vi } from 'vitest';
import {
  carryOut,
  changedFields,
  countOutcome,
  emptyStats,
  evaluateEach,
  isSilenced,
  type Plan,
  planEvaluation,
  plural,
  type RuleOutcome,
  type RunPatch,
  SETTLE_MS,
} from './plan.ts';

// The shared alert-rule evaluation rules (docs/honeypot/alerts.md, docs/empire/alerts.md): the
// settle margin, the period a run consumes, cooldown, silence, counters and rule changes.

const NOW = new Date('2026-11-23T10:00:00.000Z');
const ms = (d: Date) => d.getTime();
const minus = (d: Date, n: number) => new Date(ms(d) - n);
const WINDOW = 15 * 60_000;
const TO = minus(NOW, SETTLE_MS);

describe('planEvaluation', () => {
  it('settles for one minute: a run at now covers events received up to now − 60 s', () => {
    expect(SETTLE_MS).toBe(60_000);
    const plan = planEvaluation({ createdAt: minus(NOW, 3_600_000), evaluatedUntil: null, lastFiredAt: null }, null, NOW);
    expect(plan).toEqual({ action: 'evaluate', period: { from: minus(NOW, 3_600_000), to: TO }, scope: { from: minus(NOW, 3_600_000), to: TO } });
  });

  it('starts from the watermark when there is one, else from the rule\'s creation', () => {
    const createdAt = minus(NOW, 3_600_000);
    const evaluatedUntil = minus(NOW, 600_000);
    expect(planEvaluation({ createdAt, evaluatedUntil, lastFiredAt: null }, null, NOW)).toMatchObject({ period: { from: evaluatedUntil, to: TO } });
  });

  it('skips while nothing new has settled: `to` must be strictly after the start', () => {
    // Created a moment ago: now − 60 s is before the creation.
    expect(planEvaluation({ createdAt: minus(NOW, 1000), evaluatedUntil: null, lastFiredAt: null }, WINDOW, NOW)).toEqual({ action: 'skip' });
    // Evaluated up to exactly now − 60 s by another run.
    expect(planEvaluation({ createdAt: minus(NOW, 3_600_000), evaluatedUntil: TO, lastFiredAt: null }, WINDOW, NOW)).toEqual({ action: 'skip' });
    // One millisecond more to read: evaluated.
    expect(planEvaluation({ createdAt: minus(NOW, 3_600_000), evaluatedUntil: minus(TO, 1), lastFiredAt: null }, null, NOW).action).toBe('evaluate');
  });

  it('reads the sliding window (to − window, to] for a windowed rule, and consumes the period since the watermark', () => {
    const evaluatedUntil = minus(NOW, 120_000);
    expect(planEvaluation({ createdAt: minus(NOW, 3_600_000), evaluatedUntil, lastFiredAt: null }, WINDOW, NOW)).toEqual({
      action: 'evaluate',
      period: { from: evaluatedUntil, to: TO },
      scope: { from: minus(TO, WINDOW), to: TO },
    });
  });

  it('cools down for one window after a firing, and evaluates again from the instant the window has passed', () => {
    const rule = (lastFiredAt: Date) => ({ createdAt: minus(NOW, 3_600_000), evaluatedUntil: minus(NOW, 120_000), lastFiredAt });
    expect(planEvaluation(rule(minus(NOW, WINDOW - 1)), WINDOW, NOW)).toEqual({ action: 'cooldown', period: { from: minus(NOW, 120_000), to: TO } });
    expect(planEvaluation(rule(minus(NOW, WINDOW)), WINDOW, NOW).action).toBe('evaluate');
    expect(planEvaluation(rule(minus(NOW, WINDOW + 1)), WINDOW, NOW).action).toBe('evaluate');
  });

  it('never cools an incremental rule down, however recently it fired', () => {
    const plan = planEvaluation({ createdAt: minus(NOW, 3_600_000), evaluatedUntil: minus(NOW, 120_000), lastFiredAt: minus(NOW, 1) }, null, NOW);
    expect(plan.action).toBe('evaluate');
  });
});

describe('isSilenced', () => {
  it('holds strictly before silenceUntil and not from that instant on; null never silences', () => {
    expect(isSilenced(null, NOW)).toBe(false);
    expect(isSilenced(new Date(ms(NOW) + 1), NOW)).toBe(true);
    expect(isSilenced(NOW, NOW)).toBe(false);
    expect(isSilenced(minus(NOW, 1), NOW)).toBe(false);
  });
});

describe('run counters', () => {
  const counted = (...outcomes: RuleOutcome[]) => {
    const stats = emptyStats();
    for (const outcome of outcomes) countOutcome(stats, outcome);
    return stats;
  };

  it('start at zero', () => {
    expect(emptyStats()).toEqual({ evaluated: 0, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 });
  });

  it('count each outcome in its own counter; every outcome but not-due and skipped is evaluated', () => {
    expect(counted('not-due')).toEqual(emptyStats());
    expect(counted('skipped')).toEqual({ ...emptyStats(), skipped: 1 });
    expect(counted('quiet')).toEqual({ ...emptyStats(), evaluated: 1 });
    expect(counted('fired')).toEqual({ ...emptyStats(), evaluated: 1, fired: 1 });
    expect(counted('silenced')).toEqual({ ...emptyStats(), evaluated: 1, silenced: 1 });
    expect(counted('cooling')).toEqual({ ...emptyStats(), evaluated: 1, cooling: 1 });
    expect(counted('fired', 'fired', 'quiet', 'skipped', 'not-due', 'cooling')).toEqual({ evaluated: 4, fired: 2, silenced: 0, cooling: 1, skipped: 1, failed: 0 });
  });

  it('evaluateEach counts a rule that throws as failed, logs it, and goes on with the next', async () => {
    const log = { error: vi.fn() };
    const boom = new Error('boom');
    const stats = await evaluateEach(
      ['a', 'b', 'c'],
      async (id) => {
        if (id === 'b') throw boom;
        return id === 'a' ? 'fired' : 'quiet';
      },
      log,
      'honeypot alert',
    );
    expect(stats).toEqual({ evaluated: 2, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 1 });
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(log.error).toHaveBeenCalledWith({ err: boom, ruleId: 'b' }, 'honeypot alert evaluation failed');
  });
});

describe('plural', () => {
  it('uses the singular for exactly one', () => {
    expect(plural(1, 'event')).toBe('1 event');
    expect(plural(0, 'event')).toBe('0 events');
    expect(plural(3, 'event')).toBe('3 events');
    expect(plural(2, 'entry', 'entries')).toBe('2 entries');
  });
});

describe('carryOut', () => {
  const period = { from: minus(TO, 120_000), to: TO };
  const scope = { from: minus(TO, WINDOW), to: TO };

  function harness(plan: Exclude<Plan, { action: 'skip' }>, options: { matches: boolean; silenceUntil?: Date | null }) {
    const calls: string[] = [];
    const patches: RunPatch[] = [];
    const fired: unknown[] = [];
    const observed: unknown[] = [];
    const run = carryOut({
      plan,
      silenceUntil: options.silenceUntil ?? null,
      now: NOW,
      observe: async (s) => {
        calls.push('observe');
        observed.push(s);
        return { count: 7 };
      },
      matches: (o) => {
        calls.push('matches');
        expect(o).toEqual({ count: 7 });
        return options.matches;
      },
      advance: async (patch) => {
        calls.push('advance');
        patches.push(patch);
      },
      fire: async (o, s) => {
        calls.push('fire');
        fired.push({ o, s });
      },
    });
    return { run, calls, patches, fired, observed };
  }

  it('only advances the watermark while cooling, without looking', async () => {
    const h = harness({ action: 'cooldown', period }, { matches: true });
    expect(await h.run).toEqual({ outcome: 'cooling', observation: null });
    expect(h.calls).toEqual(['advance']);
    expect(h.patches).toEqual([{ evaluatedUntil: TO }]);
  });

  it('reads the scope, and consumes the period quietly when the predicate does not hold', async () => {
    const h = harness({ action: 'evaluate', period, scope }, { matches: false });
    expect(await h.run).toEqual({ outcome: 'quiet', observation: { count: 7 } });
    expect(h.observed).toEqual([scope]);
    expect(h.calls).toEqual(['observe', 'matches', 'advance']);
    expect(h.patches).toEqual([{ evaluatedUntil: TO }]);
  });

  it('consumes the period without firing while silenced', async () => {
    const h = harness({ action: 'evaluate', period, scope }, { matches: true, silenceUntil: new Date(ms(NOW) + 1) });
    expect(await h.run).toEqual({ outcome: 'silenced', observation: { count: 7 } });
    expect(h.fired).toEqual([]);
    expect(h.patches).toEqual([{ evaluatedUntil: TO }]);
  });

  it('fires on a match once the silence has ended, recording the firing time with the watermark', async () => {
    const h = harness({ action: 'evaluate', period, scope }, { matches: true, silenceUntil: NOW });
    expect(await h.run).toEqual({ outcome: 'fired', observation: { count: 7 } });
    expect(h.calls).toEqual(['observe', 'matches', 'advance', 'fire']);
    expect(h.patches).toEqual([{ evaluatedUntil: TO, lastFiredAt: NOW }]);
    expect(h.fired).toEqual([{ o: { count: 7 }, s: scope }]);
  });
});

describe('changedFields', () => {
  const row = { name: 'liars', enabled: true, silenceUntil: null as Date | null };

  // toStrictEqual: a patch naming a field with the value undefined would still write that column.
  it('is empty when nothing changes', () => {
    expect(changedFields(row, {}, NOW)).toStrictEqual({});
    expect(changedFields(row, { name: 'liars', enabled: true, silenceUntil: null }, NOW)).toStrictEqual({});
    const silenced = { ...row, silenceUntil: new Date('2026-12-01T00:00:00Z') };
    expect(changedFields(silenced, { silenceUntil: '2026-12-01T00:00:00.000Z' }, NOW)).toStrictEqual({});
  });

  it('renames', () => {
    expect(changedFields(row, { name: 'other' }, NOW)).toStrictEqual({ name: 'other' });
  });

  it('restarts evaluation at now when a disabled rule is enabled, and only then', () => {
    expect(changedFields({ ...row, enabled: false }, { enabled: true }, NOW)).toStrictEqual({ enabled: true, evaluatedUntil: NOW });
    expect(changedFields(row, { enabled: false }, NOW)).toStrictEqual({ enabled: false });
  });

  it('sets, moves and lifts a silence', () => {
    expect(changedFields(row, { silenceUntil: '2026-12-01T00:00:00Z' }, NOW)).toEqual({ silenceUntil: new Date('2026-12-01T00:00:00Z') });
    const silenced = { ...row, silenceUntil: new Date('2026-12-01T00:00:00Z') };
    expect(changedFields(silenced, { silenceUntil: '2026-12-02T00:00:00Z' }, NOW)).toEqual({ silenceUntil: new Date('2026-12-02T00:00:00Z') });
    expect(changedFields(silenced, { silenceUntil: null }, NOW)).toEqual({ silenceUntil: null });
  });
});
