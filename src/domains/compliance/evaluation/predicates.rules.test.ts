import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCatalogue, loadFrameworks } from '../frameworks/catalogue.ts';
import { badgeOf } from '../frameworks/service.ts';
import { evaluatePredicate, PREDICATE_KEYS } from './predicates.ts';

/** The predicates as pure rules: each outcome from an observed payload, and the catalogue's checks. */

const asOf = '2026-11-28T10:00:00.000Z';
const daysBefore = (days: number) => new Date(Date.parse(asOf) - days * 86_400_000).toISOString();
const outcome = (key: string, observed: unknown) => evaluatePredicate(key, observed).outcome;

describe('predicates', () => {
  it('admin-token-not-first-start fails while a first-start token is live', () => {
    expect(outcome('admin-token-not-first-start', { asOf, adminTokenConfigured: false, firstStartTokens: [] })).toBe('pass');
    expect(outcome('admin-token-not-first-start', { asOf, adminTokenConfigured: false, firstStartTokens: [{ prefix: 'svctok_ab12', createdAt: asOf, lastUsedAt: null }] })).toBe('fail');
  });

  it('tokens-expire-or-recently-used fails on any idle token', () => {
    const base = { asOf, maxIdleDays: 90, liveTokens: 3 };
    expect(outcome('tokens-expire-or-recently-used', { ...base, idleCount: 0, idle: [] })).toBe('pass');
    const idle = evaluatePredicate('tokens-expire-or-recently-used', { ...base, idleCount: 25, idle: [{ prefix: 'svctok_x', name: 'ci', createdAt: daysBefore(200), lastUsedAt: null }] });
    expect(idle.outcome).toBe('fail');
    expect(idle.summary).toContain('and 24 more');
    expect(evaluatePredicate('tokens-expire-or-recently-used', { ...base, liveTokens: 1, idleCount: 0, idle: [] }).summary).toMatch(/^The one live token was used/);
  });

  it('outbound-private-addresses-blocked follows the lab switch', () => {
    expect(outcome('outbound-private-addresses-blocked', { asOf, allowPrivateOutbound: false })).toBe('pass');
    expect(outcome('outbound-private-addresses-blocked', { asOf, allowPrivateOutbound: true })).toBe('fail');
  });

  it('audit-chain-verified needs an intact verification within 7 days', () => {
    const verification = (at: string, intact: boolean) => ({ asOf, maxAgeDays: 7, headSeqNo: '40', lastVerification: { at, intact, walkedCount: 39, headSeqNo: '39', divergence: null } });
    expect(outcome('audit-chain-verified', { asOf, maxAgeDays: 7, headSeqNo: '1', lastVerification: null })).toBe('fail');
    expect(outcome('audit-chain-verified', verification(daysBefore(6.9), true))).toBe('pass');
    expect(outcome('audit-chain-verified', verification(daysBefore(7.1), true))).toBe('fail');
    expect(evaluatePredicate('audit-chain-verified', verification(daysBefore(1), false)).summary).toMatch(/broken/);
  });

  it('triage-incidents-decided fails on an overdue proposal only', () => {
    const base = { asOf, maxWaitHours: 72, oldestPendingAt: daysBefore(1) };
    expect(outcome('triage-incidents-decided', { ...base, pendingIncidents: 2, overdueCount: 0 })).toBe('pass');
    expect(outcome('triage-incidents-decided', { ...base, pendingIncidents: 2, overdueCount: 1 })).toBe('fail');
  });

  it('subprocessors-reviewed: manual review with none registered, fail on an unreviewed one', () => {
    const base = { asOf, maxAgeDays: 365 };
    expect(outcome('subprocessors-reviewed', { ...base, inUse: 0, unreviewedCount: 0, unreviewed: [] })).toBe('manual-review');
    expect(outcome('subprocessors-reviewed', { ...base, inUse: 2, unreviewedCount: 0, unreviewed: [] })).toBe('pass');
    const failed = evaluatePredicate('subprocessors-reviewed', { ...base, inUse: 2, unreviewedCount: 1, unreviewed: [{ name: 'Mailer', lastReviewedAt: null }] });
    expect(failed).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('Mailer (never)') });
  });

  it('cost-overruns-acknowledged fails on an open overrun', () => {
    expect(outcome('cost-overruns-acknowledged', { asOf, openCount: 0, open: [] })).toBe('pass');
    expect(outcome('cost-overruns-acknowledged', { asOf, openCount: 1, open: [{ alertId: 'a', scope: 'toolset', scopeKey: 'x', monthBucket: '2026-11', thresholdPct: 100, firedAt: asOf }] })).toBe('fail');
  });

  it('restore-verified-7d and failover-drill-90d count only ok records within their window', () => {
    const rec = (at: string, result: string) => ({ id: 'r', at, outcome: result, subject: 's' });
    expect(outcome('restore-verified-7d', { asOf, maxAgeDays: 7, lastOk: rec(daysBefore(2), 'ok'), latest: rec(daysBefore(1), 'error') })).toBe('pass');
    expect(outcome('restore-verified-7d', { asOf, maxAgeDays: 7, lastOk: rec(daysBefore(8), 'ok'), latest: rec(daysBefore(1), 'drift') })).toBe('fail');
    expect(outcome('failover-drill-90d', { asOf, maxAgeDays: 90, lastOk: null, latest: null })).toBe('fail');
    expect(outcome('failover-drill-90d', { asOf, maxAgeDays: 90, lastOk: rec(daysBefore(89), 'ok'), latest: rec(daysBefore(89), 'ok') })).toBe('pass');
  });

  it('signed-events-required: n/a without keys; the global switch or every keyed toolset signed-only passes', () => {
    const base = { asOf, requireSignedGlobally: false, admittingUnsignedListed: [] as string[] };
    expect(outcome('signed-events-required', { ...base, toolsetsWithKeys: 0, admittingUnsigned: 0 })).toBe('n/a');
    expect(outcome('signed-events-required', { ...base, toolsetsWithKeys: 2, admittingUnsigned: 0 })).toBe('pass');
    expect(outcome('signed-events-required', { ...base, toolsetsWithKeys: 2, admittingUnsigned: 1, admittingUnsignedListed: ['lab'] })).toBe('fail');
    expect(outcome('signed-events-required', { ...base, requireSignedGlobally: true, toolsetsWithKeys: 2, admittingUnsigned: 1, admittingUnsignedListed: ['lab'] })).toBe('pass');
  });

  it('no-open-critical-drift fails while a critical drift event is open or acknowledged', () => {
    expect(outcome('no-open-critical-drift', { asOf, openCritical: 0, acknowledgedCritical: 0, listed: [] })).toBe('pass');
    const listed = [{ id: 'e1', kind: 'integrity-mismatch', source: 'audit-chain', sourceId: 'chain', status: 'acknowledged', openedAt: daysBefore(1) }];
    const held = evaluatePredicate('no-open-critical-drift', { asOf, openCritical: 0, acknowledgedCritical: 1, listed });
    expect(held.outcome).toBe('fail');
    expect(held.summary).toContain('integrity-mismatch audit-chain chain (acknowledged since');
    expect(evaluatePredicate('no-open-critical-drift', { asOf, openCritical: 30, acknowledgedCritical: 0, listed }).summary).toContain('and 29 more');
  });

  it('federation-region-parity fails on drifted migrations, asks an operator when a region could not be asked, passes when all agree', () => {
    const base = { asOf, currentRegion: 'eu-west', participating: ['eu-west', 'us-east'], participatingCount: 2, failed: [], failedCount: 0, drifted: [] };
    expect(outcome('federation-region-parity', { ...base, migrationParity: 'matched' })).toBe('pass');
    expect(evaluatePredicate('federation-region-parity', { ...base, participating: ['eu-west'], participatingCount: 1, migrationParity: 'matched' }).summary).toContain('Only this region (eu-west)');
    const drifted = evaluatePredicate('federation-region-parity', { ...base, migrationParity: 'drifted', drifted: [{ regionKey: 'us-east', migrationDigest: 'b'.repeat(64) }] });
    expect(drifted).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('us-east (bbbbbbbbbbbb)') });
    const unasked = evaluatePredicate('federation-region-parity', { ...base, migrationParity: 'matched', failed: [{ region: 'ap-south', reason: 'timeout' }], failedCount: 1 });
    expect(unasked).toMatchObject({ outcome: 'manual-review', summary: expect.stringContaining('ap-south (timeout)') });
  });

  it('chaos-recovery-within-slo passes when a run ended ok and the last did not breach; fails on none (naming chaos off) or a breach', () => {
    const run = { id: 'r1', experimentSlug: 'readonly-drill', outcome: 'ok', observedRecoverySec: 12, recoverySloSec: 30, endedAt: daysBefore(3) };
    const base = { asOf, maxAgeDays: 90, allowedBlastRadii: ['*'], okCount: 2, slaBreachCount: 0, latest: run };
    expect(evaluatePredicate('chaos-recovery-within-slo', base)).toEqual({
      outcome: 'pass',
      summary: `2 chaos runs ended ok in the last 90 days. The latest chaos run that measured its recovery (readonly-drill, run r1, ended ${daysBefore(3)}) recovered in 12 s, within its objective of 30 s.`,
    });
    const none = evaluatePredicate('chaos-recovery-within-slo', { ...base, okCount: 0, latest: null });
    expect(none).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('Register an experiment') });
    expect(none.summary).not.toContain('switched off');
    const off = evaluatePredicate('chaos-recovery-within-slo', { ...base, allowedBlastRadii: [], okCount: 0, latest: null });
    expect(off).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('Chaos is switched off (OBSERVATORY_CHAOS_ALLOW is empty)') });
    const breach = evaluatePredicate('chaos-recovery-within-slo', { ...base, slaBreachCount: 1, latest: { ...run, outcome: 'sla-breach', observedRecoverySec: 45.04 } });
    expect(breach).toMatchObject({ outcome: 'fail', summary: expect.stringContaining('breached its recovery objective: it recovered in 45 s against an objective of 30 s. 2 runs ended ok') });
    // The latest ended ok but the count says none: the payload contradicts itself, and no pass comes of it.
    expect(outcome('chaos-recovery-within-slo', { ...base, okCount: 0 })).toBe('fail');
    expect(outcome('chaos-recovery-within-slo', { ...base, latest: { ...run, outcome: 'aborted' } })).toBe('manual-review');
  });

  it('answers n/a with the reason for an input the deployment does not have, never pass', () => {
    for (const key of ['no-open-critical-drift', 'chaos-recovery-within-slo', 'federation-region-parity']) {
      expect(evaluatePredicate(key, { asOf, available: false, reason: 'not built yet.' })).toEqual({ outcome: 'n/a', summary: 'Not applicable: not built yet.' });
    }
  });

  it('cannot decide a payload that is not its input, nor an unknown predicate: manual-review', () => {
    for (const key of PREDICATE_KEYS) {
      expect(outcome(key, { ticket: 'SEC-1' }), key).toBe('manual-review');
      expect(outcome(key, null), key).toBe('manual-review');
    }
    expect(outcome('no-such-predicate', { asOf })).toBe('manual-review');
  });
});

describe('the catalogue', () => {
  it('ships SOC 2 and ISO 27001 with unique ids and known predicates, every predicate used', () => {
    const catalogue = createCatalogue();
    expect(catalogue.frameworks.map((f) => f.framework)).toEqual(['soc2', 'iso27001']);
    const used = new Set(catalogue.frameworks.flatMap((f) => f.controls.map((c) => c.predicateKey)));
    expect([...used].sort()).toEqual([...PREDICATE_KEYS].sort());
    expect(catalogue.control('CC6.1')).toMatchObject({ control: { id: 'soc2/CC6.1' } });
    expect(catalogue.control('iso27001/A.8.13')).toMatchObject({ control: { controlId: 'A.8.13' } });
    expect(catalogue.control('A.8.13', 'soc2')).toEqual({ control: null, ambiguous: [] });
  });

  it('refuses a file with a duplicate control or an unknown predicate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'frameworks-'));
    const control = { controlId: 'X.1', category: 'c', title: 't', description: 'd', predicateKey: 'audit-chain-verified', severity: 'major' };
    const file = (name: string, controls: object[]) => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify({ framework: 'test', title: 'T', version: '1', status: 'active', source: 's', controls }));
      return path;
    };
    expect(() => loadFrameworks([file('dup.json', [control, control])])).toThrow(/X.1 is listed twice/);
    expect(() => loadFrameworks([file('unknown.json', [{ ...control, predicateKey: 'always-pass' }])])).toThrow(/unknown predicate always-pass/);
    expect(() => loadFrameworks([file('bad.json', [{ ...control, severity: 'huge' }])])).toThrow(/bad.json/);
  });
});

describe('the posture badge', () => {
  const counts = { applicable: 10, passing: 10, failing: 0, manualReview: 0, criticalFailing: 0, evaluated: true };
  it.each([
    ['unknown before any evaluation', { ...counts, evaluated: false }, 'unknown'],
    ['unknown when nothing applies', { ...counts, applicable: 0, passing: 0 }, 'unknown'],
    ['green when all pass', counts, 'green'],
    ['manual-review when nothing fails but some await an operator', { ...counts, passing: 9, manualReview: 1 }, 'manual-review'],
    ['yellow when a non-critical control fails at 90%', { ...counts, passing: 9, failing: 1 }, 'yellow'],
    ['yellow at exactly 80%', { ...counts, passing: 8, failing: 2 }, 'yellow'],
    ['red below 80%', { ...counts, passing: 7, failing: 3 }, 'red'],
    ['red when a critical control fails, whatever the rate', { ...counts, passing: 9, failing: 1, criticalFailing: 1 }, 'red'],
  ] as const)('%s', (_, input, badge) => {
    expect(badgeOf(input)).toBe(badge);
  });
});
