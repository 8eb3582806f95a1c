import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { chmod, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { privateDir } from '../private-dir.ts';

/**
 * The service's file store: a directory (OBSERVATORY_BACKUP_DIR, by default DATA_DIR/backups) or
 * an S3-compatible bucket (OBSERVATORY_BACKUP_S3_BUCKET). Backup snapshots and compliance evidence
 * bundles both keep their files here, each under keys of its own (docs/backups/README.md, "Where files
 * go"); a record in the database names every file by its full key, and only that record's owner
 * ever deletes it, so one feature's retention never touches another's files.
 *
 * Large files (a dump) are first written to a work file under the directory and handed over with
 * `put`; small ones (evidence) are written from memory with `putBytes`.
 */
export type StorageKind = 'local' | 's3';

/** A stored file that is not where its record says. */
export class StoredFileMissing extends Error {
  constructor(
    readonly key: string,
    readonly where: string,
  ) {
    super(`stored file ${key} is missing from ${where}`);
    this.name = 'StoredFileMissing';
  }
}

export interface FetchedFile {
  /** A local file holding the stored bytes. */
  path: string;
  /** Removes the local copy if one was downloaded; the stored file stays. */
  release(): Promise<void>;
}

export interface FileStore {
  readonly kind: StorageKind;
  /**
   * The full key of `relative` in this store: on S3 with OBSERVATORY_BACKUP_S3_PREFIX in front,
   * in the directory as it is. Records keep full keys, so a later change of prefix leaves old
   * files readable.
   */
  keyOf(relative: string): string;
  /** Stores the finished work file under `key`; the work file is gone afterwards. */
  put(key: string, workFile: string): Promise<void>;
  /** Stores `bytes` under `key`, replacing any file there. */
  putBytes(key: string, bytes: Buffer, contentType: string): Promise<void>;
  /** The file under `key` as a local path; throws StoredFileMissing when there is none. */
  fetch(key: string): Promise<FetchedFile>;
  /** The bytes under `key`, for files small enough to hold in memory; throws StoredFileMissing when there is none. */
  read(key: string): Promise<Buffer>;
  /** Deletes the file under `key`; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Deletes the files under `keys` (a missing one is not an error), and in the directory the
   * folders they leave empty: for a set of files that has a folder of its own (an evidence bundle).
   */
  deleteFiles(keys: readonly string[]): Promise<void>;
}

export interface FileStores {
  /** Where new files go: S3 when configured, otherwise the directory. */
  current: FileStore;
  /** The store a record names, or null when it is not configured any more. */
  byKind(kind: string): FileStore | null;
  /** The backup directory (OBSERVATORY_BACKUP_DIR): the local store's files and the work directory. */
  dir: string;
  /** A directory for work files (dumps being written, downloads being verified). */
  workDir: string;
}

/** The stores configured by the backups block of the configuration (`Config['backups']`). */
export function createFileStores(config: Config['backups'], log: FastifyBaseLogger): FileStores {
  const workDir = join(config.dir, '.work');
  const local = localStore(config.dir);
  const s3 = config.s3 ? s3Store(config.s3, workDir, log) : null;
  return {
    current: s3 ?? local,
    byKind: (kind) => (kind === 'local' ? local : kind === 's3' ? s3 : null),
    dir: config.dir,
    workDir,
  };
}

function localStore(dir: string): FileStore {
  const root = resolve(dir);
  const pathOf = (key: string) => {
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new Error(`file key ${key} leaves the storage directory`);
    return path;
  };
  return {
    kind: 'local',
    keyOf: (relative) => relative,
    async put(key, workFile) {
      const path = pathOf(key);
      await privateDir(root);
      await privateDir(dirname(path));
      await chmod(workFile, 0o600);
      await rename(workFile, path);
    },
    async putBytes(key, bytes) {
      const path = pathOf(key);
      await privateDir(root);
      await privateDir(dirname(path));
      // Written beside its place and renamed: a reader never sees half a file.
      const partial = `${path}.${randomUUID()}.partial`;
      try {
        await writeFile(partial, bytes, { mode: 0o600 });
        await rename(partial, path);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
    },
    async fetch(key) {
      const path = pathOf(key);
      try {
        if (!(await stat(path)).isFile()) throw new StoredFileMissing(key, root);
      } catch (error) {
        if (error instanceof StoredFileMissing) throw error;
        throw new StoredFileMissing(key, root);
      }
      return { path, release: async () => {} };
    },
    async read(key) {
      try {
        return await readFile(pathOf(key));
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') throw new StoredFileMissing(key, root);
        throw error;
      }
    },
    async delete(key) {
      await rm(pathOf(key), { force: true });
    },
    async deleteFiles(keys) {
      const paths = keys.map(pathOf);
      for (const path of paths) await rm(path, { force: true });
      // The deepest folders first; one still holding something (or gone) stays as it is.
      const folders = [...new Set(paths.flatMap((path) => foldersBelow(root, path)))].sort((a, b) => b.length - a.length);
      for (const folder of folders) await rmdir(folder).catch(() => {});
    },
  };
}

/** The folders between `root` (excluded) and the file at `path`. */
function foldersBelow(root: string, path: string): string[] {
  const out: string[] = [];
  for (let folder = dirname(path); folder.startsWith(root + sep); folder = dirname(folder)) out.push(folder);
  return out;
}

function s3Store(s3: NonNullable<Config['backups']['s3']>, workDir: string, log: FastifyBaseLogger): FileStore {
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
    // default streaming checksum trailers. Every file's own SHA-256 is recorded and checked by its reader.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const where = `s3://${s3.bucket}`;
  let downloads = 0;
  const missing = (error: unknown) => {
    const name = (error as { name?: string }).name;
    return name === 'NoSuchKey' || name === 'NotFound';
  };
  async function body(key: string): Promise<Readable> {
    try {
      const answer = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      const stream = answer.Body as Readable;
      return stream instanceof Readable ? stream : Readable.fromWeb(stream as never);
    } catch (error) {
      if (missing(error)) throw new StoredFileMissing(key, where);
      throw error;
    }
  }
  // Encrypted at rest by the store (SSE-S3, AES-256): a snapshot is the whole database, evidence
  // describes its controls. A bucket policy may insist on it; a store that cannot encrypt refuses
  // the upload, and the write fails rather than lie unencrypted.
  const ENCRYPTION = { ServerSideEncryption: 'AES256' } as const;
  return {
    kind: 's3',
    keyOf: (relative) => `${s3.prefix}${relative}`,
    async put(key, workFile) {
      try {
        const { size } = await stat(workFile);
        await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: createReadStream(workFile), ContentLength: size, ...ENCRYPTION }));
      } finally {
        await rm(workFile, { force: true });
      }
    },
    async putBytes(key, bytes, contentType) {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: bytes, ContentLength: bytes.length, ContentType: contentType, ...ENCRYPTION }));
    },
    async fetch(key) {
      const stream = await body(key);
      await privateDir(workDir);
      const path = join(workDir, `download-${process.pid}-${Date.now()}-${downloads++}`);
      try {
        await pipeline(stream, createWriteStream(path, { mode: 0o600 }));
      } catch (error) {
        await rm(path, { force: true });
        throw error;
      }
      return { path, release: () => rm(path, { force: true }) };
    },
    async read(key) {
      const chunks: Buffer[] = [];
      for await (const chunk of await body(key)) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks);
    },
    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    },
    async deleteFiles(keys) {
      for (const key of keys) await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key }));
    },
  };
}
