import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, testEnv, testLogger, V1 } from '../../../test/helpers/app.ts';
import { type App, createApp } from '../../app.ts';
import { loadConfig } from '../../platform/config.ts';

/**
 * The embedded database with its default settings (issue 26 item 2): PGlite's files in DATA_DIR on
 * disk and the backup folder at its default, DATA_DIR/backups, inside the data directory. Each
 * snapshot used to pack every earlier one (6.6, 13, 26 MB for three in a row). Whatever the run's
 * DATABASE_URL, this test runs the embedded database: it is the case in question.
 */

const dataDir = mkdtempSync(join(tmpdir(), 'obs-datadir-'));
let app: App;

/** The names of a .tar.gz snapshot's entries. */
async function entriesOf(file: string): Promise<string[]> {
  const archive = extract();
  archive.end(gunzipSync(readFileSync(file)));
  const names: string[] = [];
  for await (const entry of archive) {
    names.push(entry.header.name);
    entry.resume();
  }
  return names;
}

const mode = (path: string) => statSync(path).mode & 0o777;
const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
  app.server.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(payload ? { payload } : {}) });

beforeAll(async () => {
  // A data directory made before the rule, open to everyone, with a file anyone may write.
  chmodSync(dataDir, 0o777);
  mkdirSync(join(dataDir, 'notes'), { mode: 0o777 });
  writeFileSync(join(dataDir, 'notes', 'todo.txt'), 'x', { mode: 0o666 });
  chmodSync(join(dataDir, 'notes', 'todo.txt'), 0o666);
  const env: Record<string, string> = { ...testEnv(), DATA_DIR: dataDir };
  delete env.OBSERVATORY_BACKUP_DIR;
  app = await createApp({ config: loadConfig(env), logger: testLogger() });
}, 120_000);

afterAll(async () => {
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('snapshots of the embedded database with the default backup folder', () => {
  let sizes: number[] = [];
  let keys: string[] = [];

  it('do not grow with every earlier snapshot: three in a row are about the same size', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await call('POST', `${V1}/backups/snapshots`, {});
      expect(res.statusCode, res.body).toBe(200);
      sizes.push(res.json().snapshot.sizeBytes);
      keys.push(res.json().snapshot.providerSnapshotId);
    }
    expect(statSync(join(dataDir, 'backups', keys[2]!)).size).toBe(sizes[2]);
    // Before: each one held all the earlier ones, so the third was four times the first.
    expect(sizes[2]! / sizes[0]!).toBeLessThan(1.2);
  }, 180_000);

  it('pack the database\'s files only: no earlier snapshot, no backup folder, no lock file', async () => {
    const names = await entriesOf(join(dataDir, 'backups', keys[2]!));
    expect(names).toContain('PG_VERSION');
    expect(names.some((n) => n.startsWith('base/'))).toBe(true);
    expect(names.filter((n) => n.startsWith('backups') || n.endsWith('.tar.gz') || n.startsWith('postmaster') || n.startsWith('notes'))).toEqual([]);
  });

  it('still restore: the third verifies ok', async () => {
    const [third] = (await call('GET', `${V1}/backups/snapshots?limit=1`)).json().snapshots;
    const res = await call('POST', `${V1}/backups/verify`, { snapshotId: third.id });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().verification).toMatchObject({ outcome: 'ok' });
  }, 120_000);
});

describe('file modes', () => {
  it('makes DATA_DIR the service user\'s alone and leaves nothing in it writable by others, even what was there before', () => {
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'notes', 'todo.txt')) & 0o022).toBe(0);
    expect(mode(join(dataDir, 'notes')) & 0o022).toBe(0);
    // PGlite writes its first files 0666; the start made them private.
    expect(mode(join(dataDir, 'PG_VERSION')) & 0o022).toBe(0);
    const writable: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isSymbolicLink()) continue;
        if ((mode(path) & 0o002) !== 0) writable.push(path);
        if (entry.isDirectory()) walk(path);
      }
    };
    walk(dataDir);
    expect(writable).toEqual([]);
  });

  it('creates the backup folder 0700 and every snapshot file 0600', () => {
    expect(mode(join(dataDir, 'backups'))).toBe(0o700);
    expect(mode(join(dataDir, 'backups', 'observatory'))).toBe(0o700);
    expect(mode(join(dataDir, 'backups', '.work'))).toBe(0o700);
    for (const key of readdirSync(join(dataDir, 'backups', 'observatory'))) expect(mode(join(dataDir, 'backups', 'observatory', key))).toBe(0o600);
  });
});
