import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UNTRUSTED_DATA_RULES } from '../../../platform/llm/untrusted.ts';
import { checkPredicate, EmpirePredicate } from '../../empire/index.ts';
import { backtestCountRule } from './backtest.ts';
import { RuleItem } from './output.ts';
import { proposeRules, RULE_PROPOSER_PARAMS_1_0_0 as V100, RULE_PROPOSER_PARAMS_1_1_0 as V110, RULE_PROPOSER_VERSIONS, type RuleProposerParams } from './rule-proposer.ts';
import type { ResolvedIncident, RuleExample, RuleSnapshot, ToolsetHistory } from './types.ts';

const FROM = '2024-01-01T00:00:00.000Z';
const H = 3_600_000;
const at = (hours: number) => new Date(Date.parse(FROM) + hours * H).toISOString();
const series = (base: number, spikes: Record<number, number>) => Array.from({ length: 72 }, (_, i) => spikes[i] ?? base);
const incident = (id: string, toolset: string, openedH: number, resolvedH: number): ResolvedIncident => ({ id, toolset, openedAt: at(openedH), resolvedAt: at(resolvedH), severity: 'major' });
const count = (n: number) => ({ kind: 'empire_count_gte', count: n, windowMinutes: 60 });

/**
 * web-a: 5 events an hour, 40 and 50 in hours 30 and 31, an incident 33 h → 35 h, and one busy normal
 * hour (20 at hour 60). Hours 9..35 touch [opened − 24 h, resolved]; the 45 others are normal.
 * Candidates: 50 (busiest hour before the opening), 21 (one above the 99th percentile and the max
 * of normal hours), 6 (one above the 95th: below minCount). 21 fires at hours 30 and 31 (2 TP,
 * lead 2 h); 50 only at 31 (1 TP, lead 1 h): 21 wins.
 *
 * web-b: 0 an hour, 30 at hours 20, 40, 50, 60, an incident 25 h → 26 h. 31 (above every normal
 * hour) never fires; 30 fires 4 times: 1 TP, 3 FP. 1.0.0 takes it, 1.1.0 refuses (TP < FP).
 *
 * web-c: busy but no incident: no ground truth, no proposal.
 */
const webA: ToolsetHistory = { toolset: 'web-a', hours: series(5, { 30: 40, 31: 50, 60: 20 }) };
const webB: ToolsetHistory = { toolset: 'web-b', hours: series(0, { 20: 30, 40: 30, 50: 30, 60: 30 }) };
const webC: ToolsetHistory = { toolset: 'web-c', hours: series(100, { 10: 900 }) };

const snapshot = (over: Partial<RuleSnapshot> = {}): RuleSnapshot => ({
  lookbackDays: 3,
  from: FROM,
  to: at(72),
  history: [webA, webB, webC],
  resolvedIncidents: [incident('inc-a', 'web-a', 33, 35), incident('inc-b', 'web-b', 25, 26)],
  examples: [],
  existingRules: [],
  ...over,
});

describe('proposeRules on a known dataset', () => {
  it('1.1.0 proposes the threshold that caught the incident earliest, and nothing that cries wolf', () => {
    expect(proposeRules(snapshot(), V110)).toEqual([
      {
        kind: 'alert-rule',
        toolset: 'web-a',
        name: 'web-a: ≥ 21 events an hour',
        predicate: count(21),
        rationale:
          'The threshold is one above the 99th percentile of normal hours (20 events) over 45 normal hours. Over the last 3 days it would have fired 2 times (2 TP, 0 FP) and caught 1 of 1 resolved incidents, on average 2 h before the incident opened.',
      },
    ]);
  });

  it('1.0.0 also takes a rule with more FP than TP, ranked after the clean one', () => {
    const out = proposeRules(snapshot(), V100);
    expect(out.map((p) => [p.toolset, p.predicate])).toEqual([
      ['web-a', count(21)],
      ['web-b', count(30)],
    ]);
    expect(out[0]!.rationale).toContain('one above every normal hour (20 events) over 45 normal hours');
    expect(out[1]!.rationale).toBe(
      'The threshold is the busiest hour (30 events) in the 24 h before incident inc-b opened. Over the last 3 days it would have fired 4 times (1 TP, 3 FP) and caught 1 of 1 resolved incidents, on average 4 h before the incident opened.',
    );
  });

  it('agrees with backtestCountRule on the numbers it cites', () => {
    const s = snapshot();
    const b = backtestCountRule(count(21), webA, new Date(FROM), s.resolvedIncidents, 3);
    expect(b).toMatchObject({ TP: 2, FP: 0, caught: 1, incidents: 1, meanLeadTimeSec: 7200, firings: 2 });
  });

  it('proposes nothing without resolved incidents, and for an empty snapshot', () => {
    expect(proposeRules(snapshot({ resolvedIncidents: [] }), V110)).toEqual([]);
    expect(proposeRules(snapshot({ history: [], resolvedIncidents: [] }), V100)).toEqual([]);
    expect(proposeRules(snapshot({ history: [webC], resolvedIncidents: [incident('x', 'web-a', 33, 35)] }), V110)).toEqual([]);
    expect(proposeRules(snapshot({ from: 'not a time' }), V110)).toEqual([]);
  });

  it('skips a predicate equal to an enabled rule of the toolset (keys in any order) and takes the next best', () => {
    const out = proposeRules(snapshot({ existingRules: [{ toolset: 'web-a', predicate: { windowMinutes: 60, count: 21, kind: 'empire_count_gte' } }] }), V110);
    expect(out.map((p) => p.predicate)).toEqual([count(50)]);
    expect(out[0]!.rationale).toContain('fired once (1 TP, 0 FP) and caught 1 of 1 resolved incidents, on average 1 h before');
    // The same predicate on another toolset does not count.
    expect(proposeRules(snapshot({ existingRules: [{ toolset: 'web-b', predicate: count(21) }] }), V110).map((p) => p.predicate)).toEqual([count(21)]);
  });

  it('skips a rejected example exactly (both versions) and, in 1.1.0, within 10% of it', () => {
    const rejected = (n: number, toolset = 'web-a'): RuleExample => ({ toolset, predicate: count(n), decision: 'rejected', notes: null });
    expect(proposeRules(snapshot({ examples: [rejected(21)] }), V100)[0]!.predicate).toEqual(count(50));
    expect(proposeRules(snapshot({ examples: [rejected(21)] }), V110)[0]!.predicate).toEqual(count(50));
    // 21 is within 10% of 23 (2.3) but not of 24 (2.4 < 3).
    expect(proposeRules(snapshot({ examples: [rejected(23)] }), V110)[0]!.predicate).toEqual(count(50));
    expect(proposeRules(snapshot({ examples: [rejected(24)] }), V110)[0]!.predicate).toEqual(count(21));
    expect(proposeRules(snapshot({ examples: [rejected(23)] }), V100)[0]!.predicate).toEqual(count(21));
    expect(proposeRules(snapshot({ examples: [rejected(21, 'web-b')] }), V110)[0]!.predicate).toEqual(count(21));
    // Both candidates of web-a rejected: no proposal for it.
    expect(proposeRules(snapshot({ examples: [rejected(21), rejected(50)] }), V110)).toEqual([]);
  });

  it('breaks a tie toward an accepted threshold of the toolset, else toward the quieter one', () => {
    // web-d: 40 at hour 40 before an incident 41 h → 42 h; 25 at normal hour 60. 26 and 40 both fire
    // only at hour 40: the same TP, FP and lead time.
    const webD: ToolsetHistory = { toolset: 'web-d', hours: series(0, { 40: 40, 60: 25 }) };
    const base = snapshot({ history: [webD], resolvedIncidents: [incident('inc-d', 'web-d', 41, 42)] });
    expect(proposeRules(base, V110)[0]!.predicate).toEqual(count(40));
    const accepted: RuleExample = { toolset: 'web-d', predicate: count(27), decision: 'accepted', notes: 'good one' };
    expect(proposeRules({ ...base, examples: [accepted] }, V110)[0]!.predicate).toEqual(count(26));
  });

  it('keeps thresholds at or above minCount (10 in 1.1.0, 20 in 1.0.0)', () => {
    // The only signal: 15 in the hour before an incident.
    const small: ToolsetHistory = { toolset: 'web-e', hours: series(0, { 40: 15 }) };
    const s = snapshot({ history: [small], resolvedIncidents: [incident('inc-e', 'web-e', 41, 42)] });
    expect(proposeRules(s, V110).map((p) => p.predicate)).toEqual([count(15)]);
    expect(proposeRules(s, V100)).toEqual([]);
    expect(proposeRules(s, { ...V110, minCount: 16 })).toEqual([]);
  });

  it('caps the proposals at maxProposals, best first', () => {
    expect(proposeRules(snapshot(), { ...V100, maxProposals: 1 }).map((p) => p.toolset)).toEqual(['web-a']);
    expect(proposeRules(snapshot(), { ...V100, maxProposals: 0 })).toEqual([]);
  });

  it('gives the same proposals for the same input in any order', () => {
    const s = snapshot({ examples: [{ toolset: 'web-a', predicate: count(99), decision: 'accepted', notes: null }] });
    const reordered: RuleSnapshot = {
      ...s,
      history: [...s.history].reverse(),
      resolvedIncidents: [...s.resolvedIncidents].reverse(),
      examples: [...s.examples].reverse(),
    };
    expect(proposeRules(reordered, V100)).toEqual(proposeRules(s, V100));
    expect(proposeRules(s, V110)).toEqual(proposeRules(structuredClone(s), V110));
  });

  it('ships 1.0.0 then 1.1.0 with prompts that state the output and the rules', () => {
    expect(RULE_PROPOSER_VERSIONS.map((v) => v.version)).toEqual(['1.0.0', '1.1.0']);
    for (const v of RULE_PROPOSER_VERSIONS) {
      expect(v.systemPrompt).toContain('{"proposals": [...]}');
      expect(v.systemPrompt).toContain('empire_count_gte');
      // The agent's own part stays compact; every prompt ends with the shared untrusted-data rules.
      expect(v.systemPrompt.endsWith(`\n\n${UNTRUSTED_DATA_RULES}`)).toBe(true);
      expect(v.systemPrompt.slice(0, -UNTRUSTED_DATA_RULES.length).split('\n').length).toBeLessThanOrEqual(40);
    }
    expect(RULE_PROPOSER_VERSIONS[1]!.systemPrompt).toContain('TP >= FP');
    expect(RULE_PROPOSER_VERSIONS[0]!.systemPrompt).not.toContain('TP >= FP');
  });
});

describe('proposeRules properties (fast-check)', () => {
  const toolsets = ['web-a', 'web-b', 'web-c', 'api-x'];
  const arbSnapshot = fc
    .record({
      history: fc.uniqueArray(fc.record({ toolset: fc.constantFrom(...toolsets), hours: fc.array(fc.nat(60), { minLength: 72, maxLength: 72 }) }), { selector: (h) => h.toolset, maxLength: 4 }),
      incidents: fc.array(fc.tuple(fc.constantFrom(...toolsets), fc.integer({ min: -5, max: 75 }), fc.nat(10)), { maxLength: 8 }),
      existing: fc.array(fc.tuple(fc.constantFrom(...toolsets), fc.integer({ min: 10, max: 61 })), { maxLength: 4 }),
      rejected: fc.array(fc.tuple(fc.constantFrom(...toolsets), fc.integer({ min: 10, max: 61 })), { maxLength: 4 }),
    })
    .map(
      ({ history, incidents, existing, rejected }): RuleSnapshot =>
        snapshot({
          history,
          resolvedIncidents: incidents.map(([t, o, d], i) => incident(`i${i}`, t, o, o + d)),
          existingRules: existing.map(([toolset, n]) => ({ toolset, predicate: count(n) })),
          examples: rejected.map(([toolset, n]) => ({ toolset, predicate: count(n), decision: 'rejected' as const, notes: null })),
        }),
    );

  it.each([
    ['1.0.0', V100],
    ['1.1.0', V110],
  ] as [string, RuleProposerParams][])('%s: valid, backtested, new, one per toolset, capped, order-independent', (_v, params) => {
    fc.assert(
      fc.property(arbSnapshot, (s) => {
        const out = proposeRules(s, params);
        expect(out.length).toBeLessThanOrEqual(params.maxProposals);
        expect(new Set(out.map((p) => p.toolset)).size).toBe(out.length);
        for (const p of out) {
          expect(Value.Check(RuleItem, p)).toBe(true);
          expect(Value.Check(EmpirePredicate, p.predicate) && checkPredicate(p.predicate as EmpirePredicate, { toolset: p.toolset })).toBe(null);
          const history = s.history.find((h) => h.toolset === p.toolset)!;
          const b = backtestCountRule(p.predicate, history, new Date(s.from), s.resolvedIncidents, s.lookbackDays);
          expect(b.TP).toBeGreaterThan(0);
          if (params.requireTpAtLeastFp) expect(b.TP).toBeGreaterThanOrEqual(b.FP);
          expect(p.rationale).toContain(`(${b.TP} TP, ${b.FP} FP)`);
          expect((p.predicate['count'] as number) >= params.minCount).toBe(true);
          const same = (x: Record<string, unknown>) => x['count'] === p.predicate['count'];
          expect(s.existingRules.some((r) => r.toolset === p.toolset && same(r.predicate))).toBe(false);
          expect(s.examples.some((e) => e.toolset === p.toolset && same(e.predicate))).toBe(false);
        }
        const shuffled = { ...s, history: [...s.history].reverse(), resolvedIncidents: [...s.resolvedIncidents].reverse(), examples: [...s.examples].reverse() };
        expect(proposeRules(shuffled, params)).toEqual(out);
      }),
      { numRuns: 150 },
    );
  });
});
