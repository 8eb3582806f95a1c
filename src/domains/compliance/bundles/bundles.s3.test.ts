import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { type BundleAnswer, downloadBundle, getLink, sha256 } from '../../../../test/helpers/evidence.ts';
import { pdfText } from '../../../../test/helpers/pdf-text.ts';
import { ManualClock } from '../../../platform/clock.ts';

/**
 * Evidence bundles in an S3-compatible bucket (s3rver in this process), through the same file
 * store as backup snapshots: the files land under the configured prefix, encrypted at rest, none in
 * the backup directory, and are served back through signed links, re-hashed.
 */

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  middleware: ((ctx: { method: string; path: string; headers: Record<string, string | undefined> }, next: () => Promise<void>) => Promise<void>)[];
}
const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;
const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };

const BUCKET = 'observatory-evidence';
const accessKeyId = `test-${randomBytes(6).toString('hex')}`;
const secretAccessKey = randomBytes(24).toString('base64url');
const clock = new ManualClock('2026-11-28T04:20:00.000Z');
const s3Dir = mkdtempSync(join(tmpdir(), 'observatory-s3rver-evidence-'));
const backupDir = mkdtempSync(join(tmpdir(), 'observatory-evidence-s3-'));
let server: S3rverInstance;
let s3: S3Client;
let t: TestApp;
let bundle: BundleAnswer;
const received: { method: string; path: string; sse: string | undefined }[] = [];

beforeAll(async () => {
  DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: BUCKET }] });
  server.middleware.unshift(async (ctx, next) => {
    received.push({ method: ctx.method, path: ctx.path, sse: ctx.headers['x-amz-server-side-encryption'] });
    await next();
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  t = await startTestApp({
    clock,
    env: {
      OBSERVATORY_BACKUP_DIR: backupDir,
      OBSERVATORY_BACKUP_S3_BUCKET: BUCKET,
      OBSERVATORY_BACKUP_S3_ENDPOINT: endpoint,
      OBSERVATORY_BACKUP_S3_ALLOW_HTTP: '1',
      OBSERVATORY_BACKUP_S3_PREFIX: 'ci/',
      OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID: accessKeyId,
      OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY: secretAccessKey,
    },
  });
  await t.call({ method: 'POST', url: `${V1}/ops/jobs/compliance-evaluate/run` });
  const res = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'soc2' } });
  expect(res.statusCode, res.body).toBe(200);
  bundle = res.json();
}, 120_000);

afterAll(async () => {
  await t?.close();
  s3?.destroy();
  await server?.close();
  rmSync(s3Dir, { recursive: true, force: true });
  rmSync(backupDir, { recursive: true, force: true });
});

async function objectBytes(key: string): Promise<Buffer> {
  const answer = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return Buffer.from(await answer.Body!.transformToByteArray());
}

describe('a bundle in an S3-compatible bucket', () => {
  it('puts each file under <prefix>compliance-evidence/<bundleId>/, encrypted at rest, and nothing in the backup directory', async () => {
    expect(bundle.storage).toBe('s3');
    const names = [...bundle.artifacts.map((a) => a.name), 'manifest.txt'];
    for (const name of names) {
      const key = `ci/compliance-evidence/${bundle.bundleId}/${name}`;
      const bytes = await objectBytes(key);
      const expected = name === 'manifest.txt' ? bundle.manifestSha256 : bundle.artifacts.find((a) => a.name === name)!.sha256;
      expect(sha256(bytes), name).toBe(expected);
      expect(received.filter((r) => r.method === 'PUT' && r.path === `/${BUCKET}/${key}`)).toEqual([{ method: 'PUT', path: `/${BUCKET}/${key}`, sse: 'AES256' }]);
    }
    expect(readdirSync(backupDir).filter((name) => name !== '.work')).toEqual([]);
  });

  it('serves every file back through its signed link, the bytes the manifest lists, and a PDF a parser reads', async () => {
    const files = await downloadBundle(t, bundle);
    const text = (await pdfText(files.get('soc2-summary.pdf')!)).pages.join(' ');
    expect(text).toContain('SOC 2');
    expect(text).toContain('CC6.1');
  });

  it('refuses an object changed in the bucket, and answers 404 for one deleted from it', async () => {
    const json = bundle.artifacts.find((a) => a.kind === 'json')!;
    const key = `ci/compliance-evidence/${bundle.bundleId}/${json.name}`;
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: Buffer.from('{"forged":true}\n') }));
    const altered = await getLink(t, json.url);
    expect(altered.statusCode).toBe(409);
    expect(altered.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'evidence-altered' });
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
    expect((await getLink(t, json.url)).json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
  });

  it('deletes the objects of a bundle past its keep when the next is made', async () => {
    clock.advance(31 * 24 * 3600_000);
    const before = received.length;
    const res = await t.call({ method: 'POST', url: `${V1}/compliance/bundle`, payload: { framework: 'iso27001' } });
    expect(res.json().expiredBundles).toBe(1);
    const deletes = received.slice(before).filter((r) => r.method === 'DELETE' && r.path.startsWith(`/${BUCKET}/ci/compliance-evidence/${bundle.bundleId}/`)).map((r) => r.path.split('/').at(-1));
    expect(deletes.sort()).toEqual(['manifest.txt', 'soc2-controls.csv', 'soc2-snapshot.json', 'soc2-summary.pdf']);
    await expect(objectBytes(`ci/compliance-evidence/${bundle.bundleId}/manifest.txt`)).rejects.toMatchObject({ name: 'NoSuchKey' });
  });
});
