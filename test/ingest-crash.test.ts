import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../src/domains/honeypot/ingest/signature.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { startService, waitReady } from './helpers/process.ts';

/**
 * "A 200 means the events are committed": ingest against a real `npm start`, kill it without
 * warning while batches are in flight, and find every acknowledged event in the database.
 */
const ADMIN = 'svctok_crashtestadmintokencrashtestadmintok00';
const V1 = '/api/observatory/v1';
let dataDir: string;
let testDb: TestDatabase;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'observatory-crash-'));
  testDb = await createTestDatabase();
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await testDb.drop();
});

async function storedSenderIds(): Promise<Set<string>> {
  const query = 'SELECT sender_id FROM honeypot_events';
  if (testDb.url) {
    const client = new pg.Client({ connectionString: testDb.url });
    await client.connect();
    try {
      return new Set((await client.query<{ sender_id: string }>(query)).rows.map((r) => r.sender_id));
    } finally {
      await client.end();
    }
  }
  const db = new PGlite(dataDir);
  try {
    return new Set((await db.query<{ sender_id: string }>(query)).rows.map((r) => r.sender_id));
  } finally {
    await db.close();
  }
}

describe('ingest durability', () => {
  it('keeps every acknowledged event when the process is killed mid-ingest', async () => {
    const env = { DATA_DIR: dataDir, OBSERVATORY_ADMIN_TOKEN: ADMIN, OBSERVATORY_SCHEDULER: '0', ...(testDb.url ? { DATABASE_URL: testDb.url } : {}) };
    const service = startService(env);
    await waitReady(service);
    const created = await fetch(`${service.base}${V1}/honeypot/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'crash', name: 'Crash test' }),
    });
    const { signingSecret } = (await created.json()) as { signingSecret: string };

    const acknowledged: string[] = [];
    let batch = 0;
    let stop = false;
    const sender = async (lane: number) => {
      while (!stop) {
        batch += 1;
        const ids = Array.from({ length: 20 }, (_, i) => `lane${lane}-b${batch}-e${i}`);
        const raw = JSON.stringify({ events: ids.map((id) => ({ id, path: `/honeypot/topics/${id}`, ip: '198.51.100.9', ua: 'curl/8.5.0' })) });
        try {
          const res = await fetch(`${service.base}/api/observatory/honeypot/ingest`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'x-observatory-tenant': 'crash',
              'x-observatory-signature': signatureHeader(signingSecret, Math.floor(Date.now() / 1000), raw),
            },
            body: raw,
          });
          if (res.status === 200) acknowledged.push(...ids);
        } catch {
          return; // the process is gone
        }
      }
    };
    const lanes = [0, 1, 2, 3].map(sender);
    const deadline = Date.now() + 20_000;
    while (acknowledged.length < 400 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    service.child.kill('SIGKILL');
    await service.exited;
    stop = true;
    await Promise.all(lanes);
    expect(acknowledged.length).toBeGreaterThanOrEqual(400);

    const stored = await storedSenderIds();
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);

    // And the service starts again on the same storage and serves those events' tenant.
    const again = startService(env);
    await waitReady(again);
    const tenants = await fetch(`${again.base}${V1}/honeypot/tenants`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(((await tenants.json()) as { tenants: { slug: string }[] }).tenants.map((t) => t.slug)).toContain('crash');
    // Pending rollup rows the kill left behind are applied once: the dashboard counts every stored event.
    const dashboard = await fetch(`${again.base}${V1}/honeypot/dashboard?tenant=crash&window=24h`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(((await dashboard.json()) as { kpis: { totalEvents: number } }).kpis.totalEvents).toBe(stored.size);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000);
});
