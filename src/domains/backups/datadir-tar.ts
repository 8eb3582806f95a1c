import { once } from 'node:events';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import type { Writable } from 'node:stream';

/**
 * The PGlite snapshot's archive (docs/backups.md, "What a snapshot is"): a POSIX ustar archive of
 * the database's data directory, written entry by entry and read back entry by entry, so neither
 * side ever holds more than one chunk of one file in memory, whatever the database's size.
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

const BLOCK = 512;
/** Bytes read from a file at a time: the most the packer holds of any file. */
const CHUNK = 1024 * 1024;
/** The largest size an octal ustar size field holds (8 GiB − 1); PostgreSQL's segments are 1 GiB. */
const MAX_SIZE = 8 ** 11 - 1;

export interface PackStats {
  files: number;
  directories: number;
  bytes: number;
}

/**
 * Writes the data directory at `root` of `fs` to `out` as a tar archive, respecting `out`'s
 * back-pressure. Entries are sorted, so the same directory gives the same archive. Symbolic links
 * are not followed (PGlite's data directory has none). `out` is ended.
 */
export async function packDataDir(fs: EmscriptenFs, root: string, out: Writable, excluded: string | null = null): Promise<PackStats> {
  const stats: PackStats = { files: 0, directories: 0, bytes: 0 };
  // A write error (disk full) may come while nothing awaits the stream: kept, and thrown at the
  // next write, rather than left to crash the process as an unhandled 'error'.
  let failure: unknown = null;
  out.on('error', (error) => {
    failure ??= error;
  });
  const write = async (chunk: Buffer) => {
    if (failure !== null) throw failure;
    if (!out.write(chunk)) await once(out, 'drain');
  };
  const walk = async (dir: string) => {
    for (const name of fs.readdir(`${root}/${dir}`.replace(/\/$/, '')).filter((n) => n !== '.' && n !== '..').sort()) {
      const path = dir === '' ? name : `${dir}/${name}`;
      if (!isDatabaseEntry(path, excluded)) continue;
      const full = `${root}/${path}`;
      const stat = fs.lstat(full);
      const mtime = Math.floor((stat.mtime instanceof Date ? stat.mtime.getTime() : Number(stat.mtime)) / 1000);
      if (fs.isDir(stat.mode)) {
        await write(header(`${path}/`, { mode: 0o700, size: 0, mtime, type: '5' }));
        stats.directories++;
        if (!EMPTY_DIRS.has(path)) await walk(path);
      } else if (fs.isFile(stat.mode)) {
        if (stat.size > MAX_SIZE) throw new Error(`${path} is larger than a tar entry can hold`);
        await write(header(path, { mode: 0o600, size: stat.size, mtime, type: '0' }));
        const stream = fs.open(full, 'r');
        try {
          let done = 0;
          while (done < stat.size) {
            const chunk = Buffer.allocUnsafe(Math.min(CHUNK, stat.size - done));
            const read = fs.read(stream, chunk, 0, chunk.length, done);
            if (read <= 0) throw new Error(`${path} ended after ${done} of its ${stat.size} bytes while it was packed`);
            await write(read === chunk.length ? chunk : chunk.subarray(0, read));
            done += read;
          }
        } finally {
          fs.close(stream);
        }
        const pad = (BLOCK - (stat.size % BLOCK)) % BLOCK;
        if (pad > 0) await write(Buffer.alloc(pad));
        stats.files++;
        stats.bytes += stat.size;
      }
    }
  };
  try {
    await walk('');
    // The end of the archive: two zero blocks.
    await write(Buffer.alloc(2 * BLOCK));
    if (failure !== null) throw failure;
    const finished = once(out, 'finish');
    out.end();
    await finished;
  } catch (error) {
    out.destroy();
    throw error;
  }
  return stats;
}

function header(path: string, entry: { mode: number; size: number; mtime: number; type: '0' | '5' }): Buffer {
  const block = Buffer.alloc(BLOCK);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    // ustar splits a long path at a `/` into a prefix (155 bytes) and a name (100 bytes).
    const cut = path.lastIndexOf('/', path.length - 2);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) throw new Error(`the path ${path} is too long for a tar entry`);
  }
  const octal = (value: number, width: number) => `${value.toString(8).padStart(width - 1, '0')}\0`;
  block.write(name, 0, 100, 'utf8');
  block.write(octal(entry.mode, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii');
  block.write(octal(0, 8), 116, 'ascii');
  block.write(octal(entry.size, 12), 124, 'ascii');
  block.write(octal(entry.mtime, 12), 136, 'ascii');
  block.write('        ', 148, 'ascii');
  block.write(entry.type, 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  block.write('postgres', 265, 'ascii');
  block.write('postgres', 297, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/** The archive is not a readable tar of a data directory; `message` says why. */
export class ArchiveDamaged extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ArchiveDamaged';
  }
}

async function writeAll(file: FileHandle, bytes: Buffer): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += (await file.write(bytes, done, bytes.length - done)).bytesWritten;
}

const field = (block: Buffer, offset: number, length: number) => {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end < 0 ? length : end).toString('utf8');
};

function octalField(block: Buffer, offset: number, length: number, what: string): number {
  const text = field(block, offset, length).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new ArchiveDamaged(`a tar header's ${what} is not a number`);
  return parseInt(text, 8);
}

/**
 * Unpacks a data-directory archive read from `source` into `dir`, one chunk at a time: files are
 * written as they arrive (mode 0600, directories 0700). Entries outside the data directory's own
 * (see `isDatabaseEntry`: the earlier snapshots an archive of an older version carries, say) are
 * skipped, as are links and other special entries; a path leaving `dir` is an error. Reads
 * `source` to its end even after the archive's end, so a decompressor before it checks its whole
 * input. Accepts the archives PGlite's own `dumpDataDir` wrote (paths with a leading `/`).
 */
export async function unpackDataDir(source: AsyncIterable<Buffer>, dir: string): Promise<PackStats> {
  const root = resolve(dir);
  const stats: PackStats = { files: 0, directories: 0, bytes: 0 };
  let pending: Buffer = Buffer.alloc(0);
  /** Bytes of the current entry's data still to come, and of padding after them. */
  let dataLeft = 0;
  let padLeft = 0;
  /** The file being written, if the current entry is one that is unpacked. */
  const current: { file: FileHandle | null } = { file: null };
  let ended = false;

  const targetOf = (name: string) => {
    const clean = posix.normalize(name.replace(/^\.?\/+/, '')).replace(/\/+$/, '');
    if (clean === '' || clean === '.' || clean.startsWith('../') || clean === '..' || posix.isAbsolute(clean)) throw new ArchiveDamaged(`the tar entry ${JSON.stringify(name)} leaves the data directory`);
    return clean;
  };

  const startEntry = async (block: Buffer) => {
    if (block.every((byte) => byte === 0)) {
      ended = true;
      return;
    }
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
    if (sum !== octalField(block, 148, 8, 'checksum')) throw new ArchiveDamaged('a tar header\'s checksum does not match it');
    const type = String.fromCharCode(block[156]!);
    // Only ustar archives carry a prefix; older ones keep other fields in those bytes.
    const prefix = field(block, 257, 5) === 'ustar' ? field(block, 345, 155) : '';
    const name = prefix === '' ? field(block, 0, 100) : `${prefix}/${field(block, 0, 100)}`;
    const size = octalField(block, 124, 12, 'size');
    dataLeft = size;
    padLeft = (BLOCK - (size % BLOCK)) % BLOCK;
    const path = targetOf(name);
    if (!isDatabaseEntry(path)) return;
    const target = join(root, ...path.split('/'));
    if (type === '5') {
      await mkdir(target, { recursive: true, mode: 0o700 });
      stats.directories++;
    } else if (type === '0' || type === '\0') {
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      current.file = await open(target, 'w', 0o600);
      stats.files++;
      stats.bytes += size;
      if (size === 0) await closeFile();
    }
  };
  const closeFile = async () => {
    const file = current.file;
    current.file = null;
    await file?.close();
  };

  try {
    for await (const chunk of source) {
      let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      pending = Buffer.alloc(0);
      while (data.length > 0 && !ended) {
        if (dataLeft > 0) {
          const take = Math.min(dataLeft, data.length);
          if (current.file !== null) await writeAll(current.file, data.subarray(0, take));
          dataLeft -= take;
          data = data.subarray(take);
          if (dataLeft === 0) await closeFile();
        } else if (padLeft > 0) {
          const take = Math.min(padLeft, data.length);
          padLeft -= take;
          data = data.subarray(take);
        } else if (data.length >= BLOCK) {
          await startEntry(data.subarray(0, BLOCK));
          data = data.subarray(BLOCK);
        } else {
          pending = Buffer.from(data);
          data = Buffer.alloc(0);
        }
      }
      // After the end of the archive the rest of the input is read and dropped.
    }
    if (dataLeft > 0 || padLeft > 0 || pending.length > 0) throw new ArchiveDamaged('the tar archive ends in the middle of an entry');
  } finally {
    await closeFile();
  }
  return stats;
}
