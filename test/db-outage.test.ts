import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/platform/config.ts';
import { databaseOptions, openDatabase } from '../src/platform/db/client.ts';
import { isDatabaseUnavailable, withTransaction } from '../src/platform/db/transaction.ts';
import { startTestApp, type TestApp, testEnv, V1 } from './helpers/app.ts';
import { createTestDatabase, onServer } from './helpers/database.ts';
import { ingestEmpire } from './helpers/empire.ts';
import { CHROME_UA, createTenant, signedIngest } from './helpers/honeypot.ts';
import { startTcpProxy, type TcpProxy, throughProxy } from './helpers/tcp-proxy.ts';

/**
 * PostgreSQL goes away under load (docs/operations.md, "When PostgreSQL or Redis goes away"): the
 * app reaches its database through a TCP proxy that the test cuts. Every request answers 503
 * `unavailable` or had succeeded, none hangs or answers 500, readiness follows the database,
 * liveness does not, the app recovers by itself, and every write it acknowledged is stored.
 */
const PGLITE_REASON = 'PGlite runs inside the process, so there is no server to take away; test/errors.test.ts closes it and expects 503';
if (!onServer) console.info(`test/db-outage.test.ts skipped: ${PGLITE_REASON}.`);

/** Short limits so a silent server is noticed within a test; the defaults are 5 s and 20 s. */
const TIMEOUT_MS = 3_000;
/** Far beyond what a request may take with those limits (a wait for a connection, then a statement). */
const HANG_MS = 15_000;
const WORKERS = 24;
const TOOLSET = 'outage-lab';
const TENANT = 'outage-tenant';

type Kind = 'token' | 'empire' | 'honeypot' | 'read';
const KINDS: Kind[] = ['token', 'empire', 'honeypot', 'read'];

interface Outcome {
  kind: Kind;
  key: string;
  /** Whether the database was cut when the request was sent. */
  sentWhileCut: boolean;
  status: number | 'hung';
  reason: string | null;
  schema: string | null;
  ms: number;
}

describe.skipIf(!onServer)(`PostgreSQL goes away under load${onServer ? '' : ` (skipped: ${PGLITE_REASON})`}`, () => {
  let proxy: TcpProxy;
  let t: TestApp;
  let directUrl: string;
  let secret: string;

  beforeAll(async () => {
    const server = new URL(process.env.DATABASE_URL!);
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const testDb = await createTestDatabase({
      // The service's own way of opening its pool, from its configuration, through the proxy.
      open: (url) =>
        openDatabase(
          databaseOptions(
            loadConfig(
              testEnv({
                DATABASE_URL: throughProxy(url, proxy),
                DB_POOL_MAX: '5',
                OBSERVATORY_DB_CONNECT_TIMEOUT_MS: String(TIMEOUT_MS),
                OBSERVATORY_DB_QUERY_TIMEOUT_MS: String(TIMEOUT_MS),
              }),
            ),
          ),
        ),
    });
    directUrl = testDb.url!;
    // The rollup applier stays out of the way: the test counts the connections in use.
    t = await startTestApp({ testDb, env: { OBSERVATORY_ROLLUP_APPLY_DELAY_MS: '600000' } });
    secret = await createTenant(t, TENANT);
    // Generous: start-up is slow on a loaded machine.
  }, 180_000);
  afterAll(async () => {
    proxy?.restore();
    await t?.close();
    await proxy?.close();
  });

  let cut = false;
  const outcomes: Outcome[] = [];
  const waiters: (() => void)[] = [];

  function request(kind: Kind, key: string): Promise<LightMyRequestResponse> {
    switch (kind) {
      case 'token':
        return t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: key, scopes: ['read:dashboard'] } });
      case 'empire':
        return ingestEmpire(t, TOOLSET, [{ id: key, eventType: 'outage.probe', payload: { key } }]);
      case 'honeypot':
        return signedIngest(t, {
          slug: TENANT,
          secret,
          unixSeconds: Math.floor(Date.now() / 1000),
          body: { events: [{ id: key, path: `/honeypot/topics/${key}`, ua: CHROME_UA, ip: '198.51.100.20' }] },
        });
      case 'read':
        return t.call({ method: 'GET', url: `${V1}/tokens` });
    }
  }

  async function send(kind: Kind, key: string): Promise<Outcome> {
    const sentWhileCut = cut;
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => resolve('hung'), HANG_MS);
    });
    const res = await Promise.race([request(kind, key), hung]).finally(() => clearTimeout(timer));
    const body = res === 'hung' ? null : (res.json() as { schema?: string; reason?: string });
    const outcome: Outcome = {
      kind,
      key,
      sentWhileCut,
      status: res === 'hung' ? 'hung' : res.statusCode,
      reason: body?.reason ?? null,
      schema: body?.schema ?? null,
      ms: performance.now() - started,
    };
    outcomes.push(outcome);
    for (const wake of waiters.splice(0)) wake();
    return outcome;
  }

  /** Resolves once `predicate` holds after some request has answered; fails past HANG_MS × 2. */
  function progress(what: string, predicate: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`no progress: ${what}`)), HANG_MS * 2);
      const check = () => {
        if (predicate()) {
          clearTimeout(deadline);
          resolve();
        } else waiters.push(check);
      };
      check();
    });
  }

  /** `WORKERS` clients, each sending one request after another, of every kind in turn, until stopped. */
  function startLoad(label: string): { stop(): Promise<void> } {
    let stopped = false;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      for (let n = 0; !stopped; n++) await send(KINDS[(w + n) % KINDS.length]!, `${label}-${w}-${n}`);
    });
    return {
      async stop() {
        stopped = true;
        await Promise.all(workers);
      },
    };
  }

  function expectOnly200Or503Unavailable(list: Outcome[]) {
    const bad = list.filter((o) => o.status !== 200 && !(o.status === 503 && o.reason === 'unavailable' && o.schema === 'svc-error.v1'));
    expect(bad, 'every request answers 200 or 503 unavailable (svc-error.v1), never 500, never a hang').toEqual([]);
  }

  async function expectWritesWork(label: string) {
    const after = await Promise.all(KINDS.flatMap((kind) => [0, 1, 2].map((i) => send(kind, `${label}-after-${kind}-${i}`))));
    expect(after.filter((o) => o.status !== 200)).toEqual([]);
  }

  /** Reads the database directly (not through the proxy): every acknowledged write is there. */
  async function expectNoAcknowledgedLoss() {
    const acked = (kind: Kind) => outcomes.filter((o) => o.kind === kind && o.status === 200).map((o) => o.key);
    const client = new pg.Client({ connectionString: directUrl });
    await client.connect();
    try {
      const stored = async (query: string, keys: string[]) => new Set((await client.query<{ key: string }>(query, [keys])).rows.map((r) => r.key));
      const tokens = await stored('SELECT name AS key FROM api_tokens WHERE name = ANY($1)', acked('token'));
      const empire = await stored(`SELECT sender_id AS key FROM empire_events WHERE toolset = '${TOOLSET}' AND sender_id = ANY($1)`, acked('empire'));
      const honeypot = await stored('SELECT sender_id AS key FROM honeypot_events WHERE sender_id = ANY($1)', acked('honeypot'));
      expect(acked('token').length).toBeGreaterThan(0);
      expect(acked('empire').length).toBeGreaterThan(0);
      expect(acked('honeypot').length).toBeGreaterThan(0);
      expect(acked('token').filter((k) => !tokens.has(k)), 'acknowledged tokens missing').toEqual([]);
      expect(acked('empire').filter((k) => !empire.has(k)), 'acknowledged toolset events missing').toEqual([]);
      expect(acked('honeypot').filter((k) => !honeypot.has(k)), 'acknowledged honeypot events missing').toEqual([]);
    } finally {
      await client.end();
    }
  }

  /**
   * Once the buffered rows are written, no connection is still checked out: a request that failed
   * mid-transaction gave its connection back (a lost one would shrink the pool for good).
   */
  async function expectNoConnectionHeld() {
    await t.app.honeypot.ingest.flushSamples();
    await t.app.empire.ingest.flushSamples();
    const { total, idle, waiting } = t.app.database.poolStats();
    expect({ checkedOut: total - idle, waiting }).toEqual({ checkedOut: 0, waiting: 0 });
    // Nor is any connection left inside a transaction that a timed-out request began: the next
    // request given it would write into that transaction, and its locks would stall the others.
    const client = new pg.Client({ connectionString: directUrl });
    await client.connect();
    try {
      const open = await client.query(`SELECT state, query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state LIKE 'idle in transaction%'`);
      expect(open.rows).toEqual([]);
    } finally {
      await client.end();
    }
  }

  async function statusOf(url: string): Promise<{ status: number; reason: string | null }> {
    const res = await t.call({ method: 'GET', url, token: null });
    return { status: res.statusCode, reason: (res.json() as { reason?: string }).reason ?? null };
  }

  it('refused connections: 503 unavailable at once, readiness 503, liveness 200, recovery without a restart, no acknowledged write lost', async () => {
    expect(await statusOf('/readyz')).toEqual({ status: 200, reason: null });
    const load = startLoad('refuse');
    await progress('load before the cut', () => outcomes.filter((o) => o.status === 200).length >= 40);

    cut = true;
    proxy.cut('refuse');
    const sinceCut = () => outcomes.filter((o) => o.sentWhileCut);
    await progress('load during the cut', () => sinceCut().length >= 60);
    expect(await statusOf('/readyz')).toEqual({ status: 503, reason: 'unavailable' });
    expect((await statusOf('/healthz')).status).toBe(200);
    await load.stop();

    expectOnly200Or503Unavailable(outcomes);
    // Nothing sent while the database is away can succeed: each needs it.
    expect(sinceCut().filter((o) => o.status !== 503)).toEqual([]);
    // A refused connection is known at once: no request waits for a timeout.
    expect(Math.max(...sinceCut().map((o) => o.ms))).toBeLessThan(TIMEOUT_MS);

    cut = false;
    proxy.restore();
    expect(await statusOf('/readyz')).toEqual({ status: 200, reason: null });
    await expectWritesWork('refuse');
    await expectNoAcknowledgedLoss();
    await expectNoConnectionHeld();
  });

  it('a statement that times out closes its connection: the next write on the pool is not swallowed by the transaction left open', async () => {
    const direct = new pg.Client({ connectionString: directUrl });
    await direct.connect();
    // One connection, so the write after the outage is given the very connection that timed out.
    const database = await openDatabase({ databaseUrl: throughProxy(directUrl, proxy), dataDir: null, poolMax: 1, connectTimeoutMs: TIMEOUT_MS, queryTimeoutMs: 1_000 });
    try {
      await direct.query('CREATE TABLE outage_probe (note text NOT NULL)');
      const failed = await withTransaction(database.db, async (tx) => {
        await tx.execute(sql`INSERT INTO outage_probe VALUES ('in the failed transaction')`);
        proxy.cut('blackhole');
        await tx.execute(sql`SELECT 1`);
      }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(failed)).toBe(true);
      proxy.restore();
      await database.db.execute(sql`INSERT INTO outage_probe VALUES ('acknowledged after the outage')`);
      const rows = await direct.query<{ note: string }>('SELECT note FROM outage_probe');
      expect(rows.rows.map((r) => r.note)).toEqual(['acknowledged after the outage']);
    } finally {
      proxy.restore();
      await database.close();
      await direct.end();
    }
  });

  it('a silent server (black hole): 503 unavailable within the configured limits, readiness 503 within its own, then recovery', async () => {
    expect(await statusOf('/readyz')).toEqual({ status: 200, reason: null });
    const before = outcomes.length;
    const load = startLoad('silent');
    await progress('load before the cut', () => outcomes.slice(before).filter((o) => o.status === 200).length >= 40);

    cut = true;
    proxy.cut('blackhole');
    const sinceCut = () => outcomes.slice(before).filter((o) => o.sentWhileCut);
    const readyStarted = performance.now();
    expect(await statusOf('/readyz')).toEqual({ status: 503, reason: 'unavailable' });
    expect(performance.now() - readyStarted).toBeLessThan(HANG_MS);
    expect((await statusOf('/healthz')).status).toBe(200);
    await progress('load during the cut', () => sinceCut().length >= 2 * WORKERS);
    await load.stop();

    expectOnly200Or503Unavailable(outcomes.slice(before));
    expect(sinceCut().filter((o) => o.status !== 503)).toEqual([]);

    cut = false;
    proxy.restore();
    expect(await statusOf('/readyz')).toEqual({ status: 200, reason: null });
    await expectWritesWork('silent');
    await expectNoAcknowledgedLoss();
    await expectNoConnectionHeld();
  });
});
