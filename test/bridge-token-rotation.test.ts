import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { freePort } from './helpers/ports.ts';

/**
 * The staged bridge token (OBSERVATORY_BRIDGE_TOKEN_NEXT; the `bridge-token-rotate-rehearsal`
 * chaos kind, docs/chaos/README.md) across deployments on loopback, each its own app and database:
 * a bridge call carrying the staged token is accepted beside the current one; while
 * `useStaged(true)` holds, the fan-out sends the staged token, which a peer configured with the
 * same pair accepts and a peer that only has the current token refuses; switching back restores
 * the current token at the next call.
 */

const CURRENT = 'bridge-token-rotation-current-0123456789abcdef';
const NEXT = 'bridge-token-rotation-staged-0123456789abcdefg';

interface Deployment {
  region: string;
  t: TestApp;
  baseUrl: string;
}

const deployments: Deployment[] = [];
const d = (region: string) => deployments.find((x) => x.region === region)!;

async function regionDigest(from: Deployment): Promise<{ participating: string[]; failed: { region: string; reason: string }[] }> {
  const res = await from.t.call({ method: 'POST', url: `${V1}/empire/region-digest`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  const ports = [await freePort(), await freePort(), await freePort()];
  // alpha and bravo hold the pair; charlie has not been given the staged token yet.
  const pairs: [string, Record<string, string>][] = [
    ['alpha', { OBSERVATORY_BRIDGE_TOKEN: CURRENT, OBSERVATORY_BRIDGE_TOKEN_NEXT: NEXT }],
    ['bravo', { OBSERVATORY_BRIDGE_TOKEN: CURRENT, OBSERVATORY_BRIDGE_TOKEN_NEXT: NEXT }],
    ['charlie', { OBSERVATORY_BRIDGE_TOKEN: CURRENT }],
  ];
  for (const [i, [region, tokens]] of pairs.entries()) {
    const t = await startTestApp({
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
    const res = await d('alpha').t.call({ method: 'POST', url: `${V1}/empire/regions`, payload: { key: x.region, baseUrl: x.baseUrl, ...(x.region === 'alpha' ? { isPrimary: true } : {}) } });
    expect(res.statusCode, res.body).toBe(200);
  }
}, 180_000);

afterAll(async () => {
  for (const x of deployments) x.t.app.faults.bridgeTokens.useStaged(false);
  for (const x of deployments) await x.t.close();
});

describe('the staged bridge token', () => {
  it('is accepted beside the current one; a call carrying neither is 401', async () => {
    const bridge = (value: string) => d('bravo').t.call({ method: 'GET', url: `${V1}/empire/region-digest`, token: null, headers: { 'x-observatory-bridge': value } });
    expect((await bridge(CURRENT)).statusCode).toBe(200);
    expect((await bridge(NEXT)).statusCode).toBe(200);
    const neither = await bridge('bridge-token-of-nobody-0123456789abcdefghijk');
    expect(neither.statusCode).toBe(401);
    expect(neither.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unauthorized', human: 'The bridge token is not valid.' });
    // charlie has no staged token: only the current one opens it.
    const atCharlie = await d('charlie').t.call({ method: 'GET', url: `${V1}/empire/region-digest`, token: null, headers: { 'x-observatory-bridge': NEXT } });
    expect(atCharlie.statusCode).toBe(401);
  });

  it('is what the fan-out sends while useStaged(true) holds, read at each call', async () => {
    const tokens = d('alpha').t.app.faults.bridgeTokens;
    expect(tokens.staged()).toBe(NEXT);
    expect(tokens.outgoing()).toBe(CURRENT);
    expect(await regionDigest(d('alpha'))).toMatchObject({ participating: ['alpha', 'bravo', 'charlie'], failed: [] });

    tokens.useStaged(true);
    expect(tokens.usingStaged()).toBe(true);
    expect(tokens.outgoing()).toBe(NEXT);
    // bravo, holding the same pair, answers; charlie, which lacks the staged token, refuses it.
    expect(await regionDigest(d('alpha'))).toMatchObject({ participating: ['alpha', 'bravo'], failed: [{ region: 'charlie', reason: 'bridge-token-refused' }] });
    // alpha still accepts the current token from peers that have not switched.
    const fromPeer = await d('alpha').t.call({ method: 'GET', url: `${V1}/empire/region-digest`, token: null, headers: { 'x-observatory-bridge': CURRENT } });
    expect(fromPeer.statusCode).toBe(200);

    tokens.useStaged(false);
    expect(tokens.outgoing()).toBe(CURRENT);
    expect(await regionDigest(d('alpha'))).toMatchObject({ participating: ['alpha', 'bravo', 'charlie'], failed: [] });
  });

  it('cannot be sent where none is staged', () => {
    const tokens = d('charlie').t.app.faults.bridgeTokens;
    expect(tokens.staged()).toBeNull();
    expect(() => tokens.useStaged(true)).toThrow(/OBSERVATORY_BRIDGE_TOKEN_NEXT/);
    expect(tokens.usingStaged()).toBe(false);
    expect(tokens.outgoing()).toBe(CURRENT);
  });
});
