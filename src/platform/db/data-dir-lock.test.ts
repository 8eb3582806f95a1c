import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './client.ts';
import { dataDirHolder, DataDirLocked, LOCK_FILE, lockDataDir } from './data-dir-lock.ts';

/** The data directory's lock alone (no database): who may take it, and what a refusal says. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const freshDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'observatory-lock-'));
  dirs.push(dir);
  return dir;
};

/** A pid that was a process a moment ago and is none now. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(String(child.stdout));
}

describe('the data directory lock', () => {
  it('refuses a second opener in this process, naming the pid, until released', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir);
    expect(dataDirHolder(dir)?.pid).toBe(process.pid);
    let caught: unknown;
    try {
      lockDataDir(dir);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DataDirLocked);
    expect((caught as Error).message).toContain(`pid ${process.pid}`);
    lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    expect(dataDirHolder(dir)).toBeNull();
    lockDataDir(dir).release();
    // Nothing but the lock file was ever left in the directory.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses another process, which names the holder\'s pid and exits', () => {
    const dir = freshDir();
    const lock = lockDataDir(dir);
    const script = `import { lockDataDir } from ${JSON.stringify(join(import.meta.dirname, 'data-dir-lock.ts'))};
try { lockDataDir(${JSON.stringify(dir)}); console.log('took it'); } catch (e) { console.error(e.message); process.exit(3); }`;
    const other = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(other.status).toBe(3);
    expect(other.stderr).toContain(`in use by process ${process.pid}`);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).nonce).toBe(lock.holder.nonce);
    lock.release();
  });

  it('takes over a lock whose holder died, or whose pid is this process that never took it', () => {
    const dir = freshDir();
    const stale = { pid: deadPid(), host: hostname(), bootId: null, startTicks: null, since: '2026-01-01T00:00:00.000Z', command: 'src/main.ts', nonce: 'dead' };
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(stale));
    expect(dataDirHolder(dir)).toBeNull();
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();

    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...stale, pid: process.pid, nonce: 'a-previous-life' }));
    lockDataDir(dir).release();
    // A file that is no lock of this service (empty, garbage) is no holder either.
    writeFileSync(join(dir, LOCK_FILE), '');
    lockDataDir(dir).release();
  });

  it('never takes over a lock written on another host', () => {
    const dir = freshDir();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: deadPid(), host: 'some-other-host', bootId: null, startTicks: null, since: '2026-01-01T00:00:00.000Z', command: 'src/main.ts', nonce: 'far' }));
    expect(() => lockDataDir(dir)).toThrow(/on host some-other-host.*remove/);
    expect(dataDirHolder(dir)?.host).toBe('some-other-host');
  });

  it('is taken by the embedded database itself: a second open of DATA_DIR is refused, naming the pid, until the first is closed', async () => {
    const dir = freshDir();
    const first = await openDatabase({ databaseUrl: null, dataDir: dir });
    try {
      await expect(openDatabase({ databaseUrl: null, dataDir: dir })).rejects.toThrow(`pid ${process.pid}`);
      expect(dataDirHolder(dir)?.pid).toBe(process.pid);
    } finally {
      await first.close();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  }, 60_000);
});
