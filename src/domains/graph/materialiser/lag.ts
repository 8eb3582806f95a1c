import { NODE_KINDS, type NodeKind } from '../kinds.ts';

/**
 * Lag and its badges (docs/graph/materialiser.md, "Lag"). A node kind's lag is how far behind now
 * the instant is up to which its source is reflected in the graph; null when it never was.
 */

export const LAG_BADGE_THRESHOLDS_SEC = { green: 300, yellow: 1800 } as const;
export type LagBadge = 'green' | 'yellow' | 'red' | 'unknown';

export function lagBadge(lagSec: number | null): LagBadge {
  if (lagSec === null) return 'unknown';
  if (lagSec <= LAG_BADGE_THRESHOLDS_SEC.green) return 'green';
  if (lagSec <= LAG_BADGE_THRESHOLDS_SEC.yellow) return 'yellow';
  return 'red';
}

/** Whole seconds from `materialisedAt` to `now`, never negative (a clock set back reads 0). */
export function lagSecOf(materialisedAt: Date | null, now: Date): number | null {
  if (materialisedAt === null) return null;
  return Math.max(0, Math.floor((now.getTime() - materialisedAt.getTime()) / 1000));
}

export interface KindLag {
  kind: NodeKind;
  materialisedAt: Date | null;
  lagSec: number | null;
}

/** Every node kind's lag at `now`, in NODE_KINDS order; a kind without state is never materialised. */
export function kindLags(materialisedAt: ReadonlyMap<string, Date | null>, now: Date): KindLag[] {
  return NODE_KINDS.map((kind) => {
    const at = materialisedAt.get(kind) ?? null;
    return { kind, materialisedAt: at, lagSec: lagSecOf(at, now) };
  });
}

/** The kind that lags most (the first in NODE_KINDS order on a tie); null when none was materialised. */
export function worstLag(lags: readonly KindLag[]): KindLag | null {
  let worst: KindLag | null = null;
  for (const lag of lags) if (lag.lagSec !== null && (worst === null || lag.lagSec > worst.lagSec!)) worst = lag;
  return worst;
}
