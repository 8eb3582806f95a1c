import type { Breach, Detector, DriftSeverity } from '../kinds.ts';

/** What integrity-mismatch reads: stored records only, it asks nobody. */
export interface IntegrityReads {
  /** The newest `audit.verify-chain` operator record: when, and what it found. */
  latestChainVerification(): Promise<{ at: Date; after: unknown } | null>;
  /** The newest restore verification of each database (at most `limit`). */
  latestVerificationPerDatabase(limit: number): Promise<{ id: string; database: string; snapshotId: string; verifiedAt: string; outcome: string; errorText: string | null; driftTables: string[] }[]>;
  /** The stored cross-toolset restore rows (the view's read, which asks no toolset). */
  crossToolsetRows(): Promise<{ toolset: string; database: string; outcome: string; errorText: string | null; checkedAt: string | null; lastVerifiedAt: string | null }[]>;
}

export const AUDIT_CHAIN_SOURCE = 'audit-chain';
export const AUDIT_CHAIN_SUBJECT = 'chain';
export const RESTORE_SOURCE = 'restore-verification';
export const CROSS_TOOLSET_SOURCE = 'cross-toolset-restore';
/** Databases whose newest restore verification is read per scan. */
export const DATABASES_MAX = 50;

const severityOf = (outcome: string): DriftSeverity => (outcome === 'drift' ? 'critical' : 'major');

/**
 * integrity-mismatch, over stored rows:
 * - the newest audit-chain verification found the chain not intact: `audit-chain` / `chain`, critical;
 * - the newest restore verification of a database ended `drift` (critical) or `error` (major):
 *   `restore-verification` / `<database>` (at most DATABASES_MAX databases);
 * - a cross-toolset restore row is `drift` (critical) or `error` (major): `cross-toolset-restore` /
 *   `<toolset>` (at most the 100 registered toolsets).
 */
export function integrityMismatchDetector(reads: IntegrityReads): Detector {
  return {
    kind: 'integrity-mismatch',
    async scan() {
      const breaches: Breach[] = [];
      const chain = await reads.latestChainVerification();
      const after = (chain?.after ?? null) as { intact?: unknown; walkedCount?: unknown; divergence?: unknown } | null;
      if (chain !== null && after !== null && after.intact === false) {
        breaches.push({
          source: AUDIT_CHAIN_SOURCE,
          sourceId: AUDIT_CHAIN_SUBJECT,
          severity: 'critical',
          description: `The newest verification of the audit chain (${chain.at.toISOString()}) found it broken after ${Number(after.walkedCount ?? 0)} facts.`,
          payload: { verifiedAt: chain.at.toISOString(), walkedCount: after.walkedCount ?? null, divergence: after.divergence ?? null },
        });
      }
      for (const v of await reads.latestVerificationPerDatabase(DATABASES_MAX)) {
        if (v.outcome !== 'drift' && v.outcome !== 'error') continue;
        breaches.push({
          source: RESTORE_SOURCE,
          sourceId: v.database,
          severity: severityOf(v.outcome),
          description:
            v.outcome === 'drift'
              ? `The newest restore verification of ${v.database} (${v.verifiedAt}, snapshot ${v.snapshotId}) found the restored data differs from the snapshot${v.driftTables.length > 0 ? ` in ${v.driftTables.slice(0, 10).join(', ')}` : ''}.`
              : `The newest restore verification of ${v.database} (${v.verifiedAt}, snapshot ${v.snapshotId}) ended in error: ${v.errorText ?? 'no detail'}.`,
          payload: { verificationId: v.id, database: v.database, snapshotId: v.snapshotId, verifiedAt: v.verifiedAt, outcome: v.outcome, driftTables: v.driftTables.slice(0, 20) },
        });
      }
      for (const row of await reads.crossToolsetRows()) {
        if (row.outcome !== 'drift' && row.outcome !== 'error') continue;
        breaches.push({
          source: CROSS_TOOLSET_SOURCE,
          sourceId: row.toolset,
          severity: severityOf(row.outcome),
          description: `The cross-toolset restore check of ${row.toolset} (database ${row.database}) is ${row.outcome}: ${row.errorText ?? 'no detail'}`,
          payload: { toolset: row.toolset, database: row.database, outcome: row.outcome, checkedAt: row.checkedAt, lastVerifiedAt: row.lastVerifiedAt },
        });
      }
      return breaches;
    },
  };
}
