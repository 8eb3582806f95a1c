import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import { sha256Hex } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, notFound, ServiceError } from '../../../platform/errors.ts';
import { type FileStores, StoredFileMissing } from '../../../platform/storage/files.ts';
import type { ComplianceReads } from '../frameworks/views.ts';
import { type ArtifactKind, artifactName, type BundleMeta, CONTENT_TYPES, controlsCsv, MANIFEST_NAME, manifestText, snapshotJson } from './artifacts.ts';
import { summaryPdf } from './pdf.ts';
import * as repo from './repository.ts';

/**
 * Evidence bundles (docs/compliance/README.md, "Evidence bundles"): a framework as read now, written as a
 * JSON snapshot, a CSV of its controls and a PDF summary, with a manifest of their SHA-256 digests,
 * into the service's file store (the one backups use), and handed out as signed, expiring links.
 */

/** How long a download link of a bundle's file stays good: long enough to fetch the files, short enough that a leaked link soon stops working. */
export const EVIDENCE_LINK_TTL_SEC = 15 * 60;
/** Bundles older than this are deleted when the next one is made. */
export const BUNDLE_KEEP_DAYS = 30;
/** At most this many bundles are kept; the oldest beyond it are deleted when the next one is made. */
export const BUNDLE_KEEP_MAX = 100;
/** Where a bundle's files live in the store (under OBSERVATORY_BACKUP_S3_PREFIX on S3): `compliance-evidence/<bundleId>/<name>`. */
export const EVIDENCE_KEY_ROOT = 'compliance-evidence';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface ArtifactView {
  kind: ArtifactKind;
  name: string;
  contentType: string;
  bytes: number;
  sha256: string;
  url: string;
  expiresAt: string;
}

export interface BundleView {
  bundleId: string;
  framework: string;
  createdAt: string;
  controlCount: number;
  storage: 'local' | 's3';
  artifacts: ArtifactView[];
  manifestText: string;
  manifestSha256: string;
  manifestUrl: string;
  /** Bundles deleted by this call because they were past their keep. */
  expiredBundles: number;
}

/** A bundle file as served: its bytes (checked against the recorded digest) and how to label them. */
export interface EvidenceFile {
  name: string;
  contentType: string;
  sha256: string;
  bytes: Buffer;
}

/** A signed link to one file of a bundle. */
export type EvidenceLink = (bundleId: string, name: string) => { url: string; expiresAt: Date };

export interface BundleService {
  /** Builds, stores and records a bundle of `framework`; 404 for an unknown framework. Audited as compliance.bundle. */
  create(framework: string, call: CallContext): Promise<BundleView>;
  /** One stored file of a bundle; 404 when the bundle, the name or the stored file is unknown. */
  file(bundleId: string, name: string): Promise<EvidenceFile>;
}

export interface BundleDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  reads: ComplianceReads;
  files: FileStores;
  link: EvidenceLink;
  keep?: { days: number; max: number };
}

export function createBundleService(deps: BundleDeps): BundleService {
  const { db, clock, audit, reads, files, link } = deps;
  const keep = deps.keep ?? { days: BUNDLE_KEEP_DAYS, max: BUNDLE_KEEP_MAX };

  /** Deletes bundles past their keep: files first (a row without files would still be listed), then the row. */
  async function expire(call: CallContext): Promise<number> {
    let expired = 0;
    for (const row of await repo.bundlesPastKeep(db, new Date(clock.now().getTime() - keep.days * DAY_MS), keep.max)) {
      const store = files.byKind(row.storageKind);
      try {
        if (store) await store.deleteFiles(row.files.map((file) => file.key));
      } catch {
        continue;
      }
      await withTransaction(db, async (tx) => {
        if (!(await repo.deleteBundle(tx, row.id))) return;
        expired++;
        await audit.record(tx, {
          verb: 'compliance.bundle-expire',
          target: row.id,
          surface: 'api',
          actor: actorOf(call.principal),
          before: { framework: row.framework, createdAt: row.createdAt.toISOString(), manifestSha256: row.manifestSha256 },
          requestId: call.requestId,
        });
      });
    }
    return expired;
  }

  async function create(framework: string, call: CallContext): Promise<BundleView> {
    const view = await reads.framework(framework);
    const posture = (await reads.posture()).find((p) => p.framework === view.framework) ?? null;
    const meta: BundleMeta = { bundleId: randomUUID(), createdAt: clock.now() };
    const made: { kind: ArtifactKind; bytes: Buffer }[] = [
      { kind: 'json', bytes: snapshotJson(view, posture, meta) },
      { kind: 'csv', bytes: controlsCsv(view) },
      { kind: 'pdf', bytes: await summaryPdf(view, posture, meta) },
    ];
    const store = files.current;
    const fileOf = (name: string, contentType: string, bytes: Buffer): repo.StoredFile => ({
      name,
      key: store.keyOf(`${EVIDENCE_KEY_ROOT}/${meta.bundleId}/${name}`),
      contentType,
      bytes: bytes.length,
      sha256: sha256Hex(bytes),
    });
    const artifacts = made.map((a) => ({ ...a, file: fileOf(artifactName(view.framework, a.kind), CONTENT_TYPES[a.kind], a.bytes) }));
    const manifest = manifestText(view.framework, meta, artifacts.map((a) => a.file));
    const manifestBytes = Buffer.from(manifest, 'utf8');
    const manifestFile = fileOf(MANIFEST_NAME, CONTENT_TYPES.manifest, manifestBytes);
    const stored = [...artifacts.map((a) => ({ file: a.file, bytes: a.bytes })), { file: manifestFile, bytes: manifestBytes }];
    const removeStored = () => store.deleteFiles(stored.map((s) => s.file.key)).catch(() => {});

    try {
      for (const { file, bytes } of stored) await store.putBytes(file.key, bytes, file.contentType);
    } catch (error) {
      await removeStored();
      throw new ServiceError(503, 'bundle-failed', `No bundle was made: its files could not be stored (${error instanceof Error ? error.message : String(error)}).`);
    }
    const row: repo.BundleRow = {
      id: meta.bundleId,
      framework: view.framework,
      storageKind: store.kind,
      files: stored.map((s) => s.file),
      manifestText: manifest,
      manifestSha256: manifestFile.sha256,
      controlCount: view.controls.length,
      createdBy: call.principal.username,
      createdAt: meta.createdAt,
    };
    try {
      await withTransaction(db, async (tx) => {
        await repo.insertBundle(tx, row);
        await audit.record(tx, {
          verb: 'compliance.bundle',
          target: row.id,
          surface: 'api',
          actor: actorOf(call.principal),
          after: { framework: row.framework, storage: row.storageKind, controlCount: row.controlCount, manifestSha256: row.manifestSha256, files: row.files.map(({ name, bytes, sha256 }) => ({ name, bytes, sha256 })) },
          requestId: call.requestId,
        });
      });
    } catch (error) {
      // No record, no files: a bundle nobody can find is only a cost.
      await removeStored();
      throw error;
    }
    // The bundle is made and recorded: a failed sweep of old ones must not answer an error that
    // invites a retry (a second bundle). The next bundle call sweeps again.
    const expiredBundles = await expire(call).catch(() => 0);

    const linked = (name: string) => link(row.id, name);
    return {
      bundleId: row.id,
      framework: row.framework,
      createdAt: meta.createdAt.toISOString(),
      controlCount: row.controlCount,
      storage: store.kind,
      artifacts: artifacts.map(({ kind, file }) => {
        const { url, expiresAt } = linked(file.name);
        return { kind, name: file.name, contentType: file.contentType, bytes: file.bytes, sha256: file.sha256, url, expiresAt: expiresAt.toISOString() };
      }),
      manifestText: manifest,
      manifestSha256: manifestFile.sha256,
      manifestUrl: linked(MANIFEST_NAME).url,
      expiredBundles,
    };
  }

  async function file(bundleId: string, name: string): Promise<EvidenceFile> {
    const unknown = notFound(`Bundle ${bundleId} has no file ${name}: the bundle is unknown or was deleted after ${keep.days} days.`);
    const row = await repo.bundleById(db, bundleId);
    assertThat(row, unknown);
    const entry = row.files.find((f) => f.name === name);
    assertThat(entry, unknown);
    const store = files.byKind(row.storageKind);
    assertThat(store, notFound(`Bundle ${bundleId} is stored in ${row.storageKind}, which this instance has no configuration for.`));
    let bytes: Buffer;
    try {
      bytes = await store.read(entry.key);
    } catch (error) {
      if (error instanceof StoredFileMissing) throw notFound(`The file ${name} of bundle ${bundleId} is missing from its storage.`);
      throw error;
    }
    // Evidence must be what was recorded: a changed file is refused, not served.
    const sha256 = sha256Hex(bytes);
    if (sha256 !== entry.sha256) {
      throw new ServiceError(409, 'evidence-altered', `The stored file ${name} of bundle ${bundleId} no longer matches its recorded SHA-256 (${entry.sha256}); it was changed or damaged in storage.`);
    }
    return { name, contentType: entry.contentType, sha256, bytes };
  }

  return { create, file };
}
