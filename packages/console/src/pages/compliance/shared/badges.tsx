import { Badge } from '../../empire/shared/badges';

type Tone = Parameters<typeof Badge>[0]['tone'];

const POSTURE_TONES: Record<string, Tone> = { green: 'ok', yellow: 'warn', red: 'bad', 'manual-review': 'warn', unknown: 'neutral' };
const POSTURE_WHY: Record<string, string> = {
  green: 'every control that applies passes',
  yellow: 'a control that is not critical fails',
  red: 'a critical control fails, or fewer than 80% pass',
  'manual-review': 'none fails; some await an operator or were never evaluated',
  unknown: 'not evaluated yet, or no control applies',
};

/** A framework's posture badge; its rule is in the hover title. */
export function PostureBadge({ badge }: { badge: string }) {
  return (
    <Badge tone={POSTURE_TONES[badge] ?? 'neutral'} title={POSTURE_WHY[badge]}>
      {badge}
    </Badge>
  );
}

const OUTCOME_TONES: Record<string, Tone> = { pass: 'ok', fail: 'bad', 'manual-review': 'warn', 'n/a': 'neutral' };

/** A control's outcome; null before its first evaluation. */
export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  if (outcome === null) return <Badge tone="neutral">not evaluated</Badge>;
  return <Badge tone={OUTCOME_TONES[outcome] ?? 'neutral'}>{outcome}</Badge>;
}

/** A yes/no check (replay matches, digest matches) with the word said. */
export function CheckBadge({ ok, yes, no }: { ok: boolean; yes: string; no: string }) {
  return <Badge tone={ok ? 'ok' : 'bad'}>{ok ? yes : no}</Badge>;
}
