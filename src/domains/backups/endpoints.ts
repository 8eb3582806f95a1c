import { Type } from '@sinclair/typebox';
import type { CallContext } from '../../platform/audit/service.ts';
import { LONG_WORK_TIMEOUT_MS, defineEndpoint, EmptyBody, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, V1 } from '../../platform/http/registry.ts';
import {
  type BackupService,
  LADDER_DAYS_DEFAULT,
  LADDER_DAYS_MAX,
  LADDER_LIMIT_DEFAULT,
  LADDER_LIMIT_MAX,
  SNAPSHOT_LIMIT_DEFAULT,
  SNAPSHOT_LIMIT_MAX,
} from './service.ts';

/** What the snapshot and verification endpoints say of turns and of bound tokens (their `spansEveryToolset`). */
const BOUND = 'One backup snapshot or restore verification runs at a time on a deployment (every instance on its database): a second answers 409 `conflict` at once (jobs wait for their turn). A token bound to toolsets is refused with 403: a snapshot covers every toolset.';

/** Backups (spec B group 5): snapshots, restore verification, the ladder. docs/backups/README.md. */

const generatedAt = '2026-11-25T03:30:00.000Z';
const TAG = 'backups';
const UI_PATH = '/backups';
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const DATABASE_PATTERN = '^[a-z][a-z0-9_-]{0,62}$';

const Snapshot = Type.Object({
  id: Type.String({ format: 'uuid' }),
  database: Type.String({ description: 'Logical database name (OBSERVATORY_BACKUP_DATABASE).' }),
  providerSnapshotId: Type.String({ description: 'The file\'s key: a path under OBSERVATORY_BACKUP_DIR, or the S3 object key.' }),
  takenAt: IsoDate,
  observedAt: IsoDate,
  retentionUntil: Nullable(IsoDate),
  sizeBytes: Type.Integer({ minimum: 0 }),
  rowCountsSha256: Type.String({ description: 'SHA-256 of the RFC 8785 canonical JSON of byTable.' }),
  byTable: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: 'Table → row count, in the view the dump was taken from.' }),
  source: StringEnum(['manual', 'provider', 'synthetic'] as const, { description: '`manual`: POST {v1}/backups/snapshots; `provider`: the backup-snapshot job. `synthetic` is never written here.' }),
  storage: StringEnum(['local', 's3'] as const),
  format: StringEnum(['pg_dump-custom', 'pglite-datadir-tar-gzip'] as const),
  fileSha256: Type.String({ description: 'SHA-256 of the dump file\'s bytes.' }),
  tableHashes: Type.Record(Type.String(), Type.String(), { description: 'Table → content hash (docs/backups/README.md, "Hashing").' }),
});
const exampleSnapshot = {
  id: '7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f',
  database: 'observatory',
  providerSnapshotId: 'observatory/20261125T023000Z-7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f.pgdump',
  takenAt: '2026-11-25T02:30:00.000Z',
  observedAt: '2026-11-25T02:30:04.000Z',
  retentionUntil: '2026-12-09T02:30:00.000Z',
  sizeBytes: 183_502,
  rowCountsSha256: 'a3f1c2d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f60718293a4b5c6d7',
  byTable: { honeypot_events: 1200, operator_audit: 14 },
  source: 'provider',
  storage: 'local',
  format: 'pg_dump-custom',
  fileSha256: '0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c',
  tableHashes: {
    honeypot_events: '5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8',
    operator_audit: '6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b',
  },
};

const Verification = Type.Object({
  id: Type.String({ format: 'uuid' }),
  snapshotId: Type.String({ format: 'uuid' }),
  database: Type.String(),
  providerSnapshotId: Type.String(),
  takenAt: IsoDate,
  verifiedAt: IsoDate,
  durationMs: Type.Integer({ minimum: 0, description: 'Reading, checking, restoring and re-hashing, measured.' }),
  outcome: StringEnum(['ok', 'drift', 'error'] as const),
  errorText: Nullable(Type.String({ description: 'drift: the tables that differ; error: why the file could not be read or restored.' })),
  restoredRowSha256: Nullable(Type.String({ description: 'rowCountsSha256 of the restored copy (equal to the snapshot\'s when ok); null when nothing was restored.' })),
  determinismDigest: Type.String({ description: 'SHA-256 of canonical {snapshotId, fileSha256, byTable, tableHashes} as found; the same for every verification of the same file.' }),
  driftTables: Type.Array(Type.String(), { description: 'Tables whose count or hash differs from the record (drift).' }),
  fileSha256: Nullable(Type.String({ description: 'SHA-256 of the file as read; null when it could not be read.' })),
  trigger: StringEnum(['manual', 'job', 'bridge'] as const, {
    description: '`manual`: POST {v1}/backups/verify; `job`: the backup-verify job or a failover drill; `bridge`: POST {v1}/backups/bridge/verify (a peer\'s check).',
  }),
});
const exampleVerification = {
  id: '2b3c4d5e-6f70-4819-a2b3-c4d5e6f70819',
  snapshotId: exampleSnapshot.id,
  database: 'observatory',
  providerSnapshotId: exampleSnapshot.providerSnapshotId,
  takenAt: exampleSnapshot.takenAt,
  verifiedAt: generatedAt,
  durationMs: 2840,
  outcome: 'ok',
  errorText: null,
  restoredRowSha256: exampleSnapshot.rowCountsSha256,
  determinismDigest: 'd4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35',
  driftTables: [],
  fileSha256: exampleSnapshot.fileSha256,
  trigger: 'manual',
};

const LadderDatabase = Type.Object({
  database: Type.String(),
  last: Nullable(IsoDate),
  lastOk: Nullable(IsoDate),
  hoursSinceLastOk: Nullable(Type.Number({ minimum: 0, description: 'Hours from the last ok verification to now, to 0.1 h.' })),
  totals30d: Type.Object({ ok: Type.Integer({ minimum: 0 }), drift: Type.Integer({ minimum: 0 }), error: Type.Integer({ minimum: 0 }) }, { description: 'Verifications of the last 30 days by outcome (always 30, whatever `days`).' }),
});

const call = (principal: Principal | null, requestId: string): CallContext => ({ principal: principal as Principal, requestId });

export function backupEndpoints(backups: BackupService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listBackupSnapshots',
      title: 'List backup snapshots',
      description: 'Backup snapshots newest first, optionally of one database: file key, size, row counts per table and their hashes, retention. A token bound to toolsets is refused (403): a snapshot covers every toolset.',
      method: 'GET',
      path: `${V1}/backups/snapshots`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          database: Type.Optional(Type.String({ pattern: DATABASE_PATTERN, description: 'Only this logical database.' })),
          limit: PageLimitParam(SNAPSHOT_LIMIT_DEFAULT, SNAPSHOT_LIMIT_MAX),
        },
        { examples: [{ database: 'observatory', limit: 20 }] },
      ),
      response: { schemaId: 'svc-backup-snapshots.v1', fields: { database: Nullable(Type.String()), snapshots: Type.Array(Snapshot) } },
      example: { schema: 'svc-backup-snapshots.v1', generatedAt, database: 'observatory', snapshots: [exampleSnapshot] },
      spansEveryToolset: 'the backup snapshot list',
      handler: async ({ query }) => ({ database: query.database ?? null, snapshots: await backups.listSnapshots({ database: query.database, limit: query.limit }) }),
    }),
    defineEndpoint({
      id: 'takeBackupSnapshot',
      title: 'Take a backup snapshot now',
      description:
        `Dumps the database now (pg_dump custom format on PostgreSQL, the data directory's database files as a tarball on PGlite), counts and hashes every table in the same consistent view, stores the file and records it with source manual. Audited as backup.snapshot. A dump that cannot be made (pg_dump missing or failing, storage unreachable) answers 503 backup-failed naming the cause, and nothing is recorded. ${BOUND}`,
      method: 'POST',
      path: `${V1}/backups/snapshots`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      // A dump or a restore of the whole database: minutes on a large one (docs/backups/README.md).
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      errors: [409],
      body: EmptyBody,
      response: { schemaId: 'svc-backup-snapshot.v1', fields: { ok: Type.Boolean(), snapshot: Snapshot } },
      example: { schema: 'svc-backup-snapshot.v1', generatedAt, ok: true, snapshot: { ...exampleSnapshot, source: 'manual' } },
      spansEveryToolset: 'a backup snapshot',
      handler: async ({ principal, requestId }) => ({ ok: true, snapshot: await backups.takeSnapshot({ source: 'manual', call: call(principal, requestId) }) }),
    }),
    defineEndpoint({
      id: 'verifyBackupSnapshot',
      title: 'Verify a backup snapshot by restoring it',
      description:
        `Restores the snapshot into a scratch database (a temporary database on the server, dropped afterwards; a scratch PGlite directory, removed afterwards), recounts and re-hashes every table and compares with the snapshot's record: outcome ok, drift (errorText and driftTables name the tables) or error (file missing, changed, corrupt or truncated, restore failed; errorText says which). ok is true only when the outcome is ok. Stored, appended to the audit chain (source RestoreVerification, kind backup) and audited as backup.verify. 404 for an unknown snapshotId. ${BOUND}`,
      method: 'POST',
      path: `${V1}/backups/verify`,
      // A dump or a restore of the whole database: minutes on a large one (docs/backups/README.md).
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      errors: [409],
      body: Type.Object(
        { snapshotId: Type.String({ format: 'uuid', description: 'The id of a snapshot from GET {v1}/backups/snapshots.' }) },
        { additionalProperties: false, examples: [{ snapshotId: exampleSnapshot.id }] },
      ),
      response: { schemaId: 'svc-backup-verify.v1', fields: { ok: Type.Boolean({ description: 'true when the outcome is ok.' }), verification: Verification } },
      example: { schema: 'svc-backup-verify.v1', generatedAt, ok: true, verification: exampleVerification },
      spansEveryToolset: 'a restore verification',
      handler: async ({ body, principal, requestId }) => {
        const verification = await backups.verifySnapshot(body.snapshotId, { call: call(principal, requestId), trigger: 'manual' });
        return { ok: verification.outcome === 'ok', verification };
      },
    }),
    defineEndpoint({
      id: 'backupLadder',
      title: 'Restore verification ladder',
      description:
        'Restore verifications of the last `days` days (newest first, at most `limit`), and per database the last verification, the last ok one, the hours since it and the outcomes of the last 30 days. A token bound to toolsets is refused (403): a restore covers every toolset.',
      method: 'GET',
      path: `${V1}/backups/ladder`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          days: Type.Optional(Type.Integer({ minimum: 1, maximum: LADDER_DAYS_MAX, default: LADDER_DAYS_DEFAULT, description: `The window of rows in days, 1 to ${LADDER_DAYS_MAX}.` })),
          limit: PageLimitParam(LADDER_LIMIT_DEFAULT, LADDER_LIMIT_MAX),
        },
        { examples: [{ days: 30, limit: 50 }] },
      ),
      response: { schemaId: 'svc-backup-ladder.v1', fields: { windowDays: Type.Integer({ minimum: 1 }), rows: Type.Array(Verification), databases: Type.Array(LadderDatabase) } },
      example: {
        schema: 'svc-backup-ladder.v1',
        generatedAt,
        windowDays: 30,
        rows: [exampleVerification],
        databases: [{ database: 'observatory', last: generatedAt, lastOk: generatedAt, hoursSinceLastOk: 0, totals30d: { ok: 12, drift: 0, error: 1 } }],
      },
      spansEveryToolset: 'the restore verification ladder',
      handler: async ({ query }) => backups.ladder(query),
    }),
  ];
}
