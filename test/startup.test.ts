import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/platform/config.ts';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { type Running, startService, waitReady } from './helpers/process.ts';

/**
 * `npm start` as an operator runs it: a real process, real signals, real restarts, on the
 * embedded database in DATA_DIR (or a fresh database on the server when DATABASE_URL is set).
 *
 * Each start costs seconds of CPU (tsx loading some 600 modules, PGlite opening its directory,
 * the ASN table), so the three independent stories run side by side, each on its own storage:
 * the configuration error, the crash and restart, and the admin token with SIGINT.
 */
const ADMIN = 'svctok_startupadmintokenstartupadmintoken0000';
const V1 = '/api/observatory/v1';

interface Storage {
  dataDir: string;
  testDb: TestDatabase;
}
const storages: Storage[] = [];
const started: Running[] = [];
afterAll(async () => {
  // A test that failed half-way leaves its process running; it must not outlive the file.
  for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const { dataDir, testDb } of storages) {
    rmSync(dataDir, { recursive: true, force: true });
    await testDb.drop();
  }
});

/** A data directory (and, with DATABASE_URL, a server database) of its own. */
async function freshStorage(): Promise<Storage> {
  const storage = { dataDir: mkdtempSync(join(tmpdir(), 'observatory-start-')), testDb: await createTestDatabase({ empty: true }) };
  storages.push(storage);
  return storage;
}

function start({ dataDir, testDb }: Storage, env: Record<string, string>): Running {
  const running = startService({ DATA_DIR: dataDir, ...(testDb.url ? { DATABASE_URL: testDb.url } : {}), ...env });
  started.push(running);
  return running;
}

const api = (running: Running, path: string, token: string, init: RequestInit = {}) =>
  fetch(`${running.base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });

describe.concurrent('configuration', () => {
  it('names the variable of a bad value', () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: 'eighty' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [{ OBSERVATORY_ADMIN_TOKEN: 'letmein' }, 'OBSERVATORY_ADMIN_TOKEN'],
      [{ OBSERVATORY_SCHEDULER: 'maybe' }, 'OBSERVATORY_SCHEDULER'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ OBSERVATORY_PUBLIC_URL: 'not a url' }, 'OBSERVATORY_PUBLIC_URL'],
    ];
    for (const [env, variable] of cases) {
      let caught: unknown;
      try {
        loadConfig(env);
      } catch (error) {
        caught = error;
      }
      expect(caught, variable).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).variable).toBe(variable);
    }
    expect(loadConfig({})).toMatchObject({ port: 8080, host: '127.0.0.1', dataDir: './data', databaseUrl: null });
  });

  it('stops start-up with one clear line naming the variable', async () => {
    // Refused before storage is opened, so it needs none.
    const running = startService({ PORT: 'eighty' });
    started.push(running);
    expect(await running.exited).toBe(1);
    const lines = running.stderr().trim().split('\n').filter((l) => !l.includes('ExperimentalWarning'));
    expect(lines.at(-1)).toBe('observatory: configuration error: PORT: must be a whole number, got "eighty"');
    // main.ts loads every module before it reads the configuration, so even this costs a full module load.
  }, 240_000);
});

describe.concurrent('npm start', () => {
  it('prints a first-start token once, persists acknowledged writes through a crash, and shuts down cleanly', async () => {
    const storage = await freshStorage();
    const first = start(storage, {});
    await waitReady(first);
    const printed = /svctok_[A-Za-z0-9_-]{43}/.exec(first.stdout())?.[0];
    expect(printed).toBeDefined();
    const created = await api(first, `${V1}/tokens`, printed!, { method: 'POST', body: JSON.stringify({ name: 'survivor', scopes: ['read:events'] }) });
    expect(created.status).toBe(200);
    const survivor = ((await created.json()) as { token: string }).token;
    // Killed without warning right after the acknowledgement.
    first.child.kill('SIGKILL');
    await first.exited;

    const second = start(storage, {});
    await waitReady(second);
    expect(second.stdout()).not.toMatch(/svctok_/);
    expect((await api(second, `${V1}/account`, survivor)).status).toBe(200);
    expect((await api(second, `${V1}/account`, printed!)).status).toBe(200);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    // Two cold starts of `npm start` one after the other (tsx loading modules, PGlite opening a
    // data directory), while the other starts of this file and the other test worker run beside it.
  }, 240_000);

  it('makes sure OBSERVATORY_ADMIN_TOKEN exists with every scope, and answers health without auth', async () => {
    const running = start(await freshStorage(), { OBSERVATORY_ADMIN_TOKEN: ADMIN });
    await waitReady(running);
    // With the admin token configured, no other token is made or printed.
    expect(running.stdout()).not.toMatch(/svctok_/);
    const health = await fetch(`${running.base}/healthz`);
    expect(health.status).toBe(200);
    const account = (await (await api(running, `${V1}/account`, ADMIN)).json()) as { username: string; scopes: string[] };
    expect(account.username).toBe('admin');
    expect(account.scopes).toHaveLength(12);
    running.child.kill('SIGINT');
    expect(await running.exited).toBe(0);
  }, 240_000);
});
