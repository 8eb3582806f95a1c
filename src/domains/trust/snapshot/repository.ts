import { count, gte, inArray } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { trustDriftEvents as d } from '../schema.ts';
import type { DriftReads } from './service.ts';

/**
 * The drift counts the snapshot reads, over trust_drift_events. Stand-in until the drift inbox's
 * service (which satisfies DriftReads itself) is wired in its place: the only SQL of the snapshot.
 */
export function driftCountsOver(db: Db): DriftReads {
  return {
    async openDriftCounts() {
      const rows = await db
        .select({ status: d.status, severity: d.severity, n: count() })
        .from(d)
        .where(inArray(d.status, ['open', 'acknowledged']))
        .groupBy(d.status, d.severity);
      const out = { open: { critical: 0, major: 0, minor: 0 }, acknowledged: { critical: 0, major: 0, minor: 0 } };
      for (const r of rows) {
        const bucket = out[r.status as 'open' | 'acknowledged'];
        if (r.severity in bucket) bucket[r.severity as 'critical' | 'major' | 'minor'] += Number(r.n);
      }
      return out;
    },
    async openedSince(since) {
      const [row] = await db.select({ n: count() }).from(d).where(gte(d.openedAt, since));
      return Number(row?.n ?? 0);
    },
  };
}
