import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { shellBlocks } from './helpers/markdown.ts';

/**
 * docs/tutorial.md works as written: every ```sh block, in order, in one bash shell with `set -eu`
 * and `set -o pipefail`, against the app listening on a real port. The blocks the reader adapts
 * (starting the service, pasting the token) are ```console and are stood in for by OBS and TOKEN;
 * lines quoted from the examples are ```shell and not run here (test/docs-examples.test.ts runs them).
 * The shell runs in a scratch directory that links the checkout's files the tutorial uses, so the
 * files it writes (a key, a fact) land there.
 */

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;


let t: TestApp;
let base: string;
let work: string;

beforeAll(async () => {
  t = await startTestApp();
  base = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  work = mkdtempSync(join(tmpdir(), 'observatory-tutorial-'));
  for (const entry of ['docs', 'src', 'node_modules', 'package.json', 'tsconfig.json']) symlinkSync(join(root, entry), join(work, entry));
}, 180_000);

afterAll(async () => {
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the first-hour tutorial', () => {
  const tutorial = readFileSync(join(root, 'docs/tutorial.md'), 'utf8');

  it('is linked first from the README', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const more = readme.slice(readme.indexOf('## More'));
    expect(more.split('\n').find((line) => line.startsWith('- '))).toContain('docs/tutorial.md');
  });

  it('shows the first-start message npm start prints', () => {
    const main = readFileSync(join(root, 'src/main.ts'), 'utf8');
    const printed = /`\\nFirst start: ([^\\]+)\\n/.exec(main)?.[1];
    expect(printed).toBeTruthy();
    expect(tutorial).toContain(`First start: ${printed}`);
  });

  it('has its steps as sh blocks', () => {
    const blocks = shellBlocks(tutorial);
    expect(blocks.length).toBeGreaterThanOrEqual(10);
    expect(blocks.join('\n')).toContain('docs/examples/send-ingest.sh');
  });

  it('runs from start to audit proof against a live server', async () => {
    const script = ['set -eu', 'set -o pipefail', ...shellBlocks(tutorial)].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: work,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, OBS: base, TOKEN: ADMIN_TOKEN },
      timeout: 240_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    // What the tutorial says the reader sees.
    expect(stdout).toContain('"username": "admin"');
    expect(stdout).toContain('"slug": "docs-mirror"');
    expect(stdout).toMatch(/"signingSecret": "whsec_/);
    expect(stdout).toMatch(/"lastOk": "20/);
    expect(stdout).toContain('verified: fact 1');
    expect(stdout).toMatch(/"intact": true/);

    // And what the server stored, read back.
    const recent = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=docs-mirror` });
    expect(recent.json().events.map((e: { senderId: string }) => e.senderId).sort()).toEqual(['first-1', 'first-2']);
    const attested = await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=crawler-lab` });
    const rows = attested.json().attestations as { sourceId: string; compatMode: boolean; toolsetKeyId: string | null }[];
    expect(rows.map((a) => a.sourceId).sort()).toEqual(['crawl-1', 'crawl-2']);
    expect(rows.every((a) => !a.compatMode && a.toolsetKeyId !== null)).toBe(true);
    const rules = await t.call({ method: 'GET', url: `${V1}/honeypot/alerts?tenant=docs-mirror` });
    expect(rules.json().rules).toHaveLength(1);
    const snapshots = await t.call({ method: 'GET', url: `${V1}/backups/snapshots` });
    expect(snapshots.json().snapshots).toHaveLength(1);
  }, 300_000);
});
