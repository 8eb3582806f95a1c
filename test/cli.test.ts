import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './helpers/database.ts';
import { type Running, startService, waitReady } from './helpers/process.ts';

/**
 * The operator commands with `npm start` running, as the README has an operator type them: the
 * CLI must not open the server's data directory, must go through the server with a token, and
 * what it did must be what the server sees, before and after a restart.
 */
const ADMIN = 'svctok_clitestadmintokenclitestadmintoken00000';
const V1 = '/api/observatory/v1';

let dataDir = '';
let testDb: TestDatabase | null = null;
const started: Running[] = [];
afterAll(async () => {
  for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  await testDb?.drop();
});

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** `npm run cli -- …` as a process of its own, with only the environment given. */
function cli(args: string[], env: Record<string, string>): Promise<CliRun> {
  const began = Date.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += String(d)));
  child.stderr.on('data', (d) => (stderr += String(d)));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - began })));
}

const api = (running: Running, path: string, token: string) => fetch(`${running.base}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe('operator commands with the server running', () => {
  it('go through the server: an operator whose token works, a job run the server saw, both surviving a restart', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'observatory-cli-'));
    testDb = await createTestDatabase();
    const storage = { DATA_DIR: dataDir, ...(testDb.url ? { DATABASE_URL: testDb.url } : {}) };
    const first = startService({ ...storage, OBSERVATORY_ADMIN_TOKEN: ADMIN });
    started.push(first);
    await waitReady(first);
    const port = new URL(first.base).port;
    // The CLI finds the server as an operator's shell would: PORT (and DATA_DIR) of the service.
    const env = { ...storage, PORT: port };
    const timings: Record<string, number> = {};

    if (!testDb.url) {
      // Without a token, the embedded data directory is the server's: refused, naming its pid, nothing written.
      const refused = await cli(['operator:add', 'mallory', 'read:events'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`in use by process ${first.child.pid}`);
      expect(refused.stderr).toMatch(/stop the server first/);
      expect(refused.stdout).not.toMatch(/svctok_/);
    }

    const added = await cli(['operator:add', 'alice', 'read:dashboard,read:events'], { ...env, OBSERVATORY_TOKEN: ADMIN });
    timings['operator:add'] = added.ms;
    expect(added.code, added.stderr).toBe(0);
    const alice = /svctok_[A-Za-z0-9_-]{43}/.exec(added.stdout)?.[0];
    expect(alice).toBeDefined();
    const account = await api(first, `${V1}/account`, alice!);
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ username: 'alice', scopes: ['read:dashboard', 'read:events'] });

    const job = await cli(['jobs:run', 'session-sweep', '--token', ADMIN], env);
    timings['jobs:run'] = job.ms;
    expect(job.code, job.stderr).toBe(0);
    const run = JSON.parse(job.stdout) as { id: string; outcome: string };
    expect(run.outcome).toBe('ok');
    const health = (await (await api(first, `${V1}/honeypot/ops/cron-health?limit=50`, ADMIN)).json()) as { recent: { id: string }[] };
    expect(health.recent.map((r) => r.id)).toContain(run.id);

    const issued = await cli(['tokens:issue', 'alice-ci', 'read:events', '--operator', 'alice'], { ...env, OBSERVATORY_TOKEN: ADMIN });
    expect(issued.code, issued.stderr).toBe(0);
    const aliceCi = /svctok_[A-Za-z0-9_-]{43}/.exec(issued.stdout)?.[0];
    const tenant = await cli(['tenants:create', 'edge-cli', 'Edge CLI'], { ...env, OBSERVATORY_TOKEN: ADMIN });
    expect(tenant.code, tenant.stderr).toBe(0);
    expect(tenant.stdout).toMatch(/whsec_/);
    const listed = await cli(['tenants:list'], { ...env, OBSERVATORY_TOKEN: ADMIN });
    timings['tenants:list'] = listed.ms;
    expect(listed.stdout).toContain('edge-cli');
    // The server's refusal reaches the operator as a readable line.
    const duplicate = await cli(['operator:add', 'alice', 'read:events'], { ...env, OBSERVATORY_TOKEN: ADMIN });
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/409: conflict: An operator named alice already exists/);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(existsSync(join(dataDir, 'observatory.lock'))).toBe(false);

    const second = startService({ ...storage, OBSERVATORY_ADMIN_TOKEN: ADMIN });
    started.push(second);
    await waitReady(second);
    expect((await api(second, `${V1}/account`, alice!)).status).toBe(200);
    expect((await api(second, `${V1}/account`, aliceCi!)).status).toBe(200);
    const audit = (await (await api(second, `${V1}/honeypot/ops/audit?limit=500`, ADMIN)).json()) as { rows: { verb: string; actor: string | null; after: { username?: string } }[] };
    expect(audit.rows.find((r) => r.verb === 'operator.create' && r.after.username === 'alice')).toMatchObject({ actor: 'admin' });
    expect(audit.rows.some((r) => r.verb === 'job.run')).toBe(true);
    const afterRestart = (await (await api(second, `${V1}/honeypot/ops/cron-health?limit=50`, ADMIN)).json()) as { recent: { id: string }[] };
    expect(afterRestart.recent.map((r) => r.id)).toContain(run.id);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    // No server, no token: the command opens the database itself, and finds what the server wrote.
    const direct = await cli(['operator:list'], env);
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stdout).toMatch(/^alice\t/m);
    expect(existsSync(join(dataDir, 'observatory.lock'))).toBe(false);
    // Each command is one HTTP call of a process that loads none of the service.
    process.stdout.write(`cli timings (ms, this machine under test load): ${JSON.stringify(timings)}\n`);
  }, 300_000);
});
