import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { freePort } from './helpers/ports.ts';

/**
 * The router as operators run it (`npm run router`: packages/router/src/cli.ts in its own
 * process) against the service on a real port: it starts from the environment, records what it
 * serves, stops cleanly on SIGTERM, and a kill -9 in the middle of traffic loses and duplicates
 * nothing it had answered: every answered request is in its spool before the answer, and the
 * next start sends what the service had not acknowledged.
 */

let t: TestApp;
let service: string;
let secret: string;
const dirs: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  t = await startTestApp();
  service = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug: 'router-proc', name: 'Router process' } });
  secret = created.json().signingSecret;
}, 180_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await t?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface RouterProcess {
  child: ChildProcess;
  site: string;
  admin: string;
  exited: Promise<number | null>;
  output: () => string;
}

async function startRouter(extra: Record<string, string> = {}): Promise<RouterProcess> {
  const adminPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/router/src/cli.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      OBSERVATORY_URL: service,
      OBSERVATORY_TENANT: 'router-proc',
      OBSERVATORY_TENANT_SECRET: secret,
      ROUTER_PORT: '0',
      ROUTER_HOST: '127.0.0.1',
      ROUTER_ADMIN_PORT: String(adminPort),
      ...extra,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const listening = output.split('\n').find((line) => line.includes('"router listening"'));
    if (listening) return { child, site: JSON.parse(listening).url, admin: `http://127.0.0.1:${adminPort}/metrics`, exited, output: () => output };
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the router did not start: ${output}`);
}

async function stored(): Promise<string[]> {
  const answer = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=router-proc&limit=100` });
  return (answer.json().events as Array<{ path: string }>).map((e) => e.path);
}

describe('the router process', () => {
  it('refuses to start without its settings, naming the missing one', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/router/src/cli.ts'], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (d) => (output += String(d)));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(2);
    expect(output).toContain('OBSERVATORY_URL is required');
  });

  it('starts from the environment, serves and records, reports its counters, and stops on SIGTERM', async () => {
    const router = await startRouter();
    const page = await fetch(`${router.site}/honeypot/topics/process-check`, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; ClaudeBot/1.0)' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>');
    await expect.poll(async () => (await stored()).includes('/honeypot/topics/process-check'), { timeout: 10_000 }).toBe(true);
    const counters = await (await fetch(router.admin)).json();
    expect(counters).toMatchObject({ requests: 1, sender: { sent: 1, dropped: 0 } });
    router.child.kill('SIGTERM');
    expect(await router.exited).toBe(0);
    expect(router.output()).toContain('"stopped"');
  }, 90_000);

  it('loses and duplicates nothing it answered when killed with SIGKILL mid-stream', async () => {
    const spool = mkdtempSync(path.join(tmpdir(), 'router-spool-'));
    dirs.push(spool);
    // The service stays up, but the router's batches wait 3 s, so the kill catches answered
    // requests not yet sent.
    const first = await startRouter({ ROUTER_SPOOL_DIR: spool, ROUTER_BATCH_MAX_WAIT_MS: '3000' });
    const answered: string[] = [];
    let killed = false;
    const client = async (worker: number) => {
      for (let i = 0; i < 20 && !killed; i += 1) {
        const p = `/q/kill-${worker}-${i}`;
        try {
          const response = await fetch(`${first.site}${p}`, { headers: { 'user-agent': 'Mozilla/5.0 kill-test' } });
          await response.text();
          if (response.status === 200) answered.push(p);
        } catch {
          // the router died under this request: not answered
        }
      }
    };
    const traffic = Promise.all([0, 1, 2, 3].map(client));
    await expect.poll(() => answered.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(30);
    first.child.kill('SIGKILL');
    killed = true;
    await first.exited;
    await traffic;
    // Answered, spooled, but not all sent when the router died:
    expect((await stored()).filter((p) => p.startsWith('/q/kill-')).length).toBeLessThan(answered.length);

    const second = await startRouter({ ROUTER_SPOOL_DIR: spool });
    await expect.poll(async () => (await (await fetch(second.admin)).json()).sender.pending, { timeout: 20_000 }).toBe(0);
    const paths = (await stored()).filter((p) => p.startsWith('/q/kill-'));
    for (const p of answered) expect(paths).toContain(p);
    expect(new Set(paths).size).toBe(paths.length);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);
});
