import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { PGlite } from '@electric-sql/pglite';
import { pack } from 'tar-stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ArchiveDamaged, backupDirInside, type EmscriptenFs, isDatabaseEntry, packDataDir, unpackDataDir } from './datadir-tar.ts';

/** The PGlite snapshot's archive (datadir-tar.ts): what is packed, that it round-trips, and that it streams. */

const scratch = mkdtempSync(join(tmpdir(), 'obs-datadir-tar-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function* chunks(bytes: Buffer, size = 7_000): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** A ustar header made by hand: hostile and damaged archives are what no tar writer makes. */
function header(name: string, size: number, type = '0'): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0);
  block.write('0000600\0', 100);
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  block.write('00000000000\0', 136);
  block.write('        ', 148);
  block.write(type, 156);
  block.write('ustar\u000000', 257);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return block;
}

/** A one-file entry: its header, then `body` padded to whole blocks. */
function entry(name: string, body: string, type = '0'): Buffer {
  const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  data.write(body);
  return Buffer.concat([header(name, Buffer.byteLength(body), type), data]);
}

describe('what is packed', () => {
  it('takes the data directory\'s own entries and leaves out snapshots, lock and temporary files', () => {
    for (const path of ['PG_VERSION', 'base', 'base/5/16384', 'global/pg_control', 'pg_wal/000000010000000000000001', 'pg_xact/0000', 'postgresql.conf', 'pg_hba.conf', 'pg_notify', 'pg_stat_tmp']) {
      expect(isDatabaseEntry(path), path).toBe(true);
    }
    for (const path of ['backups', 'backups/observatory/20261120T023000Z-x.tar.gz', 'postmaster.pid', 'postmaster.opts', 'notes.txt', 'base/pgsql_tmp', 'base/5/pgsql_tmp123.0', 'global/pg_internal.init', 'pg_notify/0000', 'pg_stat_tmp/global.stat']) {
      expect(isDatabaseEntry(path), path).toBe(false);
    }
    // A backup folder named like a PostgreSQL directory is left out too.
    expect(isDatabaseEntry('pg_backups/x.tar.gz', 'pg_backups')).toBe(false);
    expect(isDatabaseEntry('pg_wal/0001', 'pg_backups')).toBe(true);
  });

  it('knows when the backup folder lies inside the data directory', () => {
    expect(backupDirInside('/srv/data', '/srv/data/backups')).toBe('backups');
    expect(backupDirInside('./data', 'data/pg_backups/')).toBe('pg_backups');
    expect(backupDirInside('/srv/data', '/srv/backups')).toBeNull();
    expect(backupDirInside('/srv/data', '/srv/data')).toBeNull();
  });
});

describe('the archive of a real data directory', () => {
  it('round-trips: a PGlite opened on the unpacked directory holds the same rows', async () => {
    const source = new PGlite();
    await source.exec("CREATE TABLE kept (id int PRIMARY KEY, note text); INSERT INTO kept SELECT g, 'row ' || g FROM generate_series(1, 500) g; CHECKPOINT;");
    // Something that is not the database, inside the data directory: never packed.
    source.Module.FS.mkdirTree(`${PGlite.paths.PGDATA}/backups/observatory`);
    source.Module.FS.writeFile(`${PGlite.paths.PGDATA}/backups/observatory/old.tar.gz`, 'an earlier snapshot');
    const archive = join(scratch, 'roundtrip.tar');
    const stats = await packDataDir(source.Module.FS as unknown as EmscriptenFs, PGlite.paths.PGDATA, createWriteStream(archive));
    await source.close();
    expect(stats.files).toBeGreaterThan(100);
    expect(statSync(archive).size % 512).toBe(0);
    expect(readFileSync(archive).includes('an earlier snapshot')).toBe(false);

    const dir = join(scratch, 'roundtrip');
    await unpackDataDir(chunks(readFileSync(archive)), dir);
    const restored = new PGlite(dir);
    const { rows } = await restored.query<{ n: number; last: string }>("SELECT count(*)::int AS n, max(note) FILTER (WHERE id = 500) AS last FROM kept");
    await restored.close();
    expect(rows[0]).toEqual({ n: 500, last: 'row 500' });
  }, 60_000);

  it('unpacks the archives earlier versions made with PGlite\'s dumpDataDir', async () => {
    const source = new PGlite();
    await source.exec("CREATE TABLE old_format (id int); INSERT INTO old_format SELECT generate_series(1, 42); CHECKPOINT;");
    const tarball = Buffer.from(await (await source.dumpDataDir('none')).arrayBuffer());
    await source.close();
    const dir = join(scratch, 'old-format');
    await unpackDataDir(chunks(tarball), dir);
    const restored = new PGlite(dir);
    const { rows } = await restored.query<{ n: number }>('SELECT count(*)::int AS n FROM old_format');
    await restored.close();
    expect(rows[0]!.n).toBe(42);
  }, 60_000);
});

describe('the snapshots written before tar-stream', () => {
  it('restore: the hand-written ustar writer\'s archive unpacks to the same files and modes', async () => {
    // Made by datadir-tar.ts's own writer (commit f5824e0) from a directory of five files and five
    // folders, plus a pg_notify/0000 and a backups/ folder it left out: a 1,300-byte file (not a
    // whole number of blocks), an empty one, one of exactly one block, and a 128-byte path the
    // writer split into ustar's prefix and name.
    const fixture = new URL('./fixtures/datadir-written-before-tar-stream.tar.gz', import.meta.url);
    const dir = join(scratch, 'before-tar-stream');
    const stats = await pipeline(createReadStream(fixture), createGunzip(), (source: AsyncIterable<Buffer>) => unpackDataDir(source, dir));
    expect(stats).toEqual({ files: 5, directories: 5, bytes: 1847 });
    const deep = join(dir, 'base', '1', 'd'.repeat(60));
    expect(readFileSync(join(dir, 'PG_VERSION'), 'utf8')).toBe('17\n');
    expect(readFileSync(join(dir, 'base', '1', '16384'))).toEqual(Buffer.from(Array.from({ length: 1300 }, (_, i) => i % 251)));
    expect(readFileSync(join(deep, 'f'.repeat(60)), 'utf8')).toBe('in a path longer than 100 bytes\n');
    expect(readFileSync(join(dir, 'global', 'pg_control'))).toEqual(Buffer.alloc(512, 0x5a));
    expect(readFileSync(join(dir, 'postgresql.auto.conf'))).toHaveLength(0);
    expect(readdirSync(join(dir, 'pg_notify'))).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['PG_VERSION', 'base', 'global', 'pg_notify', 'postgresql.auto.conf']);
    const mode = (path: string) => statSync(path).mode & 0o777;
    expect([join(dir, 'base'), join(dir, 'base', '1'), deep, join(dir, 'global'), join(dir, 'pg_notify')].map(mode)).toEqual([0o700, 0o700, 0o700, 0o700, 0o700]);
    expect([join(dir, 'PG_VERSION'), join(dir, 'base', '1', '16384'), join(deep, 'f'.repeat(60)), join(dir, 'global', 'pg_control')].map(mode)).toEqual([0o600, 0o600, 0o600, 0o600]);
  });
});

describe('a damaged or hostile archive', () => {
  it('refuses an entry that leaves the directory, a header whose checksum is wrong, and an archive that ends early', async () => {
    const dir = join(scratch, 'hostile');
    await expect(unpackDataDir(chunks(Buffer.concat([entry('base/../../escaped', 'x'), Buffer.alloc(1024)])), dir)).rejects.toThrow(ArchiveDamaged);
    await expect(unpackDataDir(chunks(Buffer.concat([entry('../PG_VERSION', '17'), Buffer.alloc(1024)])), dir)).rejects.toThrow(/leaves the data directory/);
    const damaged = entry('PG_VERSION', '17');
    damaged[10] = 0x41;
    await expect(unpackDataDir(chunks(damaged), dir)).rejects.toThrow(/checksum/);
    await expect(unpackDataDir(chunks(entry('PG_VERSION', 'x'.repeat(2000)).subarray(0, 1000)), dir)).rejects.toThrow(/ends in the middle/);
    // Entries that are not the database's are skipped, not written.
    await unpackDataDir(chunks(Buffer.concat([entry('PG_VERSION', '17\n'), entry('backups/old.tar.gz', 'old'), Buffer.alloc(1024)])), join(scratch, 'skipping'));
    expect(readFileSync(join(scratch, 'skipping', 'PG_VERSION'), 'utf8')).toBe('17\n');
    expect(() => statSync(join(scratch, 'skipping', 'backups'))).toThrow();
  });

  it('writes no links or special files, and checks the long name a pax header gives too', async () => {
    const archive = async (add: (tar: ReturnType<typeof pack>) => void) => {
      const tar = pack();
      add(tar);
      tar.finalize();
      const bytes: Buffer[] = [];
      for await (const chunk of tar) bytes.push(chunk as Buffer);
      return Buffer.concat(bytes);
    };
    const dir = join(scratch, 'links');
    const links = await archive((tar) => {
      tar.entry({ name: 'PG_VERSION' }, '17\n');
      tar.entry({ name: 'base/evil', type: 'symlink', linkname: '/etc/passwd' });
      tar.entry({ name: 'global/pg_control', type: 'link', linkname: 'PG_VERSION' });
      tar.entry({ name: 'pg_wal/fifo', type: 'fifo' });
    });
    expect(await unpackDataDir(chunks(links), dir)).toEqual({ files: 1, directories: 0, bytes: 3 });
    expect(readdirSync(dir)).toEqual(['PG_VERSION']);
    // A name too long for ustar travels in a pax header, which the reader applies, then checks.
    const longName = await archive((tar) => tar.entry({ name: `base/../../${'x'.repeat(120)}` }, 'x'));
    await expect(unpackDataDir(chunks(longName), join(scratch, 'pax'))).rejects.toThrow(/leaves the data directory/);
  });
});

describe('streaming', () => {
  it('reads a large file one chunk at a time and waits for a slow writer, so memory stays bounded', async () => {
    const size = 24 * 1024 * 1024 + 123;
    let largestRead = 0;
    // A data directory with one 24 MiB file, read from nowhere but a counter.
    const fs: EmscriptenFs = {
      readdir: (path) => (path.endsWith('/base') ? ['.', '..', '1'] : ['.', '..', 'PG_VERSION', 'base']),
      lstat: (path) => ({ mode: path.endsWith('/base') ? 0o40700 : 0o100600, size: path.endsWith('/1') ? size : path.endsWith('PG_VERSION') ? 3 : 0, mtime: 0 }),
      isDir: (mode) => (mode & 0o170000) === 0o40000,
      isFile: (mode) => (mode & 0o170000) === 0o100000,
      open: (path) => ({ path }),
      read: (_stream, buffer, offset, length) => {
        largestRead = Math.max(largestRead, length);
        buffer.fill(7, offset, offset + length);
        return length;
      },
      close: () => {},
    };
    let written = 0;
    let mostBuffered = 0;
    const highWaterMark = 64 * 1024;
    const sink = new Writable({
      highWaterMark,
      write(chunk: Buffer, _encoding, done) {
        written += chunk.length;
        setImmediate(done);
      },
    });
    const sample = setInterval(() => {
      mostBuffered = Math.max(mostBuffered, sink.writableLength);
    }, 0);
    const originalWrite = sink.write.bind(sink);
    sink.write = ((chunk: Buffer, ...rest: never[]) => {
      const accepted = originalWrite(chunk, ...rest);
      mostBuffered = Math.max(mostBuffered, sink.writableLength);
      return accepted;
    }) as typeof sink.write;
    try {
      await packDataDir(fs, '/pglite/data', sink);
    } finally {
      clearInterval(sample);
    }
    expect(written).toBe(512 * 4 + Math.ceil(size / 512) * 512 + 1024);
    expect(largestRead).toBeLessThanOrEqual(1024 * 1024);
    // Never more than one chunk beyond the writer's own buffer: the packer waits for 'drain'.
    expect(mostBuffered).toBeLessThanOrEqual(highWaterMark + 1024 * 1024);
  });
});

describe('unpacking as it streams', () => {
  it('writes a large file as its bytes arrive: the input is never read far ahead of the disk', async () => {
    const size = 24 * 1024 * 1024;
    const dir = join(scratch, 'large');
    const target = join(dir, 'base', '1', '16384');
    let pulled = 0;
    let mostAhead = 0;
    await unpackDataDir(
      (async function* () {
        yield header('base/1/16384', size);
        for (let sent = 0; sent < size; sent += 64 * 1024) {
          let onDisk = 0;
          try {
            onDisk = statSync(target).size;
          } catch {}
          mostAhead = Math.max(mostAhead, pulled - onDisk);
          pulled += 64 * 1024;
          yield Buffer.alloc(64 * 1024, 7);
        }
        yield Buffer.alloc(1024);
      })(),
      dir,
    );
    expect(statSync(target).size).toBe(size);
    // Measured: one 64 KiB chunk ahead at most. Reading the whole entry before writing it: 24 MiB.
    expect(mostAhead).toBeLessThanOrEqual(1024 * 1024);
  });
});

describe('a file that cannot be written', () => {
  it('rejects the pack (the snapshot fails) rather than crash the process', async () => {
    const fs: EmscriptenFs = {
      readdir: () => ['PG_VERSION'],
      lstat: () => ({ mode: 0o100600, size: 3, mtime: 0 }),
      isDir: () => false,
      isFile: () => true,
      open: () => ({}),
      read: (_stream, buffer, offset, length) => {
        buffer.fill(49, offset, offset + length);
        return length;
      },
      close: () => {},
    };
    await expect(packDataDir(fs, '/pglite/data', createWriteStream(join(scratch, 'no-such-folder', 'x.tar')))).rejects.toThrow(/ENOENT/);
  });
});

describe('reading its input to the end', () => {
  it('keeps reading after the end of the archive, so a decompressor before it checks everything', async () => {
    let pulled = 0;
    // After the end-of-archive blocks, the zeros tar pads its last 10 KiB record with.
    const body = Buffer.concat([entry('PG_VERSION', '17'), Buffer.alloc(1024), Buffer.alloc(10_240)]);
    const source = Readable.from(
      (async function* () {
        for await (const chunk of chunks(body, 1000)) {
          pulled += chunk.length;
          yield chunk;
        }
      })(),
    );
    await unpackDataDir(source, join(scratch, 'to-the-end'));
    expect(pulled).toBe(body.length);
    // Anything but zeros after the end is not tar's padding: refused, like any damage.
    await expect(unpackDataDir(chunks(Buffer.concat([body, Buffer.alloc(512, 1)])), join(scratch, 'to-the-end-2'))).rejects.toThrow(ArchiveDamaged);
  });
});
