import { describe, expect, it } from 'vitest';
import { badgeOf, classifyDrill, type DrillMeasurements } from './service.ts';

/** The drill outcome rule (docs/backups/README.md, "Failover drills"), without a database. */

const clean: DrillMeasurements = { errors: [], verificationOutcome: 'ok', verificationErrorText: null, dataLossWindowSec: 3600, dataLossTargetSec: 7200 };

describe('classifyDrill', () => {
  it('is ok when the restore is ok and the window is within its target (the target itself included)', () => {
    expect(classifyDrill(clean)).toEqual({ outcome: 'ok', errorText: null });
    expect(classifyDrill({ ...clean, dataLossWindowSec: 7200 })).toEqual({ outcome: 'ok', errorText: null });
  });

  it('is drift past the target, naming window and target', () => {
    expect(classifyDrill({ ...clean, dataLossWindowSec: 7200.6 })).toEqual({ outcome: 'drift', errorText: 'data-loss window 7201 s exceeds the target of 7200 s' });
  });

  it('is drift when the restore drifted, with its text', () => {
    expect(classifyDrill({ ...clean, verificationOutcome: 'drift', verificationErrorText: 'tables differ: a' })).toEqual({ outcome: 'drift', errorText: 'restore drift: tables differ: a' });
    expect(classifyDrill({ ...clean, verificationOutcome: 'drift' }).errorText).toMatch(/^restore drift: /);
  });

  it('is drift when no snapshot existed at the start, and names both reasons together', () => {
    const result = classifyDrill({ ...clean, dataLossWindowSec: null, verificationOutcome: 'drift', verificationErrorText: 'x' });
    expect(result.outcome).toBe('drift');
    expect(result.errorText).toBe('restore drift: x; no snapshot existed when the drill started: every write so far would have been lost');
  });

  it('is error whenever a step failed, whatever else was measured', () => {
    expect(classifyDrill({ ...clean, errors: ['a', 'b'], verificationOutcome: 'drift', dataLossWindowSec: 1e9 })).toEqual({ outcome: 'error', errorText: 'a; b' });
  });
});

describe('badgeOf', () => {
  it('maps ok, drift and error to green, yellow and red', () => {
    expect([badgeOf('ok'), badgeOf('drift'), badgeOf('error')]).toEqual(['green', 'yellow', 'red']);
  });
});
