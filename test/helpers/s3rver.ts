import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';

/**
 * An S3-compatible bucket in the test process (s3rver) with an access key of its own, recording
 * every request it receives. s3rver refuses an unknown access key id but does not check SigV4
 * signatures, so a wrong secret is not something it can show.
 */

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  /** s3rver is a Koa application: its middleware, in order. */
  middleware: ((ctx: { method: string; path: string; headers: Record<string, string | undefined> }, next: () => Promise<void>) => Promise<void>)[];
}
const require = createRequire(import.meta.url);
const S3rver = require('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;
const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };

export interface TestBucket {
  bucket: string;
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** A client of the bucket, for reading and changing objects behind the service's back. */
  s3: S3Client;
  /** Every request received: method, path and the encryption it asked for. */
  received: { method: string; path: string; sse: string | undefined }[];
  /** The file-store settings that point a test app at this bucket (with `prefix`). */
  env(prefix: string): Record<string, string>;
  close(): Promise<void>;
}

export async function startTestBucket(bucket: string): Promise<TestBucket> {
  const accessKeyId = `test-${randomBytes(6).toString('hex')}`;
  const secretAccessKey = randomBytes(24).toString('base64url');
  DUMMY_ACCOUNT.createKeyPair(accessKeyId, secretAccessKey);
  const directory = mkdtempSync(join(tmpdir(), 'observatory-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }] });
  const received: TestBucket['received'] = [];
  server.middleware.unshift(async (ctx, next) => {
    received.push({ method: ctx.method, path: ctx.path, sse: ctx.headers['x-amz-server-side-encryption'] });
    await next();
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const s3 = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
  return {
    bucket,
    endpoint,
    accessKeyId,
    secretAccessKey,
    s3,
    received,
    env: (prefix) => ({
      OBSERVATORY_BACKUP_S3_BUCKET: bucket,
      OBSERVATORY_BACKUP_S3_ENDPOINT: endpoint,
      // s3rver speaks http only: the lab setting that allows it.
      OBSERVATORY_BACKUP_S3_ALLOW_HTTP: '1',
      OBSERVATORY_BACKUP_S3_PREFIX: prefix,
      OBSERVATORY_BACKUP_S3_ACCESS_KEY_ID: accessKeyId,
      OBSERVATORY_BACKUP_S3_SECRET_ACCESS_KEY: secretAccessKey,
    }),
    async close() {
      s3.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
