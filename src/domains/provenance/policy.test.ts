import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { EMPIRE_INGEST, ingestEmpire, nodeKeyPair, registerKey, signWithNode } from '../../../test/helpers/empire.ts';
import type { App } from '../../app.ts';
import { ManualClock } from '../../platform/clock.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { KEY_CACHE_MS } from './service.ts';

/** Per-toolset signed-only policy (docs/empire/README.md, "Signed-only toolsets"). */

const clock = new ManualClock('2026-11-24T11:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const policyUrl = (toolset: string) => `${V1}/provenance/toolsets/${toolset}/policy`;
const getPolicy = (toolset: string, token?: string) => t.call({ method: 'GET', url: policyUrl(toolset), ...(token ? { token } : {}) });
const setPolicy = (toolset: string, payload: unknown, token?: string) => t.call({ method: 'POST', url: policyUrl(toolset), payload: payload as object, ...(token ? { token } : {}) });

type Result = { id: string; eventId: string | null; compatMode: boolean; rejectionReason: string | null };
const resultsOf = async (toolset: string, events: Parameters<typeof ingestEmpire>[2]) => {
  const res = await ingestEmpire(t, toolset, events);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ results: Result[] }>().results.map((r) => [r.id, r.compatMode, r.rejectionReason]);
};
const injectIngest = (app: App, toolset: string, events: object[]) =>
  app.server.inject({ method: 'POST', url: EMPIRE_INGEST, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { toolset, events } });

async function policyAudits(toolset: string) {
  return rowsOf<{ actor: string; before: unknown; after: unknown }>(
    await t.app.database.db.execute(sql`SELECT actor, before, after FROM operator_audit WHERE verb = 'provenance.policy' AND target = ${`toolset-policy:${toolset}`} ORDER BY seq_no`),
  );
}

describe('GET {v1}/provenance/toolsets/{toolset}/policy', () => {
  it('answers the global setting for a toolset nobody has set, with its active keys', async () => {
    const res = await getPolicy('unset-lab');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      schema: 'svc-provenance-toolset-policy.v1',
      generatedAt: clock.now().toISOString(),
      toolset: 'unset-lab',
      requireSigned: false,
      source: 'global',
      toolsetRequireSigned: null,
      updatedAt: null,
      updatedBy: null,
      activeKeys: 0,
    });
    const keyId = await registerKey(t, 'unset-lab', nodeKeyPair().publicKeyB64);
    await registerKey(t, 'unset-lab', nodeKeyPair().publicKeyB64);
    expect((await getPolicy('unset-lab')).json().activeKeys).toBe(2);
    await t.call({ method: 'POST', url: `${V1}/provenance/keys/${keyId}/retire`, payload: {} });
    expect((await getPolicy('unset-lab')).json().activeKeys).toBe(1);
  });

  it('refuses a toolset name outside the pattern, naming the parameter', async () => {
    const res = await getPolicy('x');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-params', field: 'path.toolset' });
  });
});

describe('POST {v1}/provenance/toolsets/{toolset}/policy', () => {
  it('makes one toolset signed-only while others stay in compatibility mode, and back; each change audited', async () => {
    const key = nodeKeyPair();
    await registerKey(t, 'strict-lab', key.publicKeyB64);
    const signed = (id: string) => signWithNode('strict-lab', { id, eventType: 'x' }, key.privateKey);
    // Before: compatibility mode (and the admission cache holds that).
    expect(await resultsOf('strict-lab', [{ id: 'u-0', eventType: 'x' }])).toEqual([['u-0', true, null]]);

    clock.advance(1000);
    const on = await setPolicy('strict-lab', { requireSigned: true });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json()).toMatchObject({
      schema: 'svc-provenance-toolset-policy.v1',
      toolset: 'strict-lab',
      requireSigned: true,
      source: 'toolset',
      toolsetRequireSigned: true,
      updatedAt: clock.now().toISOString(),
      updatedBy: 'admin',
      activeKeys: 1,
    });
    expect((await getPolicy('strict-lab')).json()).toEqual({ ...on.json(), generatedAt: expect.any(String) });

    // At once on this instance: an unsigned event is rejected `unsigned`, a signed one admitted.
    expect(await resultsOf('strict-lab', [{ id: 'u-1', eventType: 'x' }, signed('s-1')])).toEqual([
      ['u-1', false, 'unsigned'],
      ['s-1', false, null],
    ]);
    const [attested] = (await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=strict-lab&rejected=true` })).json().attestations;
    expect(attested).toMatchObject({ sourceId: 'u-1', rejectionReason: 'unsigned', compatMode: false });
    // Another toolset stays in compatibility mode.
    expect(await resultsOf('loose-lab', [{ id: 'l-1', eventType: 'x' }])).toEqual([['l-1', true, null]]);

    clock.advance(1000);
    const off = await setPolicy('strict-lab', { requireSigned: false });
    expect(off.json()).toMatchObject({ requireSigned: false, source: 'toolset', toolsetRequireSigned: false, updatedAt: clock.now().toISOString() });
    expect(await resultsOf('strict-lab', [{ id: 'u-2', eventType: 'x' }])).toEqual([['u-2', true, null]]);

    const audits = await policyAudits('strict-lab');
    expect(audits).toHaveLength(2);
    expect(audits[0]).toMatchObject({ actor: 'admin', before: null, after: { toolset: 'strict-lab', requireSigned: true, updatedBy: 'admin' } });
    expect(audits[1]).toMatchObject({ before: { requireSigned: true }, after: { requireSigned: false } });
  });

  it('changes and audits nothing when the toolset already has that setting', async () => {
    clock.advance(1000);
    const first = (await setPolicy('same-lab', { requireSigned: true })).json();
    clock.advance(1000);
    const again = await setPolicy('same-lab', { requireSigned: true });
    expect(again.statusCode).toBe(200);
    expect(again.json().updatedAt).toBe(first.updatedAt);
    expect(await policyAudits('same-lab')).toHaveLength(1);
  });

  it('takes its registry request example, and refuses a body that is not { requireSigned: boolean }', async () => {
    const manifest = (await t.call({ method: 'GET', url: `${V1}/manifest` })).json<{ endpoints: { id: string; bodySchema: { examples: unknown[] } }[] }>();
    const entry = manifest.endpoints.find((e) => e.id === 'setToolsetSigningPolicy')!;
    const example = await setPolicy('example-lab', entry.bodySchema.examples[0]);
    expect(example.statusCode, example.body).toBe(200);
    expect(example.json()).toMatchObject({ toolset: 'example-lab', requireSigned: true });
    for (const [payload, field] of [
      [{}, 'body.requireSigned'],
      [{ requireSigned: 'maybe' }, 'body.requireSigned'],
      [{ requireSigned: true, toolset: 'other-lab' }, 'body.toolset'],
    ] as const) {
      const res = await setPolicy('refused-lab', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field });
    }
    expect((await getPolicy('refused-lab')).json().toolsetRequireSigned).toBeNull();
  });

  it('needs write:alerts to change and read:empire to read', async () => {
    const reader = await t.tokenWith(['read:empire']);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await setPolicy('scoped-lab', { requireSigned: true }, reader)).statusCode).toBe(403);
    expect((await getPolicy('scoped-lab', writer)).statusCode).toBe(403);
    expect((await setPolicy('scoped-lab', { requireSigned: true }, writer)).statusCode).toBe(200);
    expect((await getPolicy('scoped-lab', reader)).json()).toMatchObject({ requireSigned: true, updatedBy: 'admin' });
  });

  it('replays a toolset\'s compatibility-mode events as rejected:unsigned once it is signed-only', async () => {
    await resultsOf('replay-lab', [{ id: 'r-1', eventType: 'x' }]);
    const replay = async () => (await t.call({ method: 'GET', url: `${V1}/empire/replay-lab/replay?eventId=r-1` })).json();
    expect(await replay()).toMatchObject({ matches: true });
    await setPolicy('replay-lab', { requireSigned: true });
    expect(await replay()).toMatchObject({ matches: false, fields: [{ field: 'admission', stored: 'compat', replayed: 'rejected:unsigned' }] });
  });
});

describe('with OBSERVATORY_REQUIRE_SIGNED_EVENTS=1', () => {
  it('every toolset is signed-only: the global source wins and a toolset setting cannot relax it', async () => {
    const strict = await t.secondInstance({ OBSERVATORY_REQUIRE_SIGNED_EVENTS: '1' });
    const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const set = await strict.server.inject({ method: 'POST', url: policyUrl('global-lab'), headers, payload: { requireSigned: false } });
    expect(set.json()).toMatchObject({ requireSigned: true, source: 'global', toolsetRequireSigned: false });
    const res = await injectIngest(strict, 'global-lab', [{ id: 'g-1', eventType: 'x' }]);
    expect(res.json()).toMatchObject({ rejected: 1, results: [{ rejectionReason: 'unsigned' }] });
  });
});

describe('across instances', () => {
  it(`takes effect on another instance within KEY_CACHE_MS (${KEY_CACHE_MS} ms)`, async () => {
    const other = await t.secondInstance();
    // The other instance reads (and caches) the toolset's admission before the change.
    expect((await injectIngest(other, 'shared-lab', [{ id: 'x-1', eventType: 'x' }])).json()).toMatchObject({ accepted: 1 });
    await setPolicy('shared-lab', { requireSigned: true });
    // Still the cached admission just before the bound, the new policy just after (the service clock ages the cache).
    clock.advance(KEY_CACHE_MS);
    expect((await injectIngest(other, 'shared-lab', [{ id: 'x-1b', eventType: 'x' }])).json()).toMatchObject({ accepted: 1 });
    clock.advance(1);
    expect((await injectIngest(other, 'shared-lab', [{ id: 'x-2', eventType: 'x' }])).json()).toMatchObject({ rejected: 1, results: [{ rejectionReason: 'unsigned' }] });
  });
});
