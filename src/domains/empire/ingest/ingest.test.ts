import { createHash } from 'node:crypto';
import * as noble from '@noble/ed25519';
import canonicalize from 'canonicalize';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { EMPIRE_INGEST, ingestEmpire, nodeKeyPair, registerKey, signWithNode } from '../../../../test/helpers/empire.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { type EmpireEvent, signedBytesOf } from './service.ts';

const clock = new ManualClock('2026-11-24T10:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

type Result = { id: string; eventId: string | null; compatMode: boolean; rejectionReason: string | null };
type Answer = { accepted: number; duplicates: number; rejected: number; results: Result[] };

async function attestationsOf(toolset: string) {
  const res = await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=${toolset}&limit=200` });
  expect(res.statusCode).toBe(200);
  return res.json<{ attestations: Record<string, unknown>[] }>().attestations;
}

async function storedEvents(toolset: string) {
  return rowsOf<{ sender_id: string; event_hash: string; compat_mode: boolean; key_id: string | null; caused_by: string | null; payload: unknown; schema_version: number }>(
    await t.app.database.db.execute(sql`SELECT sender_id, event_hash, compat_mode, key_id, caused_by, payload, schema_version FROM empire_events WHERE toolset = ${toolset} ORDER BY sender_id`),
  );
}

describe('the signed bytes', () => {
  it('are the RFC 8785 form of the seven members, absent ones left out, null causedBy kept', () => {
    const event: EmpireEvent = { id: 'e1', eventType: 'crawl.done', ts: '2026-11-24T10:00:00.000Z', causedBy: null, payload: { z: 1, a: [1.5, 'é', { y: true, b: null }] } };
    const bytes = signedBytesOf('crawler-lab', { ...event, signatureB64: 'ignored', keyId: '00000000-0000-4000-8000-000000000000' });
    expect(bytes.toString('utf8')).toBe('{"causedBy":null,"eventType":"crawl.done","id":"e1","payload":{"a":[1.5,"é",{"b":null,"y":true}],"z":1},"toolset":"crawler-lab","ts":"2026-11-24T10:00:00.000Z"}');
    expect(bytes.toString('utf8')).toBe(canonicalize({ toolset: 'crawler-lab', ...event }));
  });
});

describe('POST /api/observatory/empire/ingest', () => {
  it('admits events signed with a node:crypto key and with an independent implementation (@noble/ed25519)', async () => {
    const nodeKey = nodeKeyPair();
    const nodeKeyId = await registerKey(t, 'signed-lab', nodeKey.publicKeyB64);
    const nobleSecret = noble.utils.randomSecretKey();
    const noblePublic = Buffer.from(await noble.getPublicKeyAsync(nobleSecret)).toString('base64');
    const nobleKeyId = await registerKey(t, 'signed-lab', noblePublic);

    const byNode = signWithNode('signed-lab', { id: 'n-1', eventType: 'crawl.started', payload: { url: 'https://example.org/' } }, nodeKey.privateKey);
    const plain: EmpireEvent = { id: 'b-1', eventType: 'crawl.done', causedBy: 'n-1', tenant: 'docs-mirror', ts: '2026-11-24T09:59:00.000Z' };
    const byNoble = { ...plain, keyId: nobleKeyId, signatureB64: Buffer.from(await noble.signAsync(signedBytesOf('signed-lab', plain), nobleSecret)).toString('base64') };

    const res = await ingestEmpire(t, 'signed-lab', [byNode, byNoble]);
    expect(res.statusCode).toBe(200);
    const body = res.json<Answer>();
    expect(body).toMatchObject({ schema: 'svc-empire-ingest.v1', accepted: 2, duplicates: 0, rejected: 0 });
    expect(body.results.map((r) => [r.id, r.compatMode, r.rejectionReason])).toEqual([
      ['n-1', false, null],
      ['b-1', false, null],
    ]);
    expect(body.results.every((r) => typeof r.eventId === 'string')).toBe(true);

    const stored = await storedEvents('signed-lab');
    expect(stored.map((s) => [s.sender_id, s.key_id, s.compat_mode, s.caused_by, s.schema_version])).toEqual([
      ['b-1', nobleKeyId, false, 'n-1', 1],
      ['n-1', nodeKeyId, false, null, 1],
    ]);
    const expectedHash = createHash('sha256').update(canonicalize({ toolset: 'signed-lab', ...plain })!).digest('hex');
    expect(stored[0]!.event_hash).toBe(expectedHash);

    const attestations = await attestationsOf('signed-lab');
    expect(attestations).toHaveLength(2);
    expect(attestations.find((a) => a.sourceId === 'b-1')).toMatchObject({
      source: 'empire-ingest',
      kind: 'crawl.done',
      eventHash: expectedHash,
      signatureB64: byNoble.signatureB64,
      toolsetKeyId: nobleKeyId,
      attestedAt: clock.now().toISOString(),
      acceptedAt: clock.now().toISOString(),
      compatMode: false,
      rejectionReason: null,
    });
  });

  it('rejects a signature that verifies under no key, a tampered event, and a key of another toolset', async () => {
    const key = nodeKeyPair();
    await registerKey(t, 'tamper-lab', key.publicKeyB64);
    const stranger = nodeKeyPair();
    const strangerId = await registerKey(t, 'other-lab', stranger.publicKeyB64);
    const good = signWithNode('tamper-lab', { id: 't-1', eventType: 'x', payload: { n: 1 } }, key.privateKey);
    const tampered = { ...good, id: 't-2', payload: { n: 2 } };
    const foreign = { ...signWithNode('tamper-lab', { id: 't-3', eventType: 'x' }, stranger.privateKey), keyId: strangerId };
    const garbage = { id: 't-4', eventType: 'x', signatureB64: 'AAAA' };
    const body = (await ingestEmpire(t, 'tamper-lab', [good, tampered, foreign, garbage])).json<Answer>();
    expect(body).toMatchObject({ accepted: 1, rejected: 3 });
    expect(body.results.map((r) => r.rejectionReason)).toEqual([null, 'bad-signature', 'bad-signature', 'bad-signature']);
    expect(body.results.slice(1).every((r) => r.eventId === null)).toBe(true);
    expect((await storedEvents('tamper-lab')).map((s) => s.sender_id)).toEqual(['t-1']);
    const rejected = (await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=tamper-lab&rejected=true` })).json().attestations;
    expect(rejected.map((a: { sourceId: string }) => a.sourceId).sort()).toEqual(['t-2', 't-3', 't-4']);
    expect(rejected.every((a: { attestedAt: unknown; rejectionReason: string }) => a.attestedAt === null && a.rejectionReason === 'bad-signature')).toBe(true);
  });

  it('keeps events at or before a key\'s retirement and rejects later ones with key-retired-before-event', async () => {
    const key = nodeKeyPair();
    const keyId = await registerKey(t, 'retire-lab', key.publicKeyB64);
    const retiredAt = clock.now().toISOString();
    await t.call({ method: 'POST', url: `${V1}/provenance/keys/${keyId}/retire`, payload: {} });
    const before = signWithNode('retire-lab', { id: 'r-before', eventType: 'x', ts: '2026-11-24T09:00:00.000Z' }, key.privateKey);
    const at = signWithNode('retire-lab', { id: 'r-at', eventType: 'x', ts: retiredAt }, key.privateKey);
    const after = signWithNode('retire-lab', { id: 'r-after', eventType: 'x', ts: new Date(clock.now().getTime() + 1).toISOString() }, key.privateKey);
    const body = (await ingestEmpire(t, 'retire-lab', [before, at, after])).json<Answer>();
    expect(body.results.map((r) => [r.id, r.rejectionReason])).toEqual([
      ['r-before', null],
      ['r-at', null],
      ['r-after', 'key-retired-before-event'],
    ]);
    const [attested] = (await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=retire-lab&rejected=true` })).json().attestations;
    expect(attested).toMatchObject({ sourceId: 'r-after', toolsetKeyId: keyId, rejectionReason: 'key-retired-before-event' });
  });

  it('admits unsigned events in compatibility mode, attested without a signature', async () => {
    const body = (await ingestEmpire(t, 'legacy-lab', [{ id: 'l-1', eventType: 'x' }])).json<Answer>();
    expect(body).toMatchObject({ accepted: 1, rejected: 0, results: [{ id: 'l-1', compatMode: true, rejectionReason: null }] });
    const [attestation] = await attestationsOf('legacy-lab');
    expect(attestation).toMatchObject({ compatMode: true, signatureB64: null, toolsetKeyId: null, attestedAt: null, rejectionReason: null });
    const compat = (await t.call({ method: 'GET', url: `${V1}/provenance/attestations?compatMode=true&toolset=legacy-lab` })).json().attestations;
    expect(compat).toHaveLength(1);
    expect((await t.call({ method: 'GET', url: `${V1}/provenance/attestations?compatMode=false&toolset=legacy-lab` })).json().attestations).toEqual([]);
    expect((await t.call({ method: 'GET', url: `${V1}/provenance/attestations?rejected=false&toolset=legacy-lab` })).json().attestations).toHaveLength(1);
  });

  it('counts an id sent again, earlier or in the same request, as a duplicate and attests it once', async () => {
    const first = (await ingestEmpire(t, 'dup-lab', [{ id: 'd-1', eventType: 'x' }, { id: 'd-1', eventType: 'y' }])).json<Answer>();
    expect(first).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(first.results[0]!.eventId).toBe(first.results[1]!.eventId);
    const again = (await ingestEmpire(t, 'dup-lab', [{ id: 'd-1', eventType: 'x' }, { id: 'd-2', eventType: 'x' }])).json<Answer>();
    expect(again).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(again.results[0]!.eventId).toBe(first.results[0]!.eventId);
    expect((await storedEvents('dup-lab')).map((s) => s.sender_id)).toEqual(['d-1', 'd-2']);
    expect(await attestationsOf('dup-lab')).toHaveLength(2);
  });

  it('verifies with a key registered on another instance at once (a failed check reads the keys again)', async () => {
    await ingestEmpire(t, 'fresh-lab', [{ id: 'f-0', eventType: 'x' }]);
    const second = await t.secondInstance();
    const key = nodeKeyPair();
    const res = await second.server.inject({
      method: 'POST',
      url: `${V1}/provenance/keys`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { toolset: 'fresh-lab', publicKeyB64: key.publicKeyB64 },
    });
    expect(res.statusCode).toBe(200);
    const body = (await ingestEmpire(t, 'fresh-lab', [signWithNode('fresh-lab', { id: 'f-1', eventType: 'x' }, key.privateKey)])).json<Answer>();
    expect(body.results[0]).toMatchObject({ compatMode: false, rejectionReason: null });
  });

  it('refuses a bad body with 400 naming the field, and stores nothing', async () => {
    const cases: [unknown, string][] = [
      [{ toolset: 'x', events: [{ id: 'a', eventType: 'x' }] }, 'body.toolset'],
      [{ toolset: 'ok-lab', events: [] }, 'body.events'],
      [{ toolset: 'ok-lab', events: [{ eventType: 'x' }] }, 'body.events[0].id'],
      [{ toolset: 'ok-lab', events: [{ id: 'a' }] }, 'body.events[0].eventType'],
      [{ toolset: 'ok-lab', events: [{ id: 'a', eventType: 'x', ts: 'yesterday' }] }, 'body.events[0].ts'],
      [{ toolset: 'ok-lab', events: [{ id: 'a', eventType: 'x', payload: [1] }] }, 'body.events[0].payload'],
      [{ toolset: 'ok-lab', events: Array.from({ length: 501 }, (_, i) => ({ id: `a${i}`, eventType: 'x' })) }, 'body.events'],
    ];
    for (const [payload, field] of cases) {
      const res = await t.call({ method: 'POST', url: EMPIRE_INGEST, payload: payload as object });
      expect(res.statusCode, field).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', field });
    }
    expect(await storedEvents('ok-lab')).toEqual([]);
  });

  it('refuses a body over 1 MiB with 413 payload-too-large, storing nothing', async () => {
    const events = Array.from({ length: 5 }, (_, i) => ({ id: `big-${i}`, eventType: 'x', payload: { blob: 'x'.repeat(220_000) } }));
    const res = await ingestEmpire(t, 'big-lab', events);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'payload-too-large' });
    expect(await storedEvents('big-lab')).toEqual([]);
  });

  it('needs write:events', async () => {
    expect((await ingestEmpire(t, 'auth-lab', [{ id: 'a', eventType: 'x' }], null)).statusCode).toBe(401);
    const reader = await t.tokenWith(['read:empire', 'write:alerts']);
    expect((await ingestEmpire(t, 'auth-lab', [{ id: 'a', eventType: 'x' }], reader)).statusCode).toBe(403);
    const writer = await t.tokenWith(['write:events']);
    expect((await ingestEmpire(t, 'auth-lab', [{ id: 'a', eventType: 'x' }], writer)).statusCode).toBe(200);
  });

  it('samples every request with its toolset and outcome for the SLO', async () => {
    await ingestEmpire(t, 'sample-lab', [{ id: 's-1', eventType: 'x' }]);
    await ingestEmpire(t, 'sample-lab', [{ id: 's-2', eventType: 'x', signatureB64: 'AAAA' }]);
    await t.call({ method: 'POST', url: EMPIRE_INGEST, payload: { toolset: 'sample-lab', events: [] } });
    await t.app.empire.ingest.flushSamples();
    const rows = rowsOf<{ outcome: string; event_count: number }>(
      await t.app.database.db.execute(sql`SELECT outcome, event_count FROM empire_ingest_samples WHERE toolset = 'sample-lab' ORDER BY id`),
    );
    expect(rows).toEqual([
      { outcome: 'ok', event_count: 1 },
      { outcome: 'rejected-events', event_count: 0 },
      { outcome: 'invalid-body', event_count: 0 },
    ]);
  });
});

describe('GET {v1}/provenance/attestations', () => {
  it('pages newest first through rows of one instant without loss, and filters by source', async () => {
    clock.advance(60_000);
    const older = clock.now().toISOString();
    await ingestEmpire(t, 'page-lab', [{ id: 'p-0', eventType: 'x' }]);
    clock.advance(60_000);
    await ingestEmpire(t, 'page-lab', Array.from({ length: 5 }, (_, i) => ({ id: `p-${i + 1}`, eventType: 'x' })));
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { attestations: { sourceId: string }[]; nextCursor: string | null } = (
        await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=page-lab&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` })
      ).json();
      seen.push(...page.attestations.map((a: { sourceId: string }) => a.sourceId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    expect(seen.at(-1)).toBe('p-0');
    const bare = (await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=page-lab&cursor=${encodeURIComponent(clock.now().toISOString())}` })).json();
    expect(bare.attestations.map((a: { sourceId: string; acceptedAt: string }) => [a.sourceId, a.acceptedAt])).toEqual([['p-0', older]]);
    expect((await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=page-lab&source=elsewhere` })).json().attestations).toEqual([]);
    const bad = await t.call({ method: 'GET', url: `${V1}/provenance/attestations?rejected=maybe` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field).toBe('query.rejected');
  });
});

describe('OBSERVATORY_REQUIRE_SIGNED_EVENTS=1', () => {
  it('rejects unsigned events with unsigned, and still admits signed ones', async () => {
    const strict = await t.secondInstance({ OBSERVATORY_REQUIRE_SIGNED_EVENTS: '1' });
    const key = nodeKeyPair();
    await registerKey(t, 'strict-lab', key.publicKeyB64);
    const res = await strict.server.inject({
      method: 'POST',
      url: EMPIRE_INGEST,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { toolset: 'strict-lab', events: [{ id: 'u-1', eventType: 'x' }, signWithNode('strict-lab', { id: 's-1', eventType: 'x' }, key.privateKey)] },
    });
    expect(res.json()).toMatchObject({ accepted: 1, rejected: 1, results: [{ id: 'u-1', rejectionReason: 'unsigned', eventId: null }, { id: 's-1', rejectionReason: null }] });
    const [unsigned] = (await t.call({ method: 'GET', url: `${V1}/provenance/attestations?toolset=strict-lab&rejected=true` })).json().attestations;
    expect(unsigned).toMatchObject({ sourceId: 'u-1', rejectionReason: 'unsigned', compatMode: false });
  });
});
