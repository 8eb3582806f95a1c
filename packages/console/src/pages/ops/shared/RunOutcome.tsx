import type { JobRun } from './types';

const CLASS: Record<JobRun['outcome'], string> = { ok: 'badge ok', error: 'badge bad', running: 'badge warn', skipped: 'badge' };

export function RunOutcome({ outcome }: { outcome: JobRun['outcome'] }) {
  return <span className={CLASS[outcome]}>{outcome}</span>;
}

export function duration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** A run's stats (what the job counted) as "name value" pairs. */
export function Stats({ stats }: { stats: JobRun['stats'] }) {
  const entries = Object.entries(stats);
  if (entries.length === 0) return <span className="muted">none</span>;
  return (
    <span className="chips">
      {entries.map(([name, value]) => (
        <code key={name}>
          {name} {typeof value === 'object' ? JSON.stringify(value) : String(value)}
        </code>
      ))}
    </span>
  );
}
