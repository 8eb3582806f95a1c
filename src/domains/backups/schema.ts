import { bigint, index, integer, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One backup snapshot (spec A, "Backup snapshot"): a real dump file (pg_dump custom format on a
 * server, PGlite's data-directory tarball on PGlite) and what was in it, counted and hashed in the
 * same consistent view the dump was taken from (docs/backups/README.md).
 */
export const backupSnapshots = pgTable(
  'backup_snapshots',
  {
    id: uuid('id').primaryKey(),
    /** Logical database name (OBSERVATORY_BACKUP_DATABASE). */
    database: text('database').notNull(),
    /** The file's key in its storage: a path under the backup directory, or the S3 object key. */
    providerSnapshotId: text('provider_snapshot_id').notNull(),
    /** `local` or `s3`. */
    storage: text('storage').notNull(),
    /** `pg_dump-custom` or `pglite-datadir-tar-gzip`. */
    format: text('format').notNull(),
    takenAt: ts('taken_at').notNull(),
    observedAt: ts('observed_at').notNull(),
    retentionUntil: ts('retention_until'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    /** SHA-256 of the RFC 8785 canonical JSON of byTable. */
    rowCountsSha256: text('row_counts_sha256').notNull(),
    byTable: jsonb('by_table').$type<Record<string, number>>().notNull(),
    /** Per-table content hash (docs/backups/README.md, "Hashing"). */
    tableHashes: jsonb('table_hashes').$type<Record<string, string>>().notNull(),
    /** SHA-256 of the dump file's bytes. */
    fileSha256: text('file_sha256').notNull(),
    /** `manual` (POST {v1}/backups/snapshots) or `provider` (the backup-snapshot job). */
    source: text('source').notNull(),
  },
  (t) => [index('backup_snapshots_database_taken_idx').on(t.database, t.takenAt, t.id), index('backup_snapshots_retention_idx').on(t.retentionUntil)],
);

/**
 * One restore verification (spec A, "Restore verification"): the snapshot restored into a scratch
 * database, recounted and re-hashed. The snapshot's identifying fields are copied, so the ladder
 * keeps its history after retention deletes the snapshot.
 */
export const restoreVerifications = pgTable(
  'restore_verifications',
  {
    id: uuid('id').primaryKey(),
    snapshotId: uuid('snapshot_id').notNull(),
    database: text('database').notNull(),
    providerSnapshotId: text('provider_snapshot_id').notNull(),
    takenAt: ts('taken_at').notNull(),
    verifiedAt: ts('verified_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** `ok`, `drift` or `error`. */
    outcome: text('outcome').notNull(),
    errorText: text('error_text'),
    /** Tables whose count or hash differs from the snapshot's record (drift). */
    driftTables: jsonb('drift_tables').$type<string[]>().notNull(),
    restoredRowSha256: text('restored_row_sha256'),
    determinismDigest: text('determinism_digest').notNull(),
    /** SHA-256 of the file as read for this verification; null when it could not be read. */
    fileSha256: text('file_sha256'),
    /** `manual` (POST {v1}/backups/verify), `job` (the backup-verify job, a drill) or `bridge` (POST {v1}/backups/bridge/verify). */
    trigger: text('trigger').notNull(),
  },
  (t) => [
    index('restore_verifications_verified_idx').on(t.verifiedAt, t.id),
    index('restore_verifications_database_verified_idx').on(t.database, t.verifiedAt),
    index('restore_verifications_snapshot_idx').on(t.snapshotId),
  ],
);
