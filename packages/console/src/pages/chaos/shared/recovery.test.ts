import { describe, expect, it } from 'vitest';
import { recoveryOf } from './recovery';

const ended = { phase: 'ended', outcome: 'ok', endedAt: '2026-11-24T08:01:00.000Z', recoverySloSec: 30 };

describe('a run\'s recovery against its SLO', () => {
  it('is within the SLO up to and including the objective', () => {
    expect(recoveryOf({ ...ended, observedRecoverySec: 12.44 })).toEqual({ verdict: 'within', text: '12.4 s of 30 s' });
    expect(recoveryOf({ ...ended, observedRecoverySec: 30 })).toEqual({ verdict: 'within', text: '30 s of 30 s' });
  });

  it('says so when the recovery took longer than the objective', () => {
    expect(recoveryOf({ ...ended, outcome: 'sla-breach', observedRecoverySec: 45.25 })).toEqual({ verdict: 'over', text: '45.3 s of 30 s: over the SLO' });
  });

  it('is waiting while the run is open, naming the phase', () => {
    expect(recoveryOf({ ...ended, phase: 'injected', outcome: 'partial', endedAt: null, observedRecoverySec: null }).text).toBe('fault held (SLO 30 s)');
    expect(recoveryOf({ ...ended, phase: 'recovering', outcome: 'partial', endedAt: null, observedRecoverySec: null })).toEqual({ verdict: 'waiting', text: 'recovering (SLO 30 s)' });
  });

  it('is unmeasured when the run ended without one (aborted, or closed as partial)', () => {
    expect(recoveryOf({ ...ended, outcome: 'aborted', observedRecoverySec: null })).toEqual({ verdict: 'unmeasured', text: 'not measured (SLO 30 s)' });
  });
});
