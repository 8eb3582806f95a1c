/**
 * A run's observed recovery held against its objective, in words: how long the service took to
 * answer normally again after the fault was undone, and whether that was within the SLO.
 */
export interface RecoveryFacts {
  phase: string;
  outcome: string;
  endedAt: string | null;
  recoverySloSec: number;
  observedRecoverySec: number | null;
}

export type RecoveryVerdict = 'within' | 'over' | 'waiting' | 'unmeasured';

export interface Recovery {
  verdict: RecoveryVerdict;
  /** e.g. "12.4 s of 30 s", "over: 45 s of 30 s", "recovering (SLO 30 s)". */
  text: string;
}

const seconds = (v: number) => `${v.toLocaleString('en-GB', { maximumFractionDigits: 1 })} s`;

export function recoveryOf(run: RecoveryFacts): Recovery {
  const slo = seconds(run.recoverySloSec);
  if (run.observedRecoverySec !== null) {
    const over = run.observedRecoverySec > run.recoverySloSec;
    return { verdict: over ? 'over' : 'within', text: `${seconds(run.observedRecoverySec)} of ${slo}${over ? ': over the SLO' : ''}` };
  }
  if (run.endedAt === null) return { verdict: 'waiting', text: `${run.phase === 'injected' ? 'fault held' : 'recovering'} (SLO ${slo})` };
  return { verdict: 'unmeasured', text: `not measured (SLO ${slo})` };
}
