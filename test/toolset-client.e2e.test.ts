import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createToolsetClient,
  EMPIRE_INGEST_PATH,
  eventHash,
  type IngestResult,
  observatoryApi,
  readPrivateKey,
  registerKey,
  signEvent,
  type ToolsetClientOptions,
} from '@observatory/toolset-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { startTcpProxy, type TcpProxy, throughProxy } from './helpers/tcp-proxy.ts';

/**
 * The toolset client (packages/toolset-client) against the real service on a real port: a key made
 * and registered by its CLI signs events the ingest admits with their signature (not in
 * compatibility mode), a tampered one is refused, events recorded while the service is cut off
 * arrive once and in order when it is back, and the CLI's `send` delivers a line of JSON.
 */

const TOOLSET = 'toolset-client-lab';
const root = path.join(import.meta.dirname, '..');
let t: TestApp;
let base: string;
let proxy: TcpProxy;
let token: string;
let keyFile: string;
let keyId: string;
const dir = mkdtempSync(path.join(tmpdir(), 'toolset-client-e2e-'));

interface Attestation {
  sourceId: string;
  eventHash: string;
  toolsetKeyId: string | null;
  attestedAt: string | null;
  acceptedAt: string;
  compatMode: boolean;
  rejectionReason: string | null;
}

function cli(args: string[], stdin = '', env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/toolset-client/src/cli.ts', ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', OBSERVATORY_URL: base, OBSERVATORY_TOKEN: token, TOOLSET, TOOLSET_KEY_FILE: keyFile, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function attestations(): Promise<Attestation[]> {
  const res = await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=${TOOLSET}&limit=200` });
  expect(res.statusCode).toBe(200);
  return (res.json().attestations as Attestation[]).reverse();
}

const clientOptions = (extra: Partial<ToolsetClientOptions> = {}): ToolsetClientOptions => ({
  url: base,
  token,
  toolset: TOOLSET,
  privateKey: readPrivateKey(keyFile).privateKey,
  keyId,
  batchMaxWaitMs: 5,
  backoff: { baseMs: 10, maxMs: 50 },
  ...extra,
});

beforeAll(async () => {
  t = await startTestApp();
  base = await t.app.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = new URL(base);
  proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(port) });
  token = await t.tokenWith(['write:events', 'write:alerts']);
  keyFile = path.join(dir, 'toolset-key.pem');
}, 180_000);

afterAll(async () => {
  await proxy?.close();
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the toolset client against the service', () => {
  it('makes a key with the CLI and registers it, keeping the id', async () => {
    const keygen = await cli(['keygen']);
    expect(keygen).toMatchObject({ code: 0 });
    const register = await cli(['register']);
    expect(register.code, register.stderr).toBe(0);
    keyId = register.stdout.trim();
    expect(keyId).toMatch(/^[0-9a-f-]{36}$/);
    const keys = await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=${TOOLSET}` });
    expect(keys.json().keys).toEqual([expect.objectContaining({ id: keyId, publicKeyB64: readPrivateKey(keyFile).publicKeyB64, status: 'active' })]);
    // The same key twice is refused with the endpoint's reason, as a clear error.
    await expect(registerKey(observatoryApi(base, token), TOOLSET, readPrivateKey(keyFile).publicKeyB64)).rejects.toMatchObject({ status: 400, reason: 'key-already-registered' });
  }, 60_000);

  it('sends events the ingest admits with their signature, and a resend is a duplicate', async () => {
    const results: IngestResult[] = [];
    const client = createToolsetClient(clientOptions({ onResults: (got) => results.push(...got) }));
    const ts = new Date().toISOString();
    const recorded = [
      { id: 'signed-1', eventType: 'crawl.started', ts, tenant: 'acme', payload: { url: 'https://example.com/', 'ünïcode': '€ 😀' } },
      { id: 'signed-2', eventType: 'crawl.finished', ts, causedBy: 'signed-1', payload: { pages: 14 } },
    ];
    for (const event of recorded) expect(client.record(event)).toBe(event.id);
    expect(await client.flush(10_000)).toBe(true);
    expect(results).toEqual(recorded.map((e) => expect.objectContaining({ id: e.id, compatMode: false, rejectionReason: null, eventId: expect.any(String) })));
    client.record(recorded[0] as never);
    expect(await client.flush(10_000)).toBe(true);
    await client.close();
    expect(client.stats()).toMatchObject({ sent: 3, duplicates: 1, rejected: 0 });

    const stored = await attestations();
    // One request's rows share their acceptedAt, so their order among themselves is not kept.
    expect(stored.map((a) => a.sourceId).sort()).toEqual(['signed-1', 'signed-2']);
    for (const a of stored) expect(a).toMatchObject({ compatMode: false, rejectionReason: null, toolsetKeyId: keyId, attestedAt: expect.any(String) });
    // The hash the service attests is of the bytes the client signed.
    const hashes = new Map(stored.map((a) => [a.sourceId, a.eventHash]));
    for (const event of recorded) expect(hashes.get(event.id)).toBe(eventHash(TOOLSET, event));
    // Stored and readable through the API, causedBy linked.
    const lineage = await t.call({ method: 'GET', url: `${V1}/empire/lineage/${results[1]?.eventId}` });
    expect(lineage.statusCode).toBe(200);
    expect(lineage.body).toContain('signed-1');
  }, 60_000);

  it('has a tampered event refused as bad-signature, and the client drops and counts it', async () => {
    const { privateKey } = readPrivateKey(keyFile);
    const signed = signEvent(TOOLSET, { id: 'tampered', eventType: 'crawl.page', ts: new Date().toISOString(), payload: { status: 200 } }, privateKey, keyId);
    const api = observatoryApi(base, token);
    const answer = await api.POST(EMPIRE_INGEST_PATH, { body: { toolset: TOOLSET, events: [{ ...signed, payload: { status: 500 } }] } });
    expect(answer.data).toMatchObject({ accepted: 0, rejected: 1, results: [{ id: 'tampered', eventId: null, rejectionReason: 'bad-signature' }] });
    // The untampered event hashes as the service attests it once admitted.
    expect((await api.POST(EMPIRE_INGEST_PATH, { body: { toolset: TOOLSET, events: [signed] } })).data).toMatchObject({ accepted: 1 });
    const admitted = (await attestations()).filter((a) => a.sourceId === 'tampered' && a.rejectionReason === null);
    expect(admitted.map((a) => a.eventHash)).toEqual([eventHash(TOOLSET, signed)]);

    // A key the service does not have (the client signing with another one): rejected per event.
    const { generateToolsetKey } = await import('@observatory/toolset-client');
    const stranger = createToolsetClient(clientOptions({ privateKey: generateToolsetKey().privateKey }));
    stranger.record({ id: 'stranger', eventType: 'crawl.page' });
    expect(await stranger.flush(10_000)).toBe(true);
    await stranger.close();
    expect(stranger.stats()).toMatchObject({ sent: 0, rejected: 1, lastProblem: { reason: 'bad-signature', eventId: 'stranger' } });
  }, 60_000);

  it('spools while the service is cut off and delivers every event once, in order, when it is back', async () => {
    const spoolDir = path.join(dir, 'spool');
    const viaProxy = throughProxy(base, proxy).replace(/\/$/, '');
    proxy.cut('refuse');
    const down = createToolsetClient(clientOptions({ url: viaProxy, spoolDir, batchMaxEvents: 7 }));
    const ids = Array.from({ length: 30 }, (_, i) => down.record({ id: `outage-${String(i).padStart(2, '0')}`, eventType: 'crawl.page', payload: { i } }));
    await expect.poll(() => down.stats().retried, { timeout: 5000 }).toBeGreaterThan(1);
    await down.close(0);
    expect(down.stats()).toMatchObject({ spooled: 30, pending: 30, sent: 0 });

    proxy.restore();
    const back = createToolsetClient(clientOptions({ url: viaProxy, spoolDir, batchMaxEvents: 7 }));
    expect(await back.flush(20_000)).toBe(true);
    await back.close();
    expect(back.stats()).toMatchObject({ sent: 30, duplicates: 0, rejected: 0, pending: 0 });

    const stored = (await attestations()).filter((a) => a.sourceId.startsWith('outage-'));
    expect(stored.map((a) => a.sourceId).sort()).toEqual(ids);
    // Batches go one at a time from the head: an earlier event is never accepted after a later one.
    const acceptedAt = new Map(stored.map((a) => [a.sourceId, Date.parse(a.acceptedAt)]));
    const times = ids.map((id) => acceptedAt.get(id as string) as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    for (const a of stored) expect(a).toMatchObject({ compatMode: false, toolsetKeyId: keyId });
  }, 60_000);

  it('sends a line of JSON from stdin with the CLI, and refuses bad input with a message, not a stack trace', async () => {
    const sent = await cli(['send'], '{"id":"cli-1","eventType":"crawl.page","payload":{"url":"https://example.com/a"}}\n');
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toEqual({ sent: 1, duplicates: 0, rejected: 0, pending: 0 });
    expect((await attestations()).find((a) => a.sourceId === 'cli-1')).toMatchObject({ compatMode: false, toolsetKeyId: keyId });

    const bad = await cli(['send'], '{"eventType":\n');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^line 1 is not JSON/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);

    const refused = await cli(['send', '--event-type', 'crawl.page', '--id', 'cli-2', '--ts', '2020-01-01T00:00:00Z']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ sent: 0, rejected: 1 });
    expect(refused.stderr).toMatch(/cli-2: invalid-body/);
  }, 60_000);
});
