import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { actorOf, type AuditLog, type CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Config } from '../../platform/config.ts';
import type { Db } from '../../platform/db/client.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { canonicalJson, sha256Hex } from '../../platform/crypto.ts';
import { assertThat, notFound, ServiceError } from '../../platform/errors.ts';
import { type BackupEngine, BackupToolError } from './engines.ts';
import { driftedTables, rowCountsSha256, type TableDigest } from './hashing.ts';
import * as repo from './repository.ts';
import { privateDir } from '../../platform/private-dir.ts';
import { type FileStores, StoredFileMissing } from '../../platform/storage/files.ts';
import type { BackupTurn } from './turn.ts';

/**
 * Backups (spec A "Backup snapshot", "Restore verification"; B group 5): real snapshots, restores
 * that prove them, and the ladder of verifications per database. docs/backups/README.md explains all of it.
 */

export const SNAPSHOT_LIMIT_DEFAULT = 50;
export const SNAPSHOT_LIMIT_MAX = 500;
export const LADDER_DAYS_DEFAULT = 30;
export const LADDER_DAYS_MAX = 365;
export const LADDER_LIMIT_DEFAULT = 50;
export const LADDER_LIMIT_MAX = 500;
/** `totals30d` of the ladder always counts the last 30 days, whatever `days` is. */
export const TOTALS_DAYS = 30;

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;

export type SnapshotSource = 'manual' | 'provider';
export type VerificationOutcome = 'ok' | 'drift' | 'error';
/** `manual`: POST {v1}/backups/verify; `job`: the backup-verify job or a drill; `bridge`: POST {v1}/backups/bridge/verify. */
export type VerificationTrigger = 'manual' | 'job' | 'bridge';

export interface SnapshotView {
  id: string;
  database: string;
  providerSnapshotId: string;
  takenAt: string;
  observedAt: string;
  retentionUntil: string | null;
  sizeBytes: number;
  rowCountsSha256: string;
  byTable: Record<string, number>;
  source: SnapshotSource;
  // Beyond spec A:
  storage: 'local' | 's3';
  format: 'pg_dump-custom' | 'pglite-datadir-tar-gzip';
  fileSha256: string;
  tableHashes: Record<string, string>;
}

export interface VerificationView {
  id: string;
  snapshotId: string;
  database: string;
  providerSnapshotId: string;
  takenAt: string;
  verifiedAt: string;
  durationMs: number;
  outcome: VerificationOutcome;
  errorText: string | null;
  restoredRowSha256: string | null;
  determinismDigest: string;
  // Beyond spec A:
  driftTables: string[];
  fileSha256: string | null;
  trigger: VerificationTrigger;
}

export interface LadderDatabase {
  database: string;
  last: string | null;
  lastOk: string | null;
  hoursSinceLastOk: number | null;
  totals30d: { ok: number; drift: number; error: number };
}

export interface LadderView {
  windowDays: number;
  rows: VerificationView[];
  databases: LadderDatabase[];
}

export interface BackupService {
  /** The logical database name this instance snapshots (OBSERVATORY_BACKUP_DATABASE). */
  readonly database: string;
  /**
   * Dumps the database, counts and hashes it in the same consistent view, stores the file and
   * records the snapshot (audited as `backup.snapshot`). A dump that cannot be made is a 503
   * `backup-failed` naming the cause; nothing is recorded then. Takes the deployment's backup turn
   * (turn.ts): 409 `conflict` while another snapshot or verification runs, unless `wait`.
   */
  takeSnapshot(options?: { source?: SnapshotSource; call?: CallContext | null; wait?: boolean }): Promise<SnapshotView>;
  /**
   * Restores the snapshot into a scratch database, recounts and re-hashes it and compares with the
   * record; stores the verification and appends it to the audit chain (source RestoreVerification),
   * plus the operator row `backup.verify` when `call` is given. 404 for an unknown snapshot. Takes
   * the backup turn like takeSnapshot.
   */
  verifySnapshot(snapshotId: string, options?: { call?: CallContext | null; trigger?: VerificationTrigger; wait?: boolean }): Promise<VerificationView>;
  /**
   * Runs `work` holding the deployment's backup turn, so what it does (snapshots, verifications,
   * checks before them) is not interleaved with another's. 409 `conflict` when taken, unless `wait`.
   */
  exclusive<T>(work: () => Promise<T>, options: { wait: boolean }): Promise<T>;
  /** When the newest verification with this trigger was stored, or null. */
  lastVerifiedAt(trigger: VerificationTrigger): Promise<Date | null>;
  /** The newest verification and the newest that ended ok (the compliance predicate restore-verified-7d). */
  latestVerifications(): Promise<{ latest: repo.VerificationRow | null; lastOk: repo.VerificationRow | null }>;
  /** The newest verification of each database (at most `limit` databases, by name); what the drift inbox reads. */
  latestVerificationPerDatabase(limit: number): Promise<VerificationView[]>;
  /** The newest snapshot of a database (this instance's own when not named), or null. */
  latestSnapshot(database?: string): Promise<SnapshotView | null>;
  /** Snapshots newest first. */
  listSnapshots(filter?: { database?: string | undefined; limit?: number | undefined }): Promise<SnapshotView[]>;
  /** Deletes snapshots (file, then row) whose retention ended at or before `now`. */
  expireSnapshots(now: Date): Promise<{ expired: number; failed: number }>;
  ladder(query: { days?: number | undefined; limit?: number | undefined }): Promise<LadderView>;
}

export interface BackupDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  config: Config['backups'];
  engine: BackupEngine;
  /** The service's file store (platform/storage/files.ts); snapshots keep their files under `<database>/`. */
  stores: FileStores;
  turn: BackupTurn;
}

export function toSnapshotView(row: repo.SnapshotRow): SnapshotView {
  return {
    id: row.id,
    database: row.database,
    providerSnapshotId: row.providerSnapshotId,
    takenAt: row.takenAt.toISOString(),
    observedAt: row.observedAt.toISOString(),
    retentionUntil: row.retentionUntil?.toISOString() ?? null,
    sizeBytes: row.sizeBytes,
    rowCountsSha256: row.rowCountsSha256,
    byTable: row.byTable,
    source: row.source as SnapshotSource,
    storage: row.storage as SnapshotView['storage'],
    format: row.format as SnapshotView['format'],
    fileSha256: row.fileSha256,
    tableHashes: row.tableHashes,
  };
}

export function toVerificationView(row: repo.VerificationRow): VerificationView {
  return {
    id: row.id,
    snapshotId: row.snapshotId,
    database: row.database,
    providerSnapshotId: row.providerSnapshotId,
    takenAt: row.takenAt.toISOString(),
    verifiedAt: row.verifiedAt.toISOString(),
    durationMs: row.durationMs,
    outcome: row.outcome as VerificationOutcome,
    errorText: row.errorText,
    restoredRowSha256: row.restoredRowSha256,
    determinismDigest: row.determinismDigest,
    driftTables: row.driftTables,
    fileSha256: row.fileSha256,
    trigger: row.trigger as VerificationTrigger,
  };
}

/**
 * determinismDigest: SHA-256 of the RFC 8785 canonical JSON of what a verification found:
 * {snapshotId, fileSha256 (as read; null if unreadable), byTable and tableHashes (as restored;
 * null when nothing was restored)}. The same snapshot file restored again gives the same digest.
 */
export function determinismDigestOf(snapshotId: string, fileSha256: string | null, restored: TableDigest | null): string {
  return sha256Hex(canonicalJson({ snapshotId, fileSha256, byTable: restored?.byTable ?? null, tableHashes: restored?.tableHashes ?? null }));
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** `20261125T023000Z`: a takenAt that sorts and reads well in a file name. */
const compactTime = (at: Date) => at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

export function createBackupService(deps: BackupDeps): BackupService {
  const { db, clock, audit, config, engine, stores, turn } = deps;

  async function takeSnapshot(options: { source?: SnapshotSource; call?: CallContext | null; wait?: boolean } = {}): Promise<SnapshotView> {
    return turn.run(() => snapshotNow(options), { wait: options.wait ?? false });
  }

  async function snapshotNow(options: { source?: SnapshotSource; call?: CallContext | null }): Promise<SnapshotView> {
    const call = options.call ?? null;
    const source = options.source ?? (call ? 'manual' : 'provider');
    const id = randomUUID();
    const takenAt = clock.now();
    const store = stores.current;
    const key = store.keyOf(`${config.database}/${compactTime(takenAt)}-${id}.${engine.extension}`);
    const work = join(stores.workDir, `${id}.${engine.extension}.partial`);
    let digest: TableDigest;
    let fileSha256: string;
    let sizeBytes: number;
    try {
      // For the service's user only: a snapshot holds the whole database.
      await privateDir(stores.dir);
      await privateDir(stores.workDir);
      digest = await engine.dump(work);
      await chmod(work, 0o600);
      fileSha256 = await sha256File(work);
      sizeBytes = (await stat(work)).size;
      await store.put(key, work);
    } catch (error) {
      await rm(work, { force: true });
      throw new ServiceError(503, 'backup-failed', `No snapshot was taken: ${messageOf(error)}`);
    }
    const retentionUntil = config.retentionDays > 0 ? new Date(takenAt.getTime() + config.retentionDays * DAY_MS) : null;
    const row: repo.SnapshotRow = {
      id,
      database: config.database,
      providerSnapshotId: key,
      storage: store.kind,
      format: engine.format,
      takenAt,
      observedAt: clock.now(),
      retentionUntil,
      sizeBytes,
      rowCountsSha256: rowCountsSha256(digest.byTable),
      byTable: digest.byTable,
      tableHashes: digest.tableHashes,
      fileSha256,
      source,
    };
    try {
      await withTransaction(db, async (tx) => {
        await repo.insertSnapshot(tx, row);
        await audit.record(tx, {
          verb: 'backup.snapshot',
          target: id,
          surface: call ? 'api' : 'job',
          actor: call ? actorOf(call.principal) : null,
          after: { database: row.database, providerSnapshotId: key, storage: store.kind, sizeBytes, fileSha256, rowCountsSha256: row.rowCountsSha256, source },
          requestId: call?.requestId ?? null,
        });
      });
    } catch (error) {
      // No record, no file: a snapshot nobody can find is only a cost.
      await store.delete(key).catch(() => {});
      throw error;
    }
    return toSnapshotView(row);
  }

  /** Reads, checks and restores the file; answers what was found, never throws for a bad file. */
  async function restoreOf(snapshot: repo.SnapshotRow): Promise<{ fileSha256: string | null; restored: TableDigest | null; errorText: string | null }> {
    let fileSha256: string | null = null;
    try {
      const store = stores.byKind(snapshot.storage);
      if (store === null) return { fileSha256, restored: null, errorText: `the snapshot is stored in ${snapshot.storage}, which this instance has no configuration for` };
      if (snapshot.format !== engine.format) {
        return { fileSha256, restored: null, errorText: `a ${snapshot.format} snapshot cannot be restored by the ${engine.driver} driver (${engine.format})` };
      }
      const file = await store.fetch(snapshot.providerSnapshotId);
      try {
        fileSha256 = await sha256File(file.path);
        // First layer: the bytes are the ones recorded. The restore itself is the second layer.
        if (fileSha256 !== snapshot.fileSha256) {
          return { fileSha256, restored: null, errorText: `the snapshot file's SHA-256 is ${fileSha256}, its record says ${snapshot.fileSha256}: the file was changed or damaged` };
        }
        return { fileSha256, restored: await engine.restoreAndDigest(file.path), errorText: null };
      } finally {
        await file.release();
      }
    } catch (error) {
      const text =
        error instanceof BackupToolError
          ? `restore failed: ${error.message}`
          : error instanceof StoredFileMissing
            ? `snapshot file ${error.key} is missing from ${error.where}`
            : messageOf(error);
      return { fileSha256, restored: null, errorText: text };
    }
  }

  async function verifySnapshot(snapshotId: string, options: { call?: CallContext | null; trigger?: VerificationTrigger; wait?: boolean } = {}): Promise<VerificationView> {
    assertThat(await repo.snapshotById(db, snapshotId), notFound(`No backup snapshot has id ${snapshotId}.`));
    return turn.run(() => verifyNow(snapshotId, options), { wait: options.wait ?? false });
  }

  async function verifyNow(snapshotId: string, options: { call?: CallContext | null; trigger?: VerificationTrigger }): Promise<VerificationView> {
    const call = options.call ?? null;
    // Read again holding the turn: retention may have deleted it meanwhile.
    const snapshot = await repo.snapshotById(db, snapshotId);
    assertThat(snapshot, notFound(`No backup snapshot has id ${snapshotId}.`));
    const started = performance.now();
    const found = await restoreOf(snapshot);
    const durationMs = Math.round(performance.now() - started);
    let outcome: VerificationOutcome = 'error';
    let errorText = found.errorText;
    let drift: string[] = [];
    if (found.restored) {
      drift = driftedTables({ byTable: snapshot.byTable, tableHashes: snapshot.tableHashes }, found.restored);
      outcome = drift.length === 0 ? 'ok' : 'drift';
      if (drift.length > 0) errorText = `${drift.length} table(s) differ from the snapshot's record: ${drift.join(', ')}`;
    }
    const row: repo.VerificationRow = {
      id: randomUUID(),
      snapshotId: snapshot.id,
      database: snapshot.database,
      providerSnapshotId: snapshot.providerSnapshotId,
      takenAt: snapshot.takenAt,
      verifiedAt: clock.now(),
      durationMs,
      outcome,
      errorText,
      driftTables: drift,
      restoredRowSha256: found.restored ? rowCountsSha256(found.restored.byTable) : null,
      determinismDigest: determinismDigestOf(snapshot.id, found.fileSha256, found.restored),
      fileSha256: found.fileSha256,
      trigger: options.trigger ?? (call ? 'manual' : 'job'),
    };
    const view = toVerificationView(row);
    await withTransaction(db, async (tx) => {
      await repo.insertVerification(tx, row);
      await audit.appendFact(tx, { source: 'RestoreVerification', sourceId: row.id, kind: 'backup', actor: call?.principal.username ?? null, payload: view });
      if (call) {
        await audit.record(tx, {
          verb: 'backup.verify',
          target: snapshot.id,
          surface: 'api',
          actor: actorOf(call.principal),
          after: { verificationId: row.id, outcome, determinismDigest: row.determinismDigest, driftTables: drift },
          requestId: call.requestId,
        });
      }
    });
    return view;
  }

  return {
    database: config.database,
    takeSnapshot,
    verifySnapshot,
    exclusive: (work, options) => turn.run(work, options),
    lastVerifiedAt: (trigger) => repo.lastVerifiedAt(db, trigger),
    latestVerifications: () => repo.latestVerifications(db),
    latestVerificationPerDatabase: async (limit) => (await repo.latestVerificationPerDatabase(db, limit)).map(toVerificationView),
    async latestSnapshot(database = config.database) {
      const [row] = await repo.listSnapshots(db, { database, limit: 1 });
      return row ? toSnapshotView(row) : null;
    },
    async listSnapshots(filter = {}) {
      const rows = await repo.listSnapshots(db, { database: filter.database, limit: filter.limit ?? SNAPSHOT_LIMIT_DEFAULT });
      return rows.map(toSnapshotView);
    },
    async expireSnapshots(now) {
      let expired = 0;
      let failed = 0;
      for (const row of await repo.expiredSnapshots(db, now)) {
        const store = stores.byKind(row.storage);
        try {
          // The file first: a row without its file would still be listed as a backup.
          if (store) await store.delete(row.providerSnapshotId);
        } catch {
          failed++;
          continue;
        }
        await withTransaction(db, async (tx) => {
          if (!(await repo.deleteSnapshot(tx, row.id))) return;
          expired++;
          await audit.record(tx, {
            verb: 'backup.expire',
            target: row.id,
            surface: 'job',
            actor: null,
            before: { database: row.database, providerSnapshotId: row.providerSnapshotId, takenAt: row.takenAt.toISOString(), retentionUntil: row.retentionUntil?.toISOString() ?? null },
          });
        });
      }
      return { expired, failed };
    },
    async ladder(query) {
      const now = clock.now();
      const windowDays = query.days ?? LADDER_DAYS_DEFAULT;
      const rows = await repo.listVerifications(db, { since: new Date(now.getTime() - windowDays * DAY_MS), limit: query.limit ?? LADDER_LIMIT_DEFAULT });
      const perDatabase = await repo.ladderByDatabase(db, new Date(now.getTime() - TOTALS_DAYS * DAY_MS));
      if (!perDatabase.some((d) => d.database === config.database)) {
        perDatabase.push({ database: config.database, last: null, lastOk: null, ok: 0, drift: 0, error: 0 });
        perDatabase.sort((a, b) => (a.database < b.database ? -1 : a.database > b.database ? 1 : 0));
      }
      return {
        windowDays,
        rows: rows.map(toVerificationView),
        databases: perDatabase.map((d) => ({
          database: d.database,
          last: d.last?.toISOString() ?? null,
          lastOk: d.lastOk?.toISOString() ?? null,
          hoursSinceLastOk: d.lastOk ? Math.max(0, Math.round(((now.getTime() - d.lastOk.getTime()) / HOUR_MS) * 10) / 10) : null,
          totals30d: { ok: d.ok, drift: d.drift, error: d.error },
        })),
      };
    },
  };
}
