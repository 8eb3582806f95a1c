import { api, unwrap } from '../../../api/client';

/** The backup reads and writes, typed from the served OpenAPI document. */
export const loadSnapshots = () => unwrap(api.GET('/api/observatory/v1/backups/snapshots', { params: { query: { limit: 100 } } }));
export const takeSnapshot = () => unwrap(api.POST('/api/observatory/v1/backups/snapshots', { body: {} }));
export const verifySnapshot = (snapshotId: string) => unwrap(api.POST('/api/observatory/v1/backups/verify', { body: { snapshotId } }));
export const loadLadder = (days: number) => unwrap(api.GET('/api/observatory/v1/backups/ladder', { params: { query: { days, limit: 100 } } }));

export const loadDrills = (weeks: number) => unwrap(api.GET('/api/observatory/v1/backups/drills', { params: { query: { weeks, limit: 100 } } }));
export const runDrill = () => unwrap(api.POST('/api/observatory/v1/backups/drills/run', { body: {} }));
export const resolveDrill = (id: string, note: string) => unwrap(api.POST('/api/observatory/v1/backups/drills/{id}/resolve', { params: { path: { id } }, body: { note } }));

export const loadCrossToolset = () => unwrap(api.GET('/api/observatory/v1/backups/cross-toolset'));
export const checkToolsets = (toolset: string | null) => unwrap(api.POST('/api/observatory/v1/backups/cross-toolset/verify', { body: { toolset } }));
export const loadToolsets = () => unwrap(api.GET('/api/observatory/v1/backups/toolsets'));
export const registerToolset = (toolset: string, body: { verifyUrl: string; database: string; vercelProject: string | null }) =>
  unwrap(api.PUT('/api/observatory/v1/backups/toolsets/{toolset}', { params: { path: { toolset } }, body }));
export const removeToolset = (toolset: string) => unwrap(api.DELETE('/api/observatory/v1/backups/toolsets/{toolset}', { params: { path: { toolset } } }));

export type Snapshot = Awaited<ReturnType<typeof loadSnapshots>>['snapshots'][number];
export type Verification = Awaited<ReturnType<typeof verifySnapshot>>['verification'];
export type Drill = Awaited<ReturnType<typeof loadDrills>>['drills'][number];
export type CrossRow = Awaited<ReturnType<typeof loadCrossToolset>>['rows'][number];

/** ok / drift / error (and skipped) as a coloured badge. */
export function OutcomeBadge({ outcome }: { outcome: string | null }) {
  if (outcome === null) return <span className="badge">running</span>;
  const tone = outcome === 'ok' || outcome === 'green' ? 'ok' : outcome === 'drift' || outcome === 'skipped' || outcome === 'yellow' ? 'warn' : 'bad';
  return <span className={`badge ${tone}`}>{outcome}</span>;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toLocaleString(undefined, { maximumFractionDigits: 1 })} ${units[unit]}`;
}

export const short = (hash: string | null) => (hash ? `${hash.slice(0, 12)}…` : '—');
