import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import type { PGlite } from '@electric-sql/pglite';
import { PGlite as PGliteClass } from '@electric-sql/pglite';
import pg from 'pg';
import type { Config } from '../../platform/config.ts';
import type { Database } from '../../platform/db/client.ts';
import { backupDirInside, type EmscriptenFs, packDataDir, unpackDataDir } from './datadir-tar.ts';
import { digestTables, pinOutputSettings, type SqlRunner, type TableDigest } from './hashing.ts';

/**
 * How a snapshot is taken and restored on each driver (docs/backups/README.md):
 * - PostgreSQL server: `pg_dump --format=custom --snapshot=<id>` of a REPEATABLE READ transaction
 *   that exported its snapshot and counts and hashes the tables itself; restored with `pg_restore`
 *   into a temporary database that is always dropped.
 * - PGlite: a tar archive of the data directory's database files (datadir-tar.ts), streamed to a
 *   work file inside the transaction that counts and hashes (PGlite runs one transaction at a
 *   time, so nothing writes in between) and gzipped by zlib afterwards; restored by un-gzipping
 *   and unpacking it as it streams into a scratch directory and opening a new PGlite there.
 */
export interface BackupEngine {
  readonly driver: Database['driver'];
  /** `pg_dump-custom` or `pglite-datadir-tar-gzip`. */
  readonly format: string;
  /** The file name extension of its dumps. */
  readonly extension: string;
  /** Writes a dump to `file` and answers the counts and hashes of exactly what it holds. */
  dump(file: string): Promise<TableDigest>;
  /** Restores `file` into a scratch database, counts and hashes it there, and removes the scratch copy. */
  restoreAndDigest(file: string): Promise<TableDigest>;
}

/** A dump or restore that failed; `message` says why in a sentence an operator can act on. */
export class BackupToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupToolError';
  }
}

export function createBackupEngine(database: Database, backups: Config['backups']): BackupEngine {
  const client = (database.db as unknown as { $client: unknown }).$client;
  return database.driver === 'pglite' ? pgliteEngine(client as PGlite, backups.dir) : serverEngine(serverUrlOf(client), backups);
}

/** The connection string of the service's node-postgres pool. */
export function serverUrlOf(client: unknown): string {
  const url = (client as { options?: { connectionString?: string } }).options?.connectionString;
  if (!url) throw new BackupToolError('the database pool has no connection string to hand to pg_dump');
  return url;
}

// ---------------------------------------------------------------------------------------------
// PGlite

function pgliteEngine(client: PGlite, backupDir: string): BackupEngine {
  // The folder snapshots are written to, when it lies in the data directory (DATA_DIR/backups by
  // default): never packed, whatever it is named.
  const dataDir = typeof client.dataDir === 'string' && !client.dataDir.includes('://') ? client.dataDir : null;
  const excluded = dataDir === null ? null : backupDirInside(dataDir, backupDir);
  return {
    driver: 'pglite',
    format: 'pglite-datadir-tar-gzip',
    extension: 'tar.gz',
    async dump(file) {
      const tar = `${file}.tar`;
      try {
        // One PGlite transaction holds the database: no other statement of the service runs until
        // it ends, so the archive holds exactly what was counted. The data directory is streamed
        // file by file into an uncompressed work file (disk speed), to keep that hold short.
        const digest = await client.transaction(async (tx) => {
          await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
          await pinOutputSettings(tx as SqlRunner);
          const counted = await digestTables(tx as SqlRunner);
          // Data files brought up to date, so a restore replays little WAL.
          await tx.query('CHECKPOINT');
          await packDataDir(client.Module.FS as unknown as EmscriptenFs, PGliteClass.paths.PGDATA, createWriteStream(tar, { mode: 0o600 }), excluded);
          return counted;
        });
        // Compressed after the database is released, streaming, by zlib on libuv's thread pool: level
        // 1 costs about 3% in size against the default and halves the time.
        await pipeline(createReadStream(tar), createGzip({ level: 1 }), createWriteStream(file, { mode: 0o600 }));
        return digest;
      } finally {
        await rm(tar, { force: true });
      }
    },
    async restoreAndDigest(file) {
      const dir = await mkdtemp(join(tmpdir(), 'observatory-restore-'));
      let restored: PGlite | null = null;
      try {
        try {
          // Un-gzipped and unpacked as it streams, into the scratch directory. zlib checks the CRC
          // and length of the whole stream before the unpacking ends, so a damaged file is an error
          // here and PGlite never opens a directory made from one.
          await pipeline(createReadStream(file), createGunzip(), async (source: AsyncIterable<Buffer>) => {
            await unpackDataDir(source, dir);
          });
        } catch (error) {
          throw new BackupToolError(`the snapshot tarball does not decompress or unpack: ${messageOf(error)}`);
        }
        try {
          restored = new PGliteClass(dir);
          await restored.waitReady;
        } catch (error) {
          throw new BackupToolError(`PGlite could not open the restored data directory: ${messageOf(error)}`);
        }
        return await restored.transaction(async (tx) => {
          await pinOutputSettings(tx as SqlRunner);
          return digestTables(tx as SqlRunner);
        });
      } finally {
        await restored?.close().catch(() => {});
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL server

interface Connection {
  /** The URL without its password. */
  url: string;
  /** Environment for the tools: the password as PGPASSWORD, never on a command line. */
  env: NodeJS.ProcessEnv;
}

function connectionFor(serverUrl: string, databaseName?: string): Connection {
  const url = new URL(serverUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  if (databaseName !== undefined) url.pathname = `/${databaseName}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (password !== '') env.PGPASSWORD = password;
  return { url: url.toString(), env };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;
const quoteLiteral = (text: string) => `'${text.replace(/'/g, "''")}'`;

const runnerOf = (client: pg.Client): SqlRunner => ({ query: (text) => client.query(text) as never });

function serverEngine(serverUrl: string, backups: Config['backups']): BackupEngine {
  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    client.on('error', () => {});
    await client.connect();
    return client;
  };
  return {
    driver: 'node-postgres',
    format: 'pg_dump-custom',
    extension: 'pgdump',
    async dump(file) {
      // A connection of its own, without the pool's statement time limit: hashing a large table takes a while.
      const client = await connect(serverUrl);
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const { rows } = await client.query<{ id: string }>('SELECT pg_export_snapshot() AS id');
        const snapshotId = rows[0]!.id;
        await pinOutputSettings(runnerOf(client));
        const target = connectionFor(serverUrl);
        // pg_dump reads the exported snapshot while this transaction, still open, counts and hashes
        // the same snapshot: the record describes exactly what the file holds.
        const [dumped, digested] = await Promise.allSettled([
          runTool(backups.pgDumpPath, 'pg_dump', 'OBSERVATORY_PG_DUMP_PATH', ['--format=custom', `--snapshot=${snapshotId}`, `--file=${file}`, `--dbname=${target.url}`], target.env),
          digestTables(runnerOf(client)),
        ]);
        if (dumped.status === 'rejected') throw dumped.reason;
        if (digested.status === 'rejected') throw digested.reason;
        await client.query('COMMIT');
        return digested.value;
      } finally {
        await client.end().catch(() => {});
      }
    },
    async restoreAndDigest(file) {
      const scratch = `${backups.scratchPrefix}_${randomBytes(8).toString('hex')}`;
      const admin = await connect(serverUrl);
      try {
        const { rows } = await admin.query<{ encoding: string; collate: string; ctype: string }>(
          'SELECT pg_encoding_to_char(encoding) AS encoding, datcollate AS collate, datctype AS ctype FROM pg_database WHERE datname = current_database()',
        );
        const { encoding, collate, ctype } = rows[0]!;
        await admin.query(
          `CREATE DATABASE ${quoteIdent(scratch)} TEMPLATE template0 ENCODING ${quoteLiteral(encoding)} LC_COLLATE ${quoteLiteral(collate)} LC_CTYPE ${quoteLiteral(ctype)}`,
        );
        let failure: unknown = null;
        try {
          const target = connectionFor(serverUrl, scratch);
          await runTool(
            backups.pgRestorePath,
            'pg_restore',
            'OBSERVATORY_PG_RESTORE_PATH',
            ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', `--dbname=${target.url}`, file],
            target.env,
          );
          const scratchUrl = new URL(serverUrl);
          scratchUrl.pathname = `/${scratch}`;
          const restored = await connect(scratchUrl.toString());
          try {
            await restored.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
            await pinOutputSettings(runnerOf(restored));
            const digest = await digestTables(runnerOf(restored));
            await restored.query('COMMIT');
            return digest;
          } finally {
            await restored.end().catch(() => {});
          }
        } catch (error) {
          failure = error;
          throw error;
        } finally {
          // Always: a failed restore must not leave its scratch database behind. A failing drop
          // is reported unless the restore had already failed (that error says more).
          try {
            await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(scratch)} WITH (FORCE)`);
          } catch (error) {
            if (failure === null) throw new BackupToolError(`the scratch database ${scratch} could not be dropped: ${messageOf(error)}`);
          }
        }
      } finally {
        await admin.end().catch(() => {});
      }
    },
  };
}

/** How much of a tool's standard error a failure quotes (its last bytes: where the error is). */
const STDERR_TAIL = 2000;

/** Runs a client tool; rejects with a BackupToolError naming the tool and quoting its error output. */
function runTool(path: string, tool: string, variable: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    const child = spawn(path, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(
        new BackupToolError(
          error.code === 'ENOENT'
            ? `${tool} was not found at "${path}" (${variable}); install the PostgreSQL client tools or set ${variable}`
            : `${tool} could not be started: ${error.message}`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new BackupToolError(`${tool} failed (${signal ? `signal ${signal}` : `exit status ${code}`}): ${stderr.trim() || 'no error output'}`));
    });
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
