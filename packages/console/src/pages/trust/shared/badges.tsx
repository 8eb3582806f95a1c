import { Badge } from '../../empire/shared/badges';

type Tone = Parameters<typeof Badge>[0]['tone'];

const DRIFT_TONES: Record<string, Tone> = { open: 'bad', acknowledged: 'warn', resolved: 'ok', 'auto-resolved': 'ok', 'wont-fix': 'neutral' };

/** A drift event's status. */
export function DriftStatus({ status }: { status: string }) {
  return <Badge tone={DRIFT_TONES[status] ?? 'neutral'}>{status}</Badge>;
}

const TRUST_TONES: Record<string, Tone> = { green: 'ok', yellow: 'warn', red: 'bad', unknown: 'neutral' };

/** A trust badge (green, yellow, red, unknown): the word shown, the colour repeats it. */
export function TrustBadge({ badge }: { badge: string }) {
  return <Badge tone={TRUST_TONES[badge] ?? 'neutral'}>{badge}</Badge>;
}
