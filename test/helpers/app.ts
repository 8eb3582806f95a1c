import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { eq } from 'drizzle-orm';
import type { FastifyBaseLogger, InjectOptions, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { type App, createApp } from '../../src/app.ts';
import { honeypotSettings } from '../../src/domains/honeypot/schema.ts';
import type { Clock } from '../../src/platform/clock.ts';
import { type Config, loadConfig } from '../../src/platform/config.ts';
import type { Database } from '../../src/platform/db/client.ts';
import { type Scope, V1 } from '../../src/platform/http/registry.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';
import { configSecrets } from './secret-scan.ts';
import { recordSecret, spoolActive, spoolLogDestination } from './spool.ts';

export { V1 };

/** The admin token every test app starts with (OBSERVATORY_ADMIN_TOKEN). */
export const ADMIN_TOKEN = 'svctok_testadmintokentestadmintokentestadmin00';

export interface TestApp {
  app: App;
  testDb: TestDatabase;
  /** `inject` with the admin token unless `token` is given (`null` sends no credential). */
  call(options: InjectOptions & { token?: string | null }): Promise<LightMyRequestResponse>;
  /** Creates a token carrying exactly these scopes (through the API) and returns its plaintext. */
  tokenWith(scopes: Scope[]): Promise<string>;
  /** Another app instance on the same database, as a second server behind a load balancer. */
  secondInstance(env?: Record<string, string>): Promise<App>;
  close(): Promise<void>;
}

export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    OBSERVATORY_ADMIN_TOKEN: ADMIN_TOKEN,
    OBSERVATORY_SCHEDULER: '0',
    LOG_LEVEL: 'silent',
    OBSERVATORY_PUBLIC_URL: 'http://localhost:8080',
    // No test asks a real DNS server: the reverse DNS tests start their own and name it.
    OBSERVATORY_RDNS: '0',
    // Snapshot files of test apps go to the system temp directory, one folder per test worker
    // (shared by the instances a test starts on one database), never into the checkout's data/.
    OBSERVATORY_BACKUP_DIR: path.join(tmpdir(), 'observatory-test-backups', `${process.pid}-${threadId}`),
    ...extra,
  };
}

export async function startTestApp(
  options: { clock?: Clock; env?: Record<string, string>; testDb?: TestDatabase; rateKeyPrefix?: string } = {},
): Promise<TestApp> {
  const testDb = options.testDb ?? (await createTestDatabase());
  const rateKeyPrefix = `test-${randomUUID()}`;
  const apps: App[] = [];
  const databases: Database[] = [];
  const boot = async (env: Record<string, string>) => {
    const database = await testDb.open();
    databases.push(database);
    const config = loadConfig(testEnv(env));
    const app = await createApp({
      config,
      database,
      logger: testLogger(),
      ...(options.clock ? { clock: options.clock } : {}),
      // Chaos runs move only when a test steps them (app.chaos.runs.runner.step), as the scheduler only ticks when told.
      chaosAutoStep: false,
      // Test files run side by side on one Redis: each app counts under its own prefix unless a
      // test shares one between instances on purpose.
      rateKeyPrefix: options.rateKeyPrefix ?? rateKeyPrefix,
    });
    apps.push(app);
    await recordAppSecrets(app, config);
    return app;
  };
  const app = await boot(options.env ?? {});

  const call: TestApp['call'] = async ({ token, headers, ...rest }) => {
    const credential = token === undefined ? ADMIN_TOKEN : token;
    return app.server.inject({
      ...rest,
      headers: { ...(credential === null ? {} : { authorization: `Bearer ${credential}` }), ...headers },
    });
  };

  return {
    app,
    testDb,
    call,
    async tokenWith(scopes) {
      const res = await call({ method: 'POST', url: `${V1}/tokens`, payload: { name: `test-${scopes.length}-scopes`, scopes } });
      if (res.statusCode !== 200) throw new Error(`token create failed: ${res.statusCode} ${res.body}`);
      return res.json<{ token: string }>().token;
    },
    secondInstance: (env = {}) => boot({ ...(options.env ?? {}), ...env }),
    async close() {
      for (const a of apps.reverse()) await a.close();
      await testDb.drop();
    },
  };
}

/**
 * Silent, unless the run scans for leaked secrets (test/global-setup.ts): then the production
 * logger, with its redaction, at debug level into this worker's spool.
 */
export function testLogger(): FastifyBaseLogger {
  return spoolActive() ? createLogger('debug', spoolLogDestination) : pino({ level: 'silent' });
}

/** Tells the secret-leak scan the app's configured credentials and its IP hash key, which no response reveals. */
export async function recordAppSecrets(app: App, config: Config): Promise<void> {
  if (!spoolActive()) return;
  for (const secret of configSecrets(config)) recordSecret(secret.kind, secret.value, 'the test app config');
  const [row] = await app.database.db
    .select({ value: honeypotSettings.value })
    .from(honeypotSettings)
    .where(eq(honeypotSettings.key, 'ip-hash-key'));
  if (row) recordSecret('IP hash key', row.value, 'the honeypot settings');
}

/** Runs a job now through `POST {v1}/ops/jobs/{job}/run` and returns the run's stats; fails unless it ran ok. */
export async function runJob(t: TestApp, job: string): Promise<Record<string, number>> {
  const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/${job}/run` });
  if (res.statusCode !== 200 || res.json().run.outcome !== 'ok') throw new Error(`job ${job} did not run ok: ${res.statusCode} ${res.body}`);
  return res.json().run.stats;
}
