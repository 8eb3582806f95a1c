import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { startTestBucket, type TestBucket } from '../../../test/helpers/s3rver.ts';
import { ManualClock } from '../../platform/clock.ts';

/**
 * Snapshot files in an S3-compatible bucket (s3rver in this process, with an access key of its own):
 * stored, restored, checked, expired. s3rver refuses an unknown access key id but does not check
 * SigV4 signatures, so a wrong secret is not something it can show.
 */

const BUCKET = 'observatory-backups';
const clock = new ManualClock('2026-11-20T02:30:00.000Z');
const backupDir = mkdtempSync(join(tmpdir(), 'observatory-backups-s3-'));
let bucket: TestBucket;
let s3: S3Client;
let t: TestApp;
/** Every request s3rver received: method, path and the encryption it was asked for. */
let received: TestBucket['received'];

const s3Env = () => ({
  OBSERVATORY_BACKUP_DIR: backupDir,
  OBSERVATORY_BACKUP_RETENTION_DAYS: '7',
  ...bucket.env('ci/'),
  OBSERVATORY_BACKUP_SCRATCH_PREFIX: `obs_restore_s${randomBytes(4).toString('hex')}`,
});

beforeAll(async () => {
  bucket = await startTestBucket(BUCKET);
  ({ s3, received } = bucket);
  t = await startTestApp({ clock, env: s3Env() });
});

afterAll(async () => {
  await t?.close();
  await bucket?.close();
  rmSync(backupDir, { recursive: true, force: true });
});

async function objectBytes(key: string): Promise<Buffer | null> {
  try {
    const answer = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await answer.Body!.transformToByteArray());
  } catch (error) {
    if ((error as { name?: string }).name === 'NoSuchKey') return null;
    throw error;
  }
}

describe('snapshots in an S3-compatible bucket', () => {
  let snapshot: { id: string; providerSnapshotId: string; fileSha256: string; sizeBytes: number; storage: string };

  it('uploads the dump under the prefix and keeps no copy in the backup directory', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
    expect(res.statusCode).toBe(200);
    snapshot = res.json().snapshot;
    expect(snapshot.storage).toBe('s3');
    expect(snapshot.providerSnapshotId).toMatch(/^ci\/observatory\/20261120T023000Z-/);
    const bytes = await objectBytes(snapshot.providerSnapshotId);
    expect(bytes?.length).toBe(snapshot.sizeBytes);
    expect(createHash('sha256').update(bytes!).digest('hex')).toBe(snapshot.fileSha256);
    expect(readdirSync(backupDir).filter((name) => name !== '.work')).toEqual([]);
    expect(readdirSync(join(backupDir, '.work'))).toEqual([]);
    // The upload asked the store to encrypt the object at rest.
    const puts = received.filter((r) => r.method === 'PUT' && r.path === `/${BUCKET}/${snapshot.providerSnapshotId}`);
    expect(puts).toEqual([{ method: 'PUT', path: `/${BUCKET}/${snapshot.providerSnapshotId}`, sse: 'AES256' }]);
  }, 120_000);

  it('verifies by downloading and restoring it (ok), and removes the download', async () => {
    const res = await t.call({ method: 'POST', url: `${V1}/backups/verify`, payload: { snapshotId: snapshot.id } });
    expect(res.json()).toMatchObject({ ok: true, verification: { outcome: 'ok', fileSha256: snapshot.fileSha256 } });
    expect(readdirSync(join(backupDir, '.work'))).toEqual([]);
  }, 120_000);

  it('reports an object changed in the bucket as an error', async () => {
    const bytes = (await objectBytes(snapshot.providerSnapshotId))!;
    const damaged = Buffer.from(bytes);
    for (let i = 0; i < 64; i++) damaged[Math.floor(damaged.length / 2) + i]! ^= 0xff;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: snapshot.providerSnapshotId, Body: damaged }));
    const res = await t.call({ method: 'POST', url: `${V1}/backups/verify`, payload: { snapshotId: snapshot.id } });
    expect(res.json().verification).toMatchObject({ outcome: 'error' });
    expect(res.json().verification.errorText).toContain('SHA-256');
  });

  it('answers 503 backup-failed when the bucket refuses the credentials, and records nothing', async () => {
    const other = await t.secondInstance({ ...s3Env(), OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID: 'unknown-access-key' });
    const res = await other.server.inject({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {}, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(503);
    expect(res.json().reason).toBe('backup-failed');
    expect((await t.call({ method: 'GET', url: `${V1}/backups/snapshots` })).json().snapshots).toHaveLength(1);
    expect(readdirSync(join(backupDir, '.work'))).toEqual([]);
  }, 120_000);

  it('deletes the object of an expired snapshot when the backup-snapshot job runs', async () => {
    clock.advance(8 * 24 * 3600_000);
    const stats = await runJob(t, 'backup-snapshot');
    expect(stats).toMatchObject({ expired: 1, expireFailed: 0 });
    expect(await objectBytes(snapshot.providerSnapshotId)).toBeNull();
    const [fresh] = (await t.call({ method: 'GET', url: `${V1}/backups/snapshots` })).json().snapshots;
    expect(fresh).toMatchObject({ storage: 's3', source: 'provider' });
    expect((await objectBytes(fresh.providerSnapshotId))?.length).toBe(fresh.sizeBytes);
  }, 120_000);
});
