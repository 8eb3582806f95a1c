import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, mkdir, rename, rm, stat } from 'node:fs/promises';
import { privateDir } from '../../platform/private-dir.ts';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../platform/config.ts';

/**
 * Where snapshot files live: a directory (OBSERVATORY_BACKUP_DIR, by default DATA_DIR/backups) or
 * an S3-compatible bucket (OBSERVATORY_BACKUP_S3_BUCKET). A dump is first written to a work file
 * under the backup directory, hashed there, then moved (local) or uploaded (S3) under its key.
 */
export type StorageKind = 'local' | 's3';

/** A snapshot file that is not where its record says. */
export class SnapshotFileMissing extends Error {
  constructor(key: string, where: string) {
    super(`snapshot file ${key} is missing from ${where}`);
    this.name = 'SnapshotFileMissing';
  }
}

export interface FetchedFile {
  /** A local file holding the snapshot's bytes. */
  path: string;
  /** Removes the local copy if one was downloaded; the stored file stays. */
  release(): Promise<void>;
}

export interface SnapshotStore {
  readonly kind: StorageKind;
  /** Stores the finished work file under `key`; the work file is gone afterwards. */
  put(key: string, workFile: string): Promise<void>;
  /** The file under `key` as a local path; throws SnapshotFileMissing when there is none. */
  fetch(key: string): Promise<FetchedFile>;
  /** Deletes the file under `key`; a missing one is not an error. */
  delete(key: string): Promise<void>;
}

export interface SnapshotStores {
  /** Where new snapshots go: S3 when configured, otherwise the directory. */
  current: SnapshotStore;
  /** The store a recorded snapshot names, or null when it is not configured any more. */
  byKind(kind: string): SnapshotStore | null;
  /** The backup directory (OBSERVATORY_BACKUP_DIR): the local store's files and the work directory. */
  dir: string;
  /** A directory for work files (dumps being written, downloads being verified). */
  workDir: string;
}


export function createSnapshotStores(backups: Config['backups'], log: FastifyBaseLogger): SnapshotStores {
  const local = localStore(backups.dir);
  const s3 = backups.s3 ? s3Store(backups.s3, join(backups.dir, '.work'), log) : null;
  return {
    current: s3 ?? local,
    byKind: (kind) => (kind === 'local' ? local : kind === 's3' ? s3 : null),
    dir: backups.dir,
    workDir: join(backups.dir, '.work'),
  };
}

function localStore(dir: string): SnapshotStore {
  const root = resolve(dir);
  const pathOf = (key: string) => {
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new Error(`snapshot key ${key} leaves the backup directory`);
    return path;
  };
  return {
    kind: 'local',
    async put(key, workFile) {
      const path = pathOf(key);
      await privateDir(root);
      await privateDir(dirname(path));
      await chmod(workFile, 0o600);
      await rename(workFile, path);
    },
    async fetch(key) {
      const path = pathOf(key);
      try {
        if (!(await stat(path)).isFile()) throw new SnapshotFileMissing(key, root);
      } catch (error) {
        if (error instanceof SnapshotFileMissing) throw error;
        throw new SnapshotFileMissing(key, root);
      }
      return { path, release: async () => {} };
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
  };
}

function s3Store(s3: NonNullable<Config['backups']['s3']>, workDir: string, log: FastifyBaseLogger): SnapshotStore {
  const client = new S3Client({
    // The SDK's own warnings go to the service log rather than to the console.
    logger: {
      trace: () => {},
      debug: () => {},
      info: () => {},
      warn: (...content: unknown[]) => log.warn({ s3: content.map(String).join(' ') }, 'S3 client warning'),
      error: (...content: unknown[]) => log.error({ s3: content.map(String).join(' ') }, 'S3 client error'),
    },
    region: s3.region,
    forcePathStyle: s3.forcePathStyle,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.accessKeyId && s3.secret ? { credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secret } } : {}),
    // Plain signed PUTs: S3-compatible stores (MinIO, s3rver, R2, …) do not all take the SDK's
    // default streaming checksum trailers. The file's own SHA-256 is checked on every verify.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const where = `s3://${s3.bucket}`;
  let downloads = 0;
  return {
    kind: 's3',
    async put(key, workFile) {
      try {
        const { size } = await stat(workFile);
        // Encrypted at rest by the store (SSE-S3, AES-256): a snapshot is the whole database. A
        // bucket policy may insist on it; a store that cannot encrypt refuses the upload, and the
        // snapshot fails (503 backup-failed) rather than lie unencrypted.
        await client.send(
          new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: createReadStream(workFile), ContentLength: size, ServerSideEncryption: 'AES256' }),
        );
      } finally {
        await rm(workFile, { force: true });
      }
    },
    async fetch(key) {
      let body: Readable;
      try {
        const answer = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
        body = answer.Body as Readable;
      } catch (error) {
        const name = (error as { name?: string }).name;
        if (name === 'NoSuchKey' || name === 'NotFound') throw new SnapshotFileMissing(key, where);
        throw error;
      }
      await privateDir(workDir);
      const path = join(workDir, `download-${process.pid}-${Date.now()}-${downloads++}`);
      try {
        await pipeline(body instanceof Readable ? body : Readable.fromWeb(body as never), createWriteStream(path, { mode: 0o600 }));
      } catch (error) {
        await rm(path, { force: true });
        throw error;
      }
      return { path, release: () => rm(path, { force: true }) };
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    },
  };
}
