import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { freePort } from './helpers/ports.ts';

/**
 * The `bridge-token-rotate-rehearsal` chaos kind end to end, across deployments on loopback (each
 * its own app and database): alpha runs the rehearsal through HTTP, its fan-out sends the staged
 * token (OBSERVATORY_BRIDGE_TOKEN_NEXT) to the peer regions, the window closes as soon as they
 * answered, the current token is sent again and the recovery probe asks the peers with it. bravo
 * holds the pair, charlie only the current token. alpha's time is a manual clock; the runner is
 * stepped by hand (tests run without the scheduler).
 */

const CURRENT = 'chaos-bridge-rehearsal-current-0123456789abcdef';
const NEXT = 'chaos-bridge-rehearsal-staged-0123456789abcdefg';

interface Deployment {
  region: string;
  t: TestApp;
  baseUrl: string;
}

const deployments: Deployment[] = [];
const d = (region: string) => deployments.find((x) => x.region === region)!;
const clock = new ManualClock('2026-11-28T10:00:30.000Z');
const alpha = () => d('alpha').t;

beforeAll(async () => {
  const ports = [await freePort(), await freePort(), await freePort()];
  // alpha and bravo hold the pair; charlie has not been given the staged token. alpha and charlie allow chaos.
  const pairs: [string, Record<string, string>][] = [
    ['alpha', { OBSERVATORY_BRIDGE_TOKEN: CURRENT, OBSERVATORY_BRIDGE_TOKEN_NEXT: NEXT, OBSERVATORY_CHAOS_ALLOW: '*' }],
    ['bravo', { OBSERVATORY_BRIDGE_TOKEN: CURRENT, OBSERVATORY_BRIDGE_TOKEN_NEXT: NEXT }],
    ['charlie', { OBSERVATORY_BRIDGE_TOKEN: CURRENT, OBSERVATORY_CHAOS_ALLOW: '*' }],
  ];
  for (const [i, [region, tokens]] of pairs.entries()) {
    const t = await startTestApp({
      ...(region === 'alpha' ? { clock } : {}),
      env: {
        ...tokens,
        OBSERVATORY_REGION: region,
        OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1',
        OBSERVATORY_BRIDGE_PEER_HOSTS: '127.0.0.1',
        OBSERVATORY_OUTBOUND_ALLOWED_PORTS: ports.join(','),
        OBSERVATORY_FEDERATION_TIMEOUT_MS: '3000',
      },
    });
    await t.app.server.listen({ host: '127.0.0.1', port: ports[i]! });
    deployments.push({ region, t, baseUrl: `http://127.0.0.1:${ports[i]}` });
  }
  for (const x of deployments) {
    const res = await alpha().call({ method: 'POST', url: `${V1}/empire/regions`, payload: { key: x.region, baseUrl: x.baseUrl, ...(x.region === 'alpha' ? { isPrimary: true } : {}) } });
    expect(res.statusCode, res.body).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  for (const x of deployments) x.t.app.faults.bridgeTokens.useStaged(false);
  for (const x of deployments) await x.t.close();
});

async function register(t: TestApp, slug: string, target: string) {
  return t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { slug, kind: 'bridge-token-rotate-rehearsal', target } });
}

async function registered(t: TestApp, slug: string, target: string): Promise<string> {
  const res = await register(t, slug, target);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().experiment.id;
}

async function runNow(experimentId: string) {
  const res = await alpha().call({ method: 'POST', url: `${V1}/chaos/experiments/${experimentId}/run`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().run;
}

async function runById(id: string) {
  const res = await alpha().call({ method: 'GET', url: `${V1}/chaos/runs?limit=200` });
  expect(res.statusCode).toBe(200);
  return res.json().runs.find((r: { id: string }) => r.id === id);
}

const step = (ms = 0) => {
  clock.advance(ms);
  return alpha().app.chaos.runs.runner.step();
};

async function regionDigest(): Promise<{ participating: string[]; failed: { region: string; reason: string }[] }> {
  const res = await alpha().call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('bridge-token-rotate-rehearsal', () => {
  it('against a peer holding the pair: the staged token is answered, the current one is back after the window, ok', async () => {
    const tokens = alpha().app.faults.bridgeTokens;
    const id = await registered(alpha(), 'rehearse-bravo', 'bravo');
    const run = await runNow(id);
    expect(run).toMatchObject({ experimentId: id, target: 'bravo', trigger: 'manual', phase: 'injected', endedAt: null });
    expect(run.measurements.inject).toMatchObject({ sentStagedToken: true, stagedAnswered: ['bravo'], stagedFailed: [] });
    expect(tokens.usingStaged()).toBe(true);
    expect(tokens.outgoing()).toBe(NEXT);

    // The rehearsal is one round of asking: the window closes at the first step.
    await step();
    expect(tokens.usingStaged()).toBe(false);
    expect(tokens.outgoing()).toBe(CURRENT);
    expect(await runById(run.id)).toMatchObject({ phase: 'recovering', endedAt: null });

    await step(250);
    const ended = await runById(run.id);
    expect(ended).toMatchObject({ phase: 'ended', outcome: 'ok', observedRecoverySec: 0.25, errorText: null, abortReason: null });
    expect(ended.endedAt).not.toBeNull();
    expect(ended.measurements.probe).toMatchObject({ currentAnswered: ['bravo'], currentFailed: [] });
    expect(ended.measurements.inject).toMatchObject({ stagedAnswered: ['bravo'], stagedFailed: [] });
  });

  it('against every peer: charlie refuses the staged token, the run is partial and the current token works again', async () => {
    const tokens = alpha().app.faults.bridgeTokens;
    const id = await registered(alpha(), 'rehearse-all', '*');
    const run = await runNow(id);
    expect(run.measurements.inject).toMatchObject({
      stagedAnswered: ['bravo'],
      stagedFailed: [{ region: 'charlie', reason: 'bridge-token-refused' }],
    });
    expect(tokens.usingStaged()).toBe(true);

    await step();
    expect(tokens.usingStaged()).toBe(false);
    await step(250);
    const ended = await runById(run.id);
    expect(ended).toMatchObject({ phase: 'ended', outcome: 'partial', observedRecoverySec: 0.25 });
    expect(ended.errorText).toMatch(/refused the staged token/);
    expect(ended.errorText).toMatch(/charlie \(bridge-token-refused\)/);
    expect(ended.errorText).not.toMatch(/bravo/);
    expect(ended.measurements.probe.currentAnswered.slice().sort()).toEqual(['bravo', 'charlie']);
    expect(ended.measurements.probe.currentFailed).toEqual([]);

    // Back to the current token: a region-digest fan-out from alpha reaches both peers again.
    expect(tokens.outgoing()).toBe(CURRENT);
    expect(await regionDigest()).toMatchObject({ participating: ['alpha', 'bravo', 'charlie'], failed: [] });
  });

  it('against a region key that is no active peer region: partial at once, nothing left staged', async () => {
    const tokens = alpha().app.faults.bridgeTokens;
    const id = await registered(alpha(), 'rehearse-nowhere', 'nowhere');
    const run = await runNow(id);
    expect(run).toMatchObject({ phase: 'ended', outcome: 'partial', observedRecoverySec: null });
    expect(run.endedAt).not.toBeNull();
    expect(run.errorText).toMatch(/could not be injected: nowhere is not an active peer region/);
    expect(tokens.usingStaged()).toBe(false);
    expect(tokens.outgoing()).toBe(CURRENT);
    // Nothing is left open: a later run may start.
    expect((await runById(run.id)).phase).toBe('ended');
    expect(await alpha().app.chaos.runs.runner.closedGate()).toBeNull();
  });

  it('is refused at registration for a target that is no region key', async () => {
    const res = await register(alpha(), 'rehearse-typo', 'Not A Region!');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ ok: false, reason: 'unknown-target' });
    expect(res.json().human).toMatch(/is not a region key/);
  });

  it('cannot run where no staged token is configured: 409 naming OBSERVATORY_BRIDGE_TOKEN_NEXT', async () => {
    const charlie = d('charlie').t;
    const id = await registered(charlie, 'rehearse-from-charlie', 'alpha');
    const res = await charlie.call({ method: 'POST', url: `${V1}/chaos/experiments/${id}/run`, payload: {} });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1' });
    expect(res.json().human).toMatch(/OBSERVATORY_BRIDGE_TOKEN_NEXT/);
    expect(res.json().reason).toBe('cannot-run');
    expect(charlie.app.faults.bridgeTokens.usingStaged()).toBe(false);
    const runs = await charlie.call({ method: 'GET', url: `${V1}/chaos/runs` });
    expect(runs.json().runs).toEqual([]);
  });

  it('lists every run of the rehearsals at GET /v1/chaos/runs, newest first', async () => {
    const res = await alpha().call({ method: 'GET', url: `${V1}/chaos/runs?limit=200` });
    expect(res.statusCode).toBe(200);
    const runs = res.json().runs as { target: string; outcome: string; experimentKind: string; experimentSlug: string }[];
    expect(runs.map((r) => [r.experimentSlug, r.outcome])).toEqual([
      ['rehearse-nowhere', 'partial'],
      ['rehearse-all', 'partial'],
      ['rehearse-bravo', 'ok'],
    ]);
    expect(runs.every((r) => r.experimentKind === 'bridge-token-rotate-rehearsal')).toBe(true);
  });
});
