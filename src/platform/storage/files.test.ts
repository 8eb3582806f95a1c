import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createFileStores, StoredFileMissing } from './files.ts';

const dir = mkdtempSync(join(tmpdir(), 'observatory-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the directory store', () => {
  const stores = createFileStores(loadConfig({ OBSERVATORY_BACKUP_DIR: dir }).backups, pino({ level: 'silent' }));
  const store = stores.current;

  it('is the current store when no bucket is configured, and keeps keys as they are', () => {
    expect(store.kind).toBe('local');
    expect(stores.byKind('local')).toBe(store);
    expect(stores.byKind('s3')).toBeNull();
    expect(store.keyOf('evidence/a/b.txt')).toBe('evidence/a/b.txt');
  });

  it('writes bytes under their key for the service user only, reads them back, replaces and deletes them', async () => {
    await store.putBytes('compliance-evidence/b1/manifest.txt', Buffer.from('one'), 'text/plain');
    expect((await store.read('compliance-evidence/b1/manifest.txt')).toString()).toBe('one');
    expect(statSync(join(dir, 'compliance-evidence/b1/manifest.txt')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'compliance-evidence/b1')).mode & 0o777).toBe(0o700);
    await store.putBytes('compliance-evidence/b1/manifest.txt', Buffer.from('two'), 'text/plain');
    expect((await store.read('compliance-evidence/b1/manifest.txt')).toString()).toBe('two');
    // No partial file is left beside it.
    expect(readdirSync(join(dir, 'compliance-evidence/b1'))).toEqual(['manifest.txt']);
    const fetched = await store.fetch('compliance-evidence/b1/manifest.txt');
    expect(fetched.path).toBe(join(dir, 'compliance-evidence/b1/manifest.txt'));
    await store.delete('compliance-evidence/b1/manifest.txt');
    await store.delete('compliance-evidence/b1/manifest.txt');
    await expect(store.read('compliance-evidence/b1/manifest.txt')).rejects.toBeInstanceOf(StoredFileMissing);
    await expect(store.fetch('compliance-evidence/b1/manifest.txt')).rejects.toBeInstanceOf(StoredFileMissing);
    await expect(store.read('compliance-evidence/b1')).rejects.toThrow(/stored file compliance-evidence\/b1 is missing from/);
  });

  it('deletes a set of files and the folders they leave empty, not the directory itself nor a folder still in use', async () => {
    await store.putBytes('set/a/one.txt', Buffer.from('1'), 'text/plain');
    await store.putBytes('set/a/two.txt', Buffer.from('2'), 'text/plain');
    await store.putBytes('set/b/three.txt', Buffer.from('3'), 'text/plain');
    await store.deleteFiles(['set/a/one.txt', 'set/a/two.txt', 'set/a/missing.txt']);
    expect(readdirSync(join(dir, 'set'))).toEqual(['b']);
    await store.deleteFiles(['set/b/three.txt']);
    expect(readdirSync(dir)).not.toContain('set');
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  it('refuses a key that climbs out of the directory', async () => {
    await expect(store.putBytes('../outside.txt', Buffer.from('x'), 'text/plain')).rejects.toThrow(/leaves the storage directory/);
    await expect(store.read('a/../../outside.txt')).rejects.toThrow(/leaves the storage directory/);
  });
});
