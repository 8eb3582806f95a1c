import { execFile } from 'node:child_process';
import { createHmac, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { registerKey } from './helpers/empire.ts';
import { createTenant, INGEST_PATH } from './helpers/honeypot.ts';

/**
 * The sender examples of docs/examples/ (quoted by docs/tutorial.md) run as a user runs them: as
 * child processes (plain Node, and sh with curl and openssl) against the app listening on a real
 * port, configured by environment variables only. Each is held to what the server stored, read
 * back through the API.
 */

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const example = (name: string) => join(root, 'docs/examples', name);

let t: TestApp;
let base: string;
let work: string;

beforeAll(async () => {
  t = await startTestApp();
  base = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  work = mkdtempSync(join(tmpdir(), 'observatory-examples-'));
}, 180_000);

afterAll(async () => {
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs an example with only these variables (and PATH); resolves to its stdout, rejects on a non-zero exit. */
async function runExample(command: string, file: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run(command, [example(file)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', OBSERVATORY_URL: base, ...env },
    timeout: 20_000,
  });
  return stdout;
}

async function recentSenderIds(tenant: string): Promise<string[]> {
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/recent?tenant=${tenant}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: { senderId: string }[] }>().events.map((e) => e.senderId);
}

interface AttestationView {
  sourceId: string;
  toolsetKeyId: string | null;
  compatMode: boolean;
  rejectionReason: string | null;
  signatureB64: string | null;
}

async function attestations(toolset: string): Promise<AttestationView[]> {
  const res = await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=${toolset}` });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ attestations: AttestationView[] }>().attestations;
}

describe('honeypot ingest senders (HMAC)', () => {
  let secret: string;
  beforeAll(async () => {
    secret = await createTenant(t, 'docs-mirror');
  });

  it('the Node sender is accepted and its event is stored', async () => {
    const out = await runExample(process.execPath, 'send-ingest.mjs', { TENANT: 'docs-mirror', SIGNING_SECRET: secret, EVENT_ID: 'example-node-1' });
    expect(out).toMatch(/^200 /);
    expect(await recentSenderIds('docs-mirror')).toContain('example-node-1');
  });

  it('the shell sender (curl + openssl) is accepted and its event is stored', async () => {
    const out = await runExample('sh', 'send-ingest.sh', { TENANT: 'docs-mirror', SIGNING_SECRET: secret, EVENT_ID: 'example-shell-1' });
    expect(JSON.parse(out).accepted).toBe(1);
    expect(await recentSenderIds('docs-mirror')).toContain('example-shell-1');
  });

  it('a sender with the wrong secret fails (exit code) and stores nothing', async () => {
    const wrong = `whsec_${'0'.repeat(43)}`;
    for (const [command, file] of [[process.execPath, 'send-ingest.mjs'], ['sh', 'send-ingest.sh']] as const) {
      await expect(runExample(command, file, { TENANT: 'docs-mirror', SIGNING_SECRET: wrong, EVENT_ID: `wrong-${file}` })).rejects.toThrow();
    }
    expect(await recentSenderIds('docs-mirror')).not.toContain('wrong-send-ingest.mjs');
  });

  it('a Standard Webhooks signer (key = base64-decoded secret) is refused with a hint naming the difference', async () => {
    const body = JSON.stringify({ events: [{ id: 'standard-webhooks-1', path: '/', ua: 'curl/8', ip: '203.0.113.9' }] });
    const ts = Math.floor(Date.now() / 1000);
    const decodedKey = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const v1 = createHmac('sha256', decodedKey).update(`${ts}.${body}`).digest('hex');
    const res = await fetch(`${base}${INGEST_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-observatory-tenant': 'docs-mirror', 'x-observatory-signature': `t=${ts},v1=${v1}` },
      body,
    });
    expect(res.status).toBe(401);
    const answer = (await res.json()) as { reason: string; human: string };
    expect(answer.reason).toBe('bad-signature');
    expect(answer.human).toContain('whole whsec_… secret as text, not base64-decoded');
    expect(answer.human).toContain('docs/honeypot/README.md');
  });
});

describe('toolset event senders (Ed25519)', () => {
  let token: string;
  let keyFile: string;
  let keyId: string;

  beforeAll(async () => {
    token = await t.tokenWith(['write:events']);
    // The key as the tutorial makes it: openssl genpkey, the raw public key out of its DER form.
    keyFile = join(work, 'toolset-key.pem');
    await run('openssl', ['genpkey', '-algorithm', 'ed25519', '-out', keyFile]);
    const { stdout } = await run('sh', ['-c', `openssl pkey -in "${keyFile}" -pubout -outform DER | tail -c 32 | base64`]);
    keyId = await registerKey(t, 'crawler-lab', stdout.trim());
  });

  it('the Node sender is admitted with its signature, attested under the registered key', async () => {
    const out = await runExample(process.execPath, 'send-toolset-event.mjs', { OBSERVATORY_TOKEN: token, TOOLSET: 'crawler-lab', PRIVATE_KEY_FILE: keyFile, EVENT_ID: 'example-node-1' });
    expect(out).toMatch(/^200 /);
    const row = (await attestations('crawler-lab')).find((a) => a.sourceId === 'example-node-1');
    expect(row).toMatchObject({ toolsetKeyId: keyId, compatMode: false, rejectionReason: null });
    expect(row?.signatureB64).toMatch(/^[A-Za-z0-9+/]{86}==$/);
  });

  it('the shell sender (openssl pkeyutl -rawin) is admitted with its signature, naming its key', async () => {
    const out = await runExample('sh', 'send-toolset-event.sh', { OBSERVATORY_TOKEN: token, TOOLSET: 'crawler-lab', PRIVATE_KEY_FILE: keyFile, KEY_ID: keyId, EVENT_ID: 'example-shell-1' });
    expect(JSON.parse(out)).toMatchObject({ accepted: 1, rejected: 0, results: [{ id: 'example-shell-1', compatMode: false, rejectionReason: null }] });
    const row = (await attestations('crawler-lab')).find((a) => a.sourceId === 'example-shell-1');
    expect(row).toMatchObject({ toolsetKeyId: keyId, compatMode: false, rejectionReason: null });
  });

  it('a key the toolset never registered is rejected, and both senders say so by their exit code', async () => {
    const other = join(work, 'other-key.pem');
    writeFileSync(other, generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }));
    for (const [command, file] of [[process.execPath, 'send-toolset-event.mjs'], ['sh', 'send-toolset-event.sh']] as const) {
      await expect(runExample(command, file, { OBSERVATORY_TOKEN: token, TOOLSET: 'crawler-lab', PRIVATE_KEY_FILE: other, EVENT_ID: `unregistered-${file}` })).rejects.toThrow();
      const row = (await attestations('crawler-lab')).find((a) => a.sourceId === `unregistered-${file}`);
      expect(row).toMatchObject({ rejectionReason: 'bad-signature' });
    }
  });
});

describe('the tutorial quotes the examples', () => {
  it('links every example file, and every line it quotes from one is in that file', () => {
    const tutorial = readFileSync(join(root, 'docs/tutorial.md'), 'utf8');
    for (const file of ['send-ingest.mjs', 'send-ingest.sh', 'send-toolset-event.mjs', 'send-toolset-event.sh']) {
      expect(tutorial).toContain(`examples/${file}`);
    }
    const quoted = [...tutorial.matchAll(/<!-- quoted from (\S+) -->\n```\w*\n([\s\S]*?)```/g)];
    expect(quoted.length).toBeGreaterThanOrEqual(2);
    for (const [, file, block] of quoted) {
      const source = readFileSync(join(root, 'docs', file!), 'utf8');
      for (const line of block!.split('\n').filter((l) => l.trim() !== '' && l.trim() !== '…')) {
        expect(source, `${file} no longer has the line the tutorial quotes: ${line}`).toContain(line);
      }
    }
  });
});
