import { Badge } from '../../empire/shared/badges';
import type { RecoveryVerdict } from './recovery';

type Tone = Parameters<typeof Badge>[0]['tone'];

const STATUS_TONES: Record<string, Tone> = { active: 'ok', paused: 'warn', retired: 'neutral' };
/** An experiment's status: active (may run), paused, retired. */
export function ExperimentStatus({ status }: { status: string }) {
  return <Badge tone={STATUS_TONES[status] ?? 'neutral'}>{status}</Badge>;
}

const OUTCOME_TONES: Record<string, Tone> = { ok: 'ok', 'sla-breach': 'bad', aborted: 'warn', partial: 'neutral' };
/** A run's outcome; `partial` while it is still open is shown as "in progress". */
export function RunOutcome({ outcome, open }: { outcome: string; open: boolean }) {
  if (open) return <Badge tone="warn">in progress</Badge>;
  return <Badge tone={OUTCOME_TONES[outcome] ?? 'neutral'}>{outcome}</Badge>;
}

const RECOVERY_TONES: Record<RecoveryVerdict, Tone> = { within: 'ok', over: 'bad', waiting: 'neutral', unmeasured: 'neutral' };
export function RecoveryBadge({ verdict, text }: { verdict: RecoveryVerdict; text: string }) {
  return <Badge tone={RECOVERY_TONES[verdict]}>{text}</Badge>;
}

/** The freeze switch's state. */
export function FreezeState({ frozen }: { frozen: boolean }) {
  return <Badge tone={frozen ? 'bad' : 'ok'}>{frozen ? 'frozen' : 'not frozen'}</Badge>;
}
