import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { freePort } from './helpers/ports.ts';

/**
 * The log shipper (packages/log-shipper) as operators run it (`npm run log-shipper`, its own
 * process) behind a real nginx and in front of the real service, both on real ports: every
 * request nginx logs is stored once, through a rename rotation with `nginx -s reopen`, and
 * through a kill -9 of the shipper in the middle of the traffic followed by a rotation while it
 * was down.
 */

const NGINX = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx'].find((candidate) => existsSync(candidate)) ?? null;
const LOG_FORMAT = '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" ja4="$http_x_ja4"';
const JA4 = 't13d1516h2_8daaf6152771_e5627efa2ab1';

let t: TestApp | undefined;
let service: string;
const secrets = new Map<string, string>();
const dirs: string[] = [];
const children: ChildProcess[] = [];
const nginxes: Process[] = [];

afterAll(async () => {
  // nginx's master is asked to stop (SIGTERM): killed outright it would leave its worker running.
  for (const nginx of nginxes) if (nginx.child.exitCode === null) nginx.child.kill('SIGTERM');
  await Promise.all(nginxes.map((nginx) => nginx.exited));
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await t?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

interface Process {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Process {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

interface Nginx {
  site: string;
  log: string;
  /** The first half of logrotate's work: the log renamed (nginx writes on into it). */
  renameLog(): void;
  /** The second: nginx told to reopen its log (USR1, as `nginx -s reopen`), which creates a new one. */
  reopen(): Promise<void>;
}

async function startNginx(): Promise<Nginx> {
  const prefix = tempDir('nginx-');
  mkdirSync(path.join(prefix, 'logs'));
  const port = await freePort();
  const log = path.join(prefix, 'logs', 'access.log');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${name}_temp_path ${path.join(prefix, name)};`).join('\n');
  writeFileSync(
    path.join(prefix, 'nginx.conf'),
    `${userInfo().uid === 0 ? 'user root;\n' : ''}worker_processes 1;
events { worker_connections 128; }
http {
${temp}
  log_format shipper '${LOG_FORMAT}';
  server {
    listen 127.0.0.1:${port};
    access_log ${log} shipper;
    location / { return 200 "ok\\n"; }
  }
}
`,
  );
  const pidFile = path.join(prefix, 'nginx.pid');
  const nginx = run(NGINX as string, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf'), '-e', path.join(prefix, 'error.log'), '-g', `daemon off; pid ${pidFile};`]);
  nginxes.push(nginx);
  const site = `http://127.0.0.1:${port}`;
  await expect
    .poll(async () => {
      if (nginx.child.exitCode !== null) throw new Error(`nginx exited: ${nginx.output()} ${existsSync(path.join(prefix, 'error.log')) ? readFileSync(path.join(prefix, 'error.log'), 'utf8') : ''}`);
      return fetch(`${site}/ready`).then((r) => r.status, () => 0);
    }, { timeout: 10_000 })
    .toBe(200);
  // The readiness probe is not part of any test's traffic.
  writeFileSync(log, '');
  return {
    site,
    log,
    renameLog: () => renameSync(log, `${log}.1`),
    async reopen() {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGUSR1');
      await expect.poll(() => existsSync(log), { timeout: 5000 }).toBe(true);
    },
  };
}

async function startShipper(tenant: string, log: string, stateDir: string, extra: string[] = []): Promise<Process> {
  const shipper = run(
    process.execPath,
    ['--import', 'tsx', 'packages/log-shipper/src/cli.ts', '--format', 'nginx', '--log-format', LOG_FORMAT, '--state-dir', stateDir, '--poll-ms', '20', '--rotation-grace-ms', '300', '--stats-every-ms', '0', ...extra, log],
    { OBSERVATORY_URL: service, OBSERVATORY_TENANT: tenant, OBSERVATORY_TENANT_SECRET: secrets.get(tenant) as string },
  );
  await expect.poll(() => shipper.output().includes('"log shipper started"') || shipper.child.exitCode !== null, { timeout: 30_000 }).toBe(true);
  expect(shipper.child.exitCode, shipper.output()).toBeNull();
  return shipper;
}

async function stored(tenant: string): Promise<Array<{ path: string; ja4: string | null; senderId: string }>> {
  const answer = await (t as TestApp).call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=${tenant}&limit=100` });
  expect(answer.statusCode).toBe(200);
  return answer.json().events;
}

const visit = async (site: string, target: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${site}${target}`, { headers: { 'user-agent': 'Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)', ...headers } });
  await response.text();
  expect(response.status).toBe(200);
};

/** Each stored path with how often it was stored, for the paths that start with `prefix`. */
async function storedCounts(tenant: string, prefix: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const event of await stored(tenant)) if (event.path.startsWith(prefix)) counts.set(event.path, (counts.get(event.path) ?? 0) + 1);
  return counts;
}

describe('the log shipper process', () => {
  it('refuses to start with a bad configuration, saying what is wrong', async () => {
    const missing = run(process.execPath, ['--import', 'tsx', 'packages/log-shipper/src/cli.ts', '--state-dir', '/tmp/x', 'access.log']);
    expect(await missing.exited).toBe(2);
    expect(missing.output()).toContain('OBSERVATORY_URL is required');
    const format = run(process.execPath, ['--import', 'tsx', 'packages/log-shipper/src/cli.ts', '--format', 'nginx', '--log-format', '$status $request', '--state-dir', tempDir('state-'), 'access.log'], {
      OBSERVATORY_URL: 'http://127.0.0.1:9',
      OBSERVATORY_TENANT: 'x',
      OBSERVATORY_TENANT_SECRET: 'y',
    });
    expect(await format.exited).toBe(2);
    expect(format.output()).toContain('the log format has no $remote_addr');
  }, 60_000);
});

describe.skipIf(NGINX === null)(NGINX === null ? 'the log shipper behind nginx: SKIPPED, no nginx binary (apt-get install nginx-light)' : 'the log shipper behind a real nginx', () => {
  beforeAll(async () => {
    t = await startTestApp();
    service = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
    for (const slug of ['log-rotate', 'log-kill']) {
      const created = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug, name: slug } });
      expect(created.statusCode).toBe(200);
      secrets.set(slug, created.json().signingSecret);
    }
  }, 180_000);

  it('stores every request nginx logs once, with its JA4, through a rename rotation and reopen, and stops on SIGTERM', async () => {
    const nginx = await startNginx();
    const shipper = await startShipper('log-rotate', nginx.log, tempDir('state-'));
    for (let i = 0; i < 15; i += 1) await visit(nginx.site, `/rot/before-${i}?i=${i}`, i % 3 === 0 ? { 'x-ja4': JA4 } : {});
    await expect.poll(async () => (await storedCounts('log-rotate', '/rot/')).size, { timeout: 15_000 }).toBe(15);
    // Renamed, but nginx writes on into the renamed file until it reopens its log.
    nginx.renameLog();
    for (let i = 0; i < 5; i += 1) await visit(nginx.site, `/rot/renamed-${i}`);
    await nginx.reopen();
    for (let i = 0; i < 15; i += 1) await visit(nginx.site, `/rot/after-${i}`);

    await expect.poll(async () => (await storedCounts('log-rotate', '/rot/')).size, { timeout: 15_000 }).toBe(35);
    const counts = await storedCounts('log-rotate', '/rot/');
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const events = await stored('log-rotate');
    expect(events.filter((e) => e.ja4 === JA4).map((e) => e.path).sort()).toEqual(['/rot/before-0', '/rot/before-12', '/rot/before-3', '/rot/before-6', '/rot/before-9']);
    expect(events.every((e) => e.senderId.startsWith('log-'))).toBe(true);

    shipper.child.kill('SIGTERM');
    expect(await shipper.exited).toBe(0);
    const stopped = JSON.parse(shipper.output().split('\n').find((line) => line.includes('"stopped"')) as string);
    expect(stopped).toMatchObject({ shipped: 35, unparsed: 0, files: [{ rotations: 1, truncations: 0 }], sender: { sent: 35, pending: 0, duplicates: 0 } });
  }, 120_000);

  it('loses and duplicates nothing when killed with SIGKILL mid-stream and the log is rotated while it is down', async () => {
    const nginx = await startNginx();
    const state = tempDir('state-');
    // Batches wait a minute: whatever the first process read is in its spool, not yet sent, when it dies.
    const first = await startShipper('log-kill', nginx.log, state, ['--batch-max-wait-ms', '60000']);
    let sent = 0;
    const traffic = (async () => {
      for (; sent < 40; sent += 1) await visit(nginx.site, `/kill/a-${sent}`);
    })();
    const savedOffset = () => {
      const dir = path.join(state, 'positions');
      return existsSync(dir) ? Math.max(0, ...readdirSync(dir).filter((n) => n.endsWith('.json')).map((n) => JSON.parse(readFileSync(path.join(dir, n), 'utf8')).offset as number)) : 0;
    };
    await expect.poll(() => sent >= 20 && savedOffset() > 0, { timeout: 15_000 }).toBe(true);
    first.child.kill('SIGKILL');
    await first.exited;
    await traffic;
    expect((await storedCounts('log-kill', '/kill/')).size).toBe(0);

    // Rotated while nothing reads it: the restarted shipper finishes access.log.1 first.
    nginx.renameLog();
    await nginx.reopen();
    for (let i = 0; i < 20; i += 1) await visit(nginx.site, `/kill/b-${i}`);

    // What nginx logged under /kill/, per path: one line per visit, unless a client retried a
    // request on a loaded machine, which nginx then logs (and the shipper ships) twice.
    const logged = new Map<string, number>();
    for (const file of [`${nginx.log}.1`, nginx.log]) {
      for (const match of readFileSync(file, 'utf8').matchAll(/"GET (\/kill\/[ab]-\d+) HTTP/g)) logged.set(match[1]!, (logged.get(match[1]!) ?? 0) + 1);
    }
    const loggedLines = [...logged.values()].reduce((n, c) => n + c, 0);
    const second = await startShipper('log-kill', nginx.log, state);
    await expect.poll(async () => (await storedCounts('log-kill', '/kill/')).size, { timeout: 20_000 }).toBe(60);
    await expect.poll(async () => [...(await storedCounts('log-kill', '/kill/')).values()].reduce((n, c) => n + c, 0), { timeout: 20_000 }).toBe(loggedLines);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const stopped = JSON.parse(second.output().split('\n').find((line) => line.includes('"stopped"')) as string);
    // It delivered what the first process had spooled, besides the lines it read itself; a line
    // read by both (the first died between spooling it and saving the position) went out with
    // the same id and was answered as a duplicate.
    expect(stopped.shipped).toBeLessThan(loggedLines);
    expect(stopped.sender.sent - stopped.sender.duplicates).toBe(loggedLines);
    expect(stopped.files[0].rotations).toBe(1);
    const counts = await storedCounts('log-kill', '/kill/');
    const expected = [...Array.from({ length: 40 }, (_, i) => `/kill/a-${i}`), ...Array.from({ length: 20 }, (_, i) => `/kill/b-${i}`)].sort();
    expect([...counts.keys()].sort()).toEqual(expected);
    // Each logged line stored once: as many events per path as nginx logged lines for it.
    expect(Object.fromEntries(counts)).toEqual(Object.fromEntries(logged));
  }, 120_000);
});
