import { Badge } from '../../empire/shared/badges';

type Tone = Parameters<typeof Badge>[0]['tone'];

const PARITY_TONES: Record<string, Tone> = { matched: 'ok', drifted: 'bad', unknown: 'neutral' };
const PARITY_WHY: Record<string, string> = {
  matched: 'the migration digests agree with this deployment\'s',
  drifted: 'a region runs other migrations than this deployment',
  unknown: 'not compared (this deployment alone)',
};

/** Migration or replay parity: matched, drifted or unknown, its meaning in the hover title. */
export function ParityBadge({ parity }: { parity: string }) {
  return (
    <Badge tone={PARITY_TONES[parity] ?? 'neutral'} title={PARITY_WHY[parity]}>
      {parity}
    </Badge>
  );
}

const STATUS_TONES: Record<string, Tone> = { active: 'ok', standby: 'warn', retired: 'neutral' };

/** A region's status: only active regions are asked during a fan-out. */
export function RegionStatusBadge({ status }: { status: string }) {
  return (
    <Badge tone={STATUS_TONES[status] ?? 'neutral'} title={status === 'active' ? 'asked during a fan-out' : 'listed, never asked'}>
      {status}
    </Badge>
  );
}

/** The regions that could not be asked, with the fixed reason; nothing when every region answered. */
export function FailedRegions({ failed, label }: { failed: readonly { region: string; reason: string }[]; label: string }) {
  if (failed.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="failed-regions" aria-label={label}>
      {failed.map((f) => (
        <li key={f.region}>
          <code>{f.region}</code> <Badge tone="bad">{f.reason}</Badge>
        </li>
      ))}
    </ul>
  );
}

/** Region keys as chips; "none" when empty. */
export function RegionKeys({ keys, label }: { keys: readonly string[]; label: string }) {
  if (keys.length === 0) return <span className="muted">none</span>;
  return (
    <span className="chips" aria-label={label}>
      {keys.map((k) => (
        <code key={k}>{k}</code>
      ))}
    </span>
  );
}
