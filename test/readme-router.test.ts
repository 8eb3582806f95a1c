import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from './helpers/app.ts';
import { shellBlocks } from './helpers/markdown.ts';
import { freePort } from './helpers/ports.ts';

/**
 * The README's "Watching a honeypot site" works as written: its two sh blocks, run by bash against
 * the service on a real port, create a tenant, start the router with `npm run router`, send a
 * request that claims to be GPTBot and read the verdict back. The only changes are the ones a
 * reader's machine makes: the service's and the router's ports, and the router started in the
 * background instead of in a second terminal.
 */

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const log = path.join(tmpdir(), `observatory-readme-router-${process.pid}.log`);
const pidFile = `${log}.pid`;

let t: TestApp;
let service: string;
let routerPort: number;

beforeAll(async () => {
  t = await startTestApp();
  service = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  routerPort = await freePort();
}, 180_000);

afterAll(async () => {
  // The router the script left running: `npm run router`'s pid, and every process below it.
  if (existsSync(pidFile)) await stopTree(Number(readFileSync(pidFile, 'utf8')));
  await t?.close();
  rmSync(log, { force: true });
  rmSync(pidFile, { force: true });
});

async function stopTree(pid: number): Promise<void> {
  const { stdout } = await run('ps', ['-eo', 'pid=,ppid=']);
  const children = new Map<number, number[]>();
  for (const line of stdout.trim().split('\n')) {
    const [child, parent] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const tree: number[] = [];
  for (const queue = [pid]; queue.length > 0; ) {
    const next = queue.shift() as number;
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  for (const member of tree.reverse()) {
    try {
      process.kill(member, 'SIGTERM');
    } catch {
      // gone already
    }
  }
}

function blocks(): string[] {
  const readme = readFileSync(`${root}README.md`, 'utf8');
  const section = readme.slice(readme.indexOf('## Watching a honeypot site'), readme.indexOf('## Configuration'));
  return shellBlocks(section);
}

describe('the README: watching a honeypot site', () => {
  it('has the two blocks: tenant and router, then a crawler and the verdict', () => {
    const [setUp, crawl] = blocks();
    expect(setUp).toContain('npm run router');
    expect(crawl).toContain('honeypot/recent');
  });

  it('runs as written: the fake GPTBot is recorded as a liar', async () => {
    const local = (text: string) => text.replaceAll('http://127.0.0.1:8080', service).replaceAll('127.0.0.1:8081', `127.0.0.1:${routerPort}`);
    const [setUp, crawl] = blocks().map(local) as [string, string];
    const script = [
      'set -euo pipefail',
      setUp.replace(/npm run router\s*$/m, `npm run router > "$ROUTER_LOG" 2>&1 &\necho $! > ${pidFile}`),
      // The router is ready once it logs that it listens.
      'for _ in $(seq 1 300); do grep -q "router listening" "$ROUTER_LOG" && break; sleep 0.1; done',
      crawl,
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TOKEN: ADMIN_TOKEN, ROUTER_PORT: String(routerPort), ROUTER_LOG: log },
      timeout: 120_000,
    });
    const recent = JSON.parse(stdout.trim().split('\n').at(-1) as string);
    expect(recent.events).toEqual([expect.objectContaining({ path: '/honeypot/topics/llm-pricing', uaClass: 'LIAR' })]);
  }, 150_000);
});
