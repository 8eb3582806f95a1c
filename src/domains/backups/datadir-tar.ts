import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import type { Writable } from 'node:stream';
import { extract, type Extract, type Header, type Pack, pack } from 'tar-stream';

/**
 * The PGlite snapshot's archive (docs/backups/README.md, "What a snapshot is"): a POSIX ustar archive of
 * the database's data directory, written entry by entry and read back entry by entry, so neither
 * side ever holds more than one chunk of one file in memory, whatever the database's size. The tar
 * format itself (headers, checksums, padding, long names) is tar-stream's; this module chooses what
 * goes in, feeds it at the pace the other side takes it, and checks what comes out.
 *
 * Only what PostgreSQL's data directory is made of is packed (and unpacked): `PG_VERSION`, `base`,
 * `global`, the `pg_*` directories and the `postgresql*.conf` files at the top level. Anything else
 * that lies in the directory — the backup folder, which by default is `DATA_DIR/backups`, so each
 * snapshot used to pack every earlier one; the lock file `postmaster.pid`; files an operator put
 * there — is not the database and is left out. Inside, the rules of PostgreSQL's own base backup
 * apply: temporary files (`pgsql_tmp*`) and relation-cache init files (`pg_internal.init`) are left
 * out, and the directories whose contents PostgreSQL clears at start-up are packed empty.
 */

/** Top-level entries of a PostgreSQL data directory besides the `pg_*` ones. */
const TOP_LEVEL = new Set(['PG_VERSION', 'base', 'global', 'postgresql.conf', 'postgresql.auto.conf']);
/** Directories packed without their contents (PostgreSQL's basebackup.c, excludeDirContents). */
const EMPTY_DIRS = new Set(['pg_stat_tmp', 'pg_replslot', 'pg_dynshmem', 'pg_notify', 'pg_serial', 'pg_snapshots', 'pg_subtrans']);

/**
 * Whether the entry at `path` (relative to the data directory, `/`-separated) belongs in a
 * snapshot. `excluded` names one more relative path to leave out (the backup folder, when it lies
 * inside the data directory under a name the rules would otherwise take).
 */
export function isDatabaseEntry(path: string, excluded: string | null = null): boolean {
  const parts = path.split('/');
  const top = parts[0]!;
  if (!TOP_LEVEL.has(top) && !top.startsWith('pg_')) return false;
  if (excluded !== null && (path === excluded || path.startsWith(`${excluded}/`))) return false;
  if (parts.length > 1 && EMPTY_DIRS.has(top)) return false;
  return !parts.some((part) => part.startsWith('pgsql_tmp') || part === 'pg_internal.init');
}

/**
 * The backup folder relative to the data directory when it lies inside it (`backups` by default),
 * or null. Used to leave it out even under a name like `pg_backups`.
 */
export function backupDirInside(dataDir: string, backupDir: string): string | null {
  const rel = relative(resolve(dataDir), resolve(backupDir));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).join('/');
}

/** The parts of Emscripten's file system (PGlite's `Module.FS`) the packer reads. */
export interface EmscriptenFs {
  readdir(path: string): string[];
  lstat(path: string): { mode: number; size: number; mtime: Date | number };
  isDir(mode: number): boolean;
  isFile(mode: number): boolean;
  open(path: string, flags: string): unknown;
  read(stream: unknown, buffer: Uint8Array, offset: number, length: number, position: number): number;
  close(stream: unknown): void;
}

/** Bytes read from a file at a time: the most the packer holds of any file. */
const CHUNK = 1024 * 1024;

export interface PackStats {
  files: number;
  directories: number;
  bytes: number;
}

/** Owner named in every entry, as PostgreSQL's own tools do. */
const OWNER = { uname: 'postgres', gname: 'postgres' };

/**
 * Writes the data directory at `root` of `fs` to `out` as a tar archive, respecting `out`'s
 * back-pressure. Entries are sorted, so the same directory gives the same archive. Symbolic links
 * are not followed (PGlite's data directory has none). `out` is ended, and closed when this resolves.
 */
export async function packDataDir(fs: EmscriptenFs, root: string, out: Writable, excluded: string | null = null): Promise<PackStats> {
  const stats: PackStats = { files: 0, directories: 0, bytes: 0 };
  const archive = pack();
  // The archive flows to `out` as fast as `out` takes it (tar-stream's pipe waits for 'drain');
  // `piped` settles when `out` has closed, or with the first error of either (a full disk). That
  // error may come while the walk is between awaits, so it is marked handled at once; the walk
  // meets it again through the entry it is writing.
  const piped = new Promise<void>((done, fail) => archive.pipe(out, (error) => (error ? fail(error) : done())));
  piped.catch(() => {});
  const walk = async (dir: string) => {
    for (const name of fs.readdir(`${root}/${dir}`.replace(/\/$/, '')).filter((n) => n !== '.' && n !== '..').sort()) {
      const path = dir === '' ? name : `${dir}/${name}`;
      if (!isDatabaseEntry(path, excluded)) continue;
      const full = `${root}/${path}`;
      const stat = fs.lstat(full);
      const mtime = new Date(stat.mtime);
      if (fs.isDir(stat.mode)) {
        await addEntry(archive, { name: `${path}/`, type: 'directory', mode: 0o700, mtime, ...OWNER });
        stats.directories++;
        if (!EMPTY_DIRS.has(path)) await walk(path);
      } else if (fs.isFile(stat.mode)) {
        await addEntry(archive, { name: path, type: 'file', mode: 0o600, size: stat.size, mtime, ...OWNER }, chunksOf(fs, full, path, stat.size));
        stats.files++;
        stats.bytes += stat.size;
      }
    }
  };
  try {
    await walk('');
    archive.finalize();
    await piped;
  } catch (error) {
    archive.destroy(error as Error);
    out.destroy();
    throw error;
  }
  return stats;
}

type Entry = ReturnType<Pack['entry']>;

/** Adds one entry to `archive`, writing its data as the archive is read on. */
async function addEntry(archive: Pack, header: Partial<Header> & { name: string }, data: Iterable<Buffer> = []): Promise<void> {
  let entry!: Entry;
  // Settles once the entry is whole in the archive, or with the archive's (or the entry's) error.
  const added = new Promise<void>((done, fail) => {
    entry = archive.entry(header, (error) => (error ? fail(error) : done()));
  });
  entry.on('error', () => {}); // the same error settles `added`
  try {
    for (const chunk of data) {
      if (!entry.write(chunk) && !(await drained(entry))) break;
    }
    entry.end(null); // (streamx's types ask for an argument; null adds no data)
  } catch (error) {
    entry.destroy(error as Error);
  }
  await added;
}

/** Waits until `stream` takes more; false when it was closed instead (its error is reported elsewhere). */
function drained(stream: Entry | Extract): Promise<boolean> {
  if (stream.destroying) return Promise.resolve(false);
  return new Promise((settle) => {
    const onDrain = () => finish(true);
    const onClose = () => finish(false);
    const finish = (open: boolean) => {
      stream.off('drain', onDrain).off('close', onClose);
      settle(open);
    };
    stream.on('drain', onDrain).on('close', onClose);
  });
}

/** A file of `fs`, read `CHUNK` bytes at a time. */
function* chunksOf(fs: EmscriptenFs, full: string, path: string, size: number): Generator<Buffer> {
  const stream = fs.open(full, 'r');
  try {
    for (let done = 0; done < size; ) {
      const chunk = Buffer.allocUnsafe(Math.min(CHUNK, size - done));
      const read = fs.read(stream, chunk, 0, chunk.length, done);
      if (read <= 0) throw new Error(`${path} ended after ${done} of its ${size} bytes while it was packed`);
      yield read === chunk.length ? chunk : chunk.subarray(0, read);
      done += read;
    }
  } finally {
    fs.close(stream);
  }
}

/** The archive is not a readable tar of a data directory; `message` says why. */
export class ArchiveDamaged extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveDamaged';
  }
}

/** tar-stream's complaints about an archive, in a restore's words. */
function damageOf(error: Error): ArchiveDamaged {
  if (error.message.startsWith('Invalid tar header.')) return new ArchiveDamaged("a tar header's checksum does not match it");
  if (error.message.startsWith('Unexpected end of data')) return new ArchiveDamaged('the tar archive ends in the middle of an entry');
  return new ArchiveDamaged(`the tar archive is damaged: ${error.message}`);
}

async function writeAll(file: FileHandle, bytes: Buffer): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += (await file.write(bytes, done, bytes.length - done)).bytesWritten;
}

/** The entry's path relative to the data directory; a path that leaves it is an error. */
function targetOf(name: string): string {
  const clean = posix.normalize(name.replace(/^\.?\/+/, '')).replace(/\/+$/, '');
  if (clean === '' || clean === '.' || clean.startsWith('../') || clean === '..' || posix.isAbsolute(clean)) throw new ArchiveDamaged(`the tar entry ${JSON.stringify(name)} leaves the data directory`);
  return clean;
}

/**
 * Unpacks a data-directory archive read from `source` into `dir`, one chunk at a time: files are
 * written as they arrive (mode 0600, directories 0700). Entries outside the data directory's own
 * (see `isDatabaseEntry`: the earlier snapshots an archive of an older version carries, say) are
 * skipped, as are links and other special entries; a path leaving `dir` is an error. Reads
 * `source` to its end, so a decompressor before it checks its whole input; what follows the
 * archive's end must be zeros (tar's padding). Accepts the archives PGlite's own `dumpDataDir`
 * wrote (paths with a leading `/`).
 */
export async function unpackDataDir(source: AsyncIterable<Buffer>, dir: string): Promise<PackStats> {
  const root = resolve(dir);
  const stats: PackStats = { files: 0, directories: 0, bytes: 0 };
  const archive = extract();
  // What went wrong, by where: tar-stream's finding in the archive, the source (a gzip stream that
  // does not check out), or the unpacking (a path that leaves the directory, a full disk).
  const failed: { archive?: Error; source?: unknown; unpacking?: unknown } = {};
  archive.on('error', (error) => {
    failed.archive ??= error;
  });
  const feeding = feed(source, archive).catch((error: unknown) => {
    failed.source = error;
  });
  try {
    for await (const entry of archive) {
      const path = targetOf(entry.header.name);
      const target = join(root, ...path.split('/'));
      if (isDatabaseEntry(path) && entry.header.type === 'directory') {
        await mkdir(target, { recursive: true, mode: 0o700 });
        stats.directories++;
      } else if (isDatabaseEntry(path) && entry.header.type === 'file') {
        await mkdir(dirname(target), { recursive: true, mode: 0o700 });
        const file = await open(target, 'w', 0o600);
        try {
          for await (const chunk of entry) await writeAll(file, chunk as Buffer);
        } finally {
          await file.close();
        }
        stats.files++;
        stats.bytes += entry.header.size;
      } else {
        entry.resume(); // read past, not written
      }
    }
  } catch (error) {
    failed.unpacking = error;
  } finally {
    archive.destroy();
    await feeding;
  }
  // tar-stream's finding first: an entry it cut short surfaces in the unpacking as a closed stream.
  if (failed.archive !== undefined) throw damageOf(failed.archive);
  if ('source' in failed) throw failed.source;
  if ('unpacking' in failed) throw failed.unpacking;
  return stats;
}

/** Writes `source` into `archive` as fast as it takes it, and ends it; a failing source closes it. */
async function feed(source: AsyncIterable<Buffer>, archive: Extract): Promise<void> {
  try {
    for await (const chunk of source) {
      // Closed: the reading side failed and reports why.
      if (archive.destroying || (!archive.write(chunk) && !(await drained(archive)))) return;
    }
    archive.end(null);
  } catch (error) {
    archive.destroy();
    throw error;
  }
}
