import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { createAuditLog } from '../audit/service.ts';
import { ManualClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { type Database, rowsOf } from '../db/client.ts';
import { type Principal, type Scope, V1 } from '../http/registry.ts';
import { buildServer } from '../http/server.ts';
import { createMetrics } from '../metrics.ts';
import { outboundEndpoints } from './endpoints.ts';
import type { Resolver } from './safe-fetch.ts';
import { createOutbound } from './service.ts';
import { closedPort, type Receiver, startReceiver } from '../../../test/helpers/http-receiver.ts';

const URL_SECRET = 'B0SECRETPATHxq7'; // the part of a chat webhook URL that is its credential
const principal = (scopes: Scope[]): Principal => ({
  userId: '0b7f9a1c-5d2e-4c6b-8e3a-1f2d3c4b5a69',
  username: 'operator',
  scopes: new Set(scopes),
  toolsets: null,
  via: 'bearer',
  tokenId: null,
  sessionId: null,
});

let rx: Receiver;
let testDb: TestDatabase;
let database: Database;
/** Private outbound allowed (as in tests and labs), and the production default. */
let lax: FastifyInstance;
let strict: FastifyInstance;
/** Production defaults, with a DNS that answers an internal address for every name. */
let internalDns: FastifyInstance;
const INTERNAL_ADDRESS = '10.20.30.40';
/** A port where nothing listens, taken before the servers start so the allow-list can hold it. */
let downPort: number;
const logLines: string[] = [];

async function server(allowPrivate: boolean, resolve?: Resolver): Promise<FastifyInstance> {
  const clock = new ManualClock('2026-11-23T09:10:00.000Z');
  const logger = pino(
    { level: 'trace' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  const config = loadConfig({
    OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: allowPrivate ? '1' : '0',
    OBSERVATORY_OUTBOUND_TIMEOUT_MS: '1000',
    // The test receivers listen on random ports; outbound ports are limited to the allow-list.
    OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port},${downPort}`,
  });
  const outbound = createOutbound({ db: database.db, clock, config, log: logger, ...(resolve ? { resolve } : {}) });
  const app = buildServer({
    endpoints: outboundEndpoints(outbound, createAuditLog({ clock })),
    credentials: {
      fromBearer: async (token) =>
        token === 'ok' ? principal(['write:alerts']) : token === 'reader' ? principal(['read:alerts', 'read:dashboard']) : null,
      fromSession: async () => null,
    },
    clock,
    metrics: createMetrics(() => database.poolStats()),
    metricsToken: null,
    logger,
    trustProxy: false,
  });
  await app.ready();
  return app;
}

beforeAll(async () => {
  rx = await startReceiver();
  downPort = await closedPort();
  ({ testDb, database } = await openTestDatabase());
  lax = await server(true);
  strict = await server(false);
  internalDns = await server(false, async () => [{ address: INTERNAL_ADDRESS, family: 4 }]);
});
afterAll(async () => {
  await lax.close();
  await strict.close();
  await internalDns.close();
  await rx.close();
  await testDb.drop();
});
beforeEach(() => {
  rx.requests.length = 0;
  rx.respond = () => ({ status: 200 });
});

const PATH = `${V1}/integrations/slack/test`;
const post = (app: FastifyInstance, payload: unknown, token: string | null = 'ok') =>
  app.inject({ method: 'POST', url: PATH, payload: payload as object, headers: token === null ? {} : { authorization: `Bearer ${token}` } });

async function auditRows() {
  return rowsOf<{ verb: string; target: string; actor: string; after: Record<string, unknown> }>(
    await database.db.execute(sql`SELECT verb, target, actor, after FROM operator_audit WHERE verb = 'integrations.slack-test' ORDER BY seq_no`),
  );
}

describe('POST /integrations/slack/test', () => {
  it('sends one line once and answers with the webhook status', async () => {
    const before = (await auditRows()).length;
    const res = await post(lax, { webhookUrl: `${rx.origin}/services/T0/${URL_SECRET}`, text: 'hello <team> & co' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ schema: 'svc-observatory-slack-test.v1', generatedAt: '2026-11-23T09:10:00.000Z', ok: true, status: 200 });
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0]).toMatchObject({ method: 'POST', path: `/services/T0/${URL_SECRET}` });
    expect(JSON.parse(rx.requests[0]!.body)).toEqual({ text: 'hello &lt;team&gt; &amp; co' });
    const audit = await auditRows();
    expect(audit).toHaveLength(before + 1);
    expect(audit.at(-1)).toEqual({
      verb: 'integrations.slack-test',
      target: 'integration:slack:127.0.0.1',
      actor: 'operator',
      after: { host: '127.0.0.1', ok: true, status: 200 },
    });
  });

  it('sends the default line when no text is given', async () => {
    expect((await post(lax, { webhookUrl: `${rx.origin}/hook` })).statusCode).toBe(200);
    expect(JSON.parse(rx.requests[0]!.body)).toEqual({ text: 'Observatory test message' });
  });

  it('reports a webhook that answers an error, or a redirect, as not ok', async () => {
    rx.respond = (r) => (r.path === '/gone' ? { status: 404 } : { status: 302, headers: { location: '/gone' } });
    expect((await post(lax, { webhookUrl: `${rx.origin}/gone` })).json()).toMatchObject({ ok: false, status: 404 });
    expect((await post(lax, { webhookUrl: `${rx.origin}/moved` })).json()).toMatchObject({ ok: false, status: 302 });
    expect(rx.requests.map((r) => r.path)).toEqual(['/gone', '/moved']);
  });

  it('answers ok false with status 0 when the webhook cannot be reached', async () => {
    const res = await post(lax, { webhookUrl: `http://127.0.0.1:${downPort}/${URL_SECRET}` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, status: 0 });
    rx.respond = () => 'hang';
    const slow = await post(lax, { webhookUrl: `${rx.origin}/slow` });
    expect(slow.json()).toMatchObject({ ok: false, status: 0 });
  });

  it('answers 400 to a body that is not a usable URL', async () => {
    for (const payload of [{ webhookUrl: 'not a url' }, {}, { webhookUrl: `${rx.origin}/x`, text: '' }, { webhookUrl: `${rx.origin}/x`, text: 'x'.repeat(501) }, { webhookUrl: `${rx.origin}/x`, extra: 1 }]) {
      const res = await post(lax, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body' });
    }
    const ftp = await post(lax, { webhookUrl: 'ftp://files.example/hook' });
    expect(ftp.statusCode).toBe(400);
    expect(ftp.json()).toMatchObject({ reason: 'outbound-refused', human: 'The webhook URL was refused: only http and https URLs are allowed, not ftp.' });
    expect(rx.requests).toHaveLength(0);
  });

  it('refuses private, loopback and metadata addresses unless they are allowed', async () => {
    for (const webhookUrl of [
      `${rx.origin}/services/${URL_SECRET}`,
      `http://localhost:${rx.port}/hook`,
      `http://[::1]:${rx.port}/hook`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.8/hook',
    ]) {
      const res = await post(strict, { webhookUrl });
      expect(res.statusCode, webhookUrl).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'outbound-refused', field: 'body.webhookUrl' });
      expect(res.body).not.toContain(URL_SECRET);
    }
    expect(rx.requests).toHaveLength(0);
    expect((await post(lax, { webhookUrl: `${rx.origin}/services/${URL_SECRET}` })).json()).toMatchObject({ ok: true });
  });

  it('does not say which internal address a webhook host resolves to', async () => {
    const before = logLines.length;
    const res = await post(internalDns, { webhookUrl: `https://intranet.corp.example/services/${URL_SECRET}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      reason: 'outbound-refused',
      field: 'body.webhookUrl',
      human: 'The webhook URL was refused: intranet.corp.example resolves to an address outbound calls may not reach (set OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1 to allow non-public addresses).',
    });
    expect(res.body).not.toContain(INTERNAL_ADDRESS);
    expect(logLines.slice(before).join('\n')).not.toContain(INTERNAL_ADDRESS);
  });

  it('refuses a port outside OBSERVATORY_OUTBOUND_ALLOWED_PORTS, even with private outbound allowed', async () => {
    for (const port of [22, 5432, 6379]) {
      const res = await post(lax, { webhookUrl: `http://127.0.0.1:${port}/hook` });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({
        reason: 'outbound-refused',
        field: 'body.webhookUrl',
        human: `The webhook URL was refused: port ${port} is not an allowed outbound port (allowed: 80, 443, ${[rx.port, downPort].sort((a, b) => a - b).join(', ')}; set OBSERVATORY_OUTBOUND_ALLOWED_PORTS).`,
      });
    }
    expect(rx.requests).toHaveLength(0);
  });

  it('answers 401 without a credential and 403 without write:alerts, sending nothing', async () => {
    const payload = { webhookUrl: `${rx.origin}/hook` };
    const anonymous = await post(lax, payload, null);
    expect(anonymous.statusCode).toBe(401);
    expect((await post(lax, payload, 'wrong-token')).statusCode).toBe(401);
    const reader = await post(lax, payload, 'reader');
    expect(reader.statusCode).toBe(403);
    expect(reader.json()).toMatchObject({ reason: 'forbidden' });
    expect(rx.requests).toHaveLength(0);
  });

  it('stores the URL nowhere: no table and no log line holds it', async () => {
    const res = await post(lax, { webhookUrl: `${rx.origin}/services/T9/${URL_SECRET}?token=${URL_SECRET}` });
    expect(res.json()).toMatchObject({ ok: true });
    const tables = rowsOf<{ name: string }>(
      await database.db.execute(sql`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`),
    ).map((t) => t.name);
    expect(tables).toEqual(expect.arrayContaining(['operator_audit', 'audit_facts', 'outbound_deliveries']));
    let scanned = '';
    for (const table of tables) {
      const [row] = rowsOf<{ dump: string | null }>(
        await database.db.execute(sql`SELECT json_agg(t)::text AS dump FROM ${sql.identifier(table)} t`),
      );
      scanned += row?.dump ?? '';
    }
    // The scan did see the audit rows (so it would have seen a URL in them).
    expect(scanned).toContain('integrations.slack-test');
    expect(scanned).toContain('127.0.0.1');
    expect(scanned).not.toContain(URL_SECRET);
    expect(scanned).not.toContain('/services/');
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(URL_SECRET);
  });
});
