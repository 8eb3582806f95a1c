import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../../../../test/helpers/app.ts';
import { nodeKeyPair, registerKey, signWithNode } from '../../../../test/helpers/empire.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { sha256Hex } from '../../../platform/crypto.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { ingestJobs } from './jobs.ts';
import { ATTESTATION_SOURCE, type EmpireEvent, needsFreshKeys, sentSpelling, SIGNED_MEMBER, signedBytesOf, signedMembersOf } from './service.ts';

// The empire ingest rules (spec D4, docs/empire/README.md "Ingest"): the signed bytes, admission under the
// toolset's keys, one attestation per new event, duplicates, and what each stored row keeps.

const clock = new ManualClock('2026-11-24T12:00:00.000Z');
let t: TestApp;

const iso = (value: unknown) => (value === null ? null : new Date(value instanceof Date ? value.getTime() : String(value)).toISOString());
const ingest = (toolset: string, events: EmpireEvent[]) => t.app.empire.ingest.ingest({ toolset, events }, null);
const eventRow = async (toolset: string, senderId: string) =>
  rowsOf<Record<string, unknown>>(await t.app.database.db.execute(sql`SELECT * FROM empire_events WHERE toolset = ${toolset} AND sender_id = ${senderId}`))[0];
const attestations = async (toolset: string, sourceId: string) =>
  rowsOf<Record<string, unknown>>(await t.app.database.db.execute(sql`SELECT * FROM provenance_attestations WHERE toolset = ${toolset} AND source_id = ${sourceId}`));

// The app starts in the first test's beforeEach, not in a beforeAll: an app that cannot start (a
// mutant that breaks createEmpireIngest) then fails every test, where a failing beforeAll only skips
// them, which mutation testing counts as a survivor.
let started: Promise<TestApp> | undefined;
const app = async () => (t = await (started ??= startTestApp({ clock })));
// Starting an app on a busy machine (mutation runs beside other work) can take long.
beforeEach(app, 180_000);
afterAll(async () => (await started?.catch(() => undefined))?.close());

describe('signedBytesOf', () => {
  it('is the RFC 8785 form of toolset, id, eventType and the optional members that were sent', () => {
    expect(signedBytesOf('lab', { id: 'e1', eventType: 'tick' }).toString('utf8')).toBe('{"eventType":"tick","id":"e1","toolset":"lab"}');
    expect(
      signedBytesOf('lab', { id: 'e1', eventType: 'tick', ts: '2026-11-24T11:00:00Z', tenant: 'n', causedBy: null, payload: { b: 1, a: [2] } }).toString('utf8'),
    ).toBe('{"causedBy":null,"eventType":"tick","id":"e1","payload":{"a":[2],"b":1},"tenant":"n","toolset":"lab","ts":"2026-11-24T11:00:00Z"}');
    expect(signedBytesOf('lab', { id: 'e1', eventType: 'tick', causedBy: 'e0' }).toString('utf8')).toBe('{"causedBy":"e0","eventType":"tick","id":"e1","toolset":"lab"}');
  });
});

describe('signedMembersOf', () => {
  it('sets one bit for each of ts, causedBy and payload that was sent', () => {
    expect(SIGNED_MEMBER).toEqual({ ts: 1, causedBy: 2, payload: 4 });
    expect(signedMembersOf({ id: 'e', eventType: 't' })).toBe(0);
    expect(signedMembersOf({ id: 'e', eventType: 't', ts: '2026-11-24T11:00:00Z' })).toBe(1);
    expect(signedMembersOf({ id: 'e', eventType: 't', causedBy: null })).toBe(2);
    expect(signedMembersOf({ id: 'e', eventType: 't', payload: {} })).toBe(4);
    expect(signedMembersOf({ id: 'e', eventType: 't', ts: '2026-11-24T11:00:00Z', causedBy: 'x', payload: {}, tenant: 'n' })).toBe(7);
  });
});

describe('ingest in compatibility mode (a toolset without keys)', () => {
  it('admits unsigned events, stores what was sent and attests each without a signature', async () => {
    const outcome = await ingest('compat-lab', [
      { id: 'c1', eventType: 'tick' },
      { id: 'c2', eventType: 'tock', ts: '2026-11-24T11:00:00+00:00', tenant: 'acme', causedBy: 'c1', payload: { n: 1 } },
    ]);
    expect(outcome.compatWithKeys).toBe(0);
    expect(outcome.result).toMatchObject({ accepted: 2, duplicates: 0, rejected: 0 });
    expect(outcome.result.results.map((r) => [r.id, r.compatMode, r.rejectionReason])).toEqual([
      ['c1', true, null],
      ['c2', true, null],
    ]);
    const c1 = await eventRow('compat-lab', 'c1');
    expect(c1).toMatchObject({ event_type: 'tick', tenant: null, caused_by: null, payload: {}, key_id: null, compat_mode: true, schema_version: 1, signed_members: 0, ts_sent: null });
    expect(c1!.event_id).toBe(outcome.result.results[0]!.eventId);
    expect(iso(c1!.ts)).toBe(clock.now().toISOString());
    expect(iso(c1!.received_at)).toBe(clock.now().toISOString());
    const bytes = signedBytesOf('compat-lab', { id: 'c1', eventType: 'tick' });
    expect(c1).toMatchObject({ event_hash: sha256Hex(bytes), body_bytes: bytes.length });
    const c2 = await eventRow('compat-lab', 'c2');
    // The ts as sent is kept when its spelling differs from the stored instant's ISO form.
    expect(c2).toMatchObject({ tenant: 'acme', caused_by: 'c1', payload: { n: 1 }, signed_members: 7, ts_sent: '2026-11-24T11:00:00+00:00' });
    expect(iso(c2!.ts)).toBe('2026-11-24T11:00:00.000Z');
    const [attested] = await attestations('compat-lab', 'c1');
    expect(attested).toMatchObject({
      id: c1!.attestation_id,
      source: ATTESTATION_SOURCE,
      kind: 'tick',
      event_hash: sha256Hex(bytes),
      signature_b64: null,
      toolset_key_id: null,
      attested_at: null,
      compat_mode: true,
      rejection_reason: null,
    });
    expect(iso(attested!.accepted_at)).toBe(clock.now().toISOString());
  });

  it('keeps no ts_sent when the ts was sent in the stored ISO form', async () => {
    await ingest('compat-lab', [{ id: 'c3', eventType: 'tick', ts: '2026-11-24T11:00:00.000Z' }]);
    expect(await eventRow('compat-lab', 'c3')).toMatchObject({ ts_sent: null, signed_members: 1 });
  });

  it('answers repeats of an id as duplicates naming the stored event, and stores or attests nothing again', async () => {
    const first = (await eventRow('compat-lab', 'c1'))!.event_id;
    const outcome = await ingest('compat-lab', [
      { id: 'c1', eventType: 'tick' },
      { id: 'c4', eventType: 'tick' },
      { id: 'c4', eventType: 'tick' },
    ]);
    expect(outcome.result).toMatchObject({ accepted: 1, duplicates: 2, rejected: 0 });
    expect(outcome.result.results[0]).toEqual({ id: 'c1', eventId: first, compatMode: true, rejectionReason: null });
    expect(outcome.result.results[1]!.eventId).toBe(outcome.result.results[2]!.eventId);
    expect(outcome.result.results[1]!.eventId).toBe((await eventRow('compat-lab', 'c4'))!.event_id);
    expect(await attestations('compat-lab', 'c1')).toHaveLength(1);
    expect(await attestations('compat-lab', 'c4')).toHaveLength(1);
  });
});

describe('ingest for a toolset with a key', () => {
  const pair = nodeKeyPair();
  let keyId: string;

  beforeAll(async () => {
    keyId = await registerKey(await app(), 'signed-lab', pair.publicKeyB64);
  }, 180_000);

  it('admits a signed event under the key and attests it; counts unsigned ones admitted although the toolset can sign', async () => {
    const signed = signWithNode('signed-lab', { id: 's1', eventType: 'tick', payload: { a: 1 } }, pair.privateKey);
    const outcome = await ingest('signed-lab', [signed, { id: 'u1', eventType: 'tick' }, { id: 'u2', eventType: 'tick' }]);
    expect(outcome.result).toMatchObject({ accepted: 3, duplicates: 0, rejected: 0 });
    expect(outcome.compatWithKeys).toBe(2);
    expect(outcome.result.results[0]).toMatchObject({ id: 's1', compatMode: false, rejectionReason: null });
    expect(await eventRow('signed-lab', 's1')).toMatchObject({ key_id: keyId, compat_mode: false });
    const [attested] = await attestations('signed-lab', 's1');
    expect(attested).toMatchObject({ toolset_key_id: keyId, signature_b64: signed.signatureB64, compat_mode: false, rejection_reason: null });
    expect(iso(attested!.attested_at)).toBe(clock.now().toISOString());
  });

  it('rejects a bad signature: nothing stored, the rejection attested', async () => {
    const signed = signWithNode('signed-lab', { id: 's2', eventType: 'tick' }, pair.privateKey);
    const outcome = await ingest('signed-lab', [{ ...signed, eventType: 'tampered' }]);
    expect(outcome.result).toEqual({
      accepted: 0,
      duplicates: 0,
      rejected: 1,
      results: [{ id: 's2', eventId: null, compatMode: false, rejectionReason: 'bad-signature' }],
    });
    expect(outcome.compatWithKeys).toBe(0);
    expect(await eventRow('signed-lab', 's2')).toBeUndefined();
    expect(await attestations('signed-lab', 's2')).toEqual([
      expect.objectContaining({ kind: 'tampered', rejection_reason: 'bad-signature', attested_at: null, toolset_key_id: null, compat_mode: false }),
    ]);
  });

  it('admits an event signed with a key registered on another instance after the keys were last read (read afresh on failure)', async () => {
    const other = nodeKeyPair();
    // Read the toolset's keys once, so they are cached without the new key.
    await ingest('signed-lab', [{ id: 'warm', eventType: 'tick' }]);
    // Written as another instance would: this instance's key cache is not told.
    const newKey = randomUUID();
    await t.app.database.db.execute(
      sql`INSERT INTO provenance_keys (id, toolset, public_key_b64, status, created_at) VALUES (${newKey}, 'signed-lab', ${other.publicKeyB64}, 'active', ${new Date(clock.now().getTime() - 60_000).toISOString()})`,
    );
    const outcome = await ingest('signed-lab', [signWithNode('signed-lab', { id: 's3', eventType: 'tick' }, other.privateKey)]);
    expect(outcome.result.results[0]).toMatchObject({ rejectionReason: null, compatMode: false });
    expect(await eventRow('signed-lab', 's3')).toMatchObject({ key_id: newKey });
  });

  it('reads the keys afresh only when a signature failed', async () => {
    const fresh = vi.spyOn(t.app.provenance.service, 'verifyingKeys');
    try {
      const good = signWithNode('signed-lab', { id: 's4', eventType: 'tick' }, pair.privateKey);
      await ingest('signed-lab', [good, { id: 'u4', eventType: 'tick' }]);
      expect(fresh).not.toHaveBeenCalled();
      await ingest('signed-lab', [{ ...signWithNode('signed-lab', { id: 's5', eventType: 'tick' }, pair.privateKey), eventType: 'tampered' }]);
      expect(fresh).toHaveBeenCalledTimes(1);
      expect(fresh).toHaveBeenCalledWith('signed-lab', true);
    } finally {
      fresh.mockRestore();
    }
  });

  it('judges each event of a batch by its own signature checks', async () => {
    const good = signWithNode('signed-lab', { id: 's7', eventType: 'tick' }, pair.privateKey);
    const bad = { ...signWithNode('signed-lab', { id: 's6', eventType: 'tick' }, pair.privateKey), eventType: 'tampered' };
    const outcome = await ingest('signed-lab', [bad, good]);
    expect(outcome.result.results.map((r) => [r.id, r.rejectionReason])).toEqual([
      ['s6', 'bad-signature'],
      ['s7', null],
    ]);
  });

  it('refuses a caller bound to other toolsets, naming what it may not do', async () => {
    const bound = { userId: 'u', username: 'bound', scopes: new Set(['write:events'] as const), toolsets: new Set(['other-lab']), via: 'bearer', tokenId: 't', sessionId: null } as const;
    await expect(t.app.empire.ingest.ingest({ toolset: 'signed-lab', events: [{ id: 'x1', eventType: 'tick' }] }, bound as never)).rejects.toThrow(/write events for/);
    expect(await eventRow('signed-lab', 'x1')).toBeUndefined();
  });
});

describe('needsFreshKeys', () => {
  it('is true for a failed signature and a key retired before the event, false for admitted and unsigned events', () => {
    const decision = (rejectionReason: 'unsigned' | 'bad-signature' | 'key-retired-before-event' | null) => ({ admitted: rejectionReason === null, compatMode: false, keyId: null, rejectionReason });
    expect(needsFreshKeys(decision(null))).toBe(false);
    expect(needsFreshKeys(decision('unsigned'))).toBe(false);
    expect(needsFreshKeys(decision('bad-signature'))).toBe(true);
    expect(needsFreshKeys(decision('key-retired-before-event'))).toBe(true);
  });
});

describe('sentSpelling', () => {
  it('keeps the ts as sent only when it differs from the stored ISO form', () => {
    const stored = new Date('2026-11-24T11:00:00.000Z');
    expect(sentSpelling(undefined, stored)).toBeNull();
    expect(sentSpelling('2026-11-24T11:00:00.000Z', stored)).toBeNull();
    expect(sentSpelling('2026-11-24T11:00:00Z', stored)).toBe('2026-11-24T11:00:00Z');
  });
});

describe('a batch repeating an id', () => {
  it('stores the first of the repeats', async () => {
    await ingest('repeat-lab', [
      { id: 'r1', eventType: 'first' },
      { id: 'r1', eventType: 'second' },
    ]);
    expect(await eventRow('repeat-lab', 'r1')).toMatchObject({ event_type: 'first' });
  });
});

describe('sample pruning', () => {
  it('deletes the samples older than 8 days', async () => {
    const now = clock.now();
    const day = 86_400_000;
    await t.app.database.db.execute(sql`DELETE FROM empire_ingest_samples`);
    for (const [i, age] of [8 * day + 1, 8 * day, 8 * day - 1].entries()) {
      t.app.empire.ingest.recordSample({ receivedAt: new Date(now.getTime() - age), toolset: `p-${i}`, outcome: 'ok', latencyMs: 1, eventCount: 1 } as never);
    }
    await t.app.empire.ingest.flushSamples();
    expect(await t.app.empire.ingest.pruneSamples(now)).toBe(1);
    const left = rowsOf<{ toolset: string }>(await t.app.database.db.execute(sql`SELECT toolset FROM empire_ingest_samples ORDER BY toolset`));
    expect(left.map((r) => r.toolset)).toEqual(['p-1', 'p-2']);
  });

  it('writes the buffered samples when the ingest closes', async () => {
    await t.app.database.db.execute(sql`DELETE FROM empire_ingest_samples`);
    t.app.empire.ingest.recordSample({ receivedAt: clock.now(), toolset: 'closing', outcome: 'ok', latencyMs: 1, eventCount: 1 } as never);
    await t.app.empire.ingest.close();
    const left = rowsOf<{ toolset: string }>(await t.app.database.db.execute(sql`SELECT toolset FROM empire_ingest_samples`));
    expect(left.map((r) => r.toolset)).toEqual(['closing']);
  });
});

describe('the ingest jobs', () => {
  it('prune the SLO samples daily, described', async () => {
    const pruned: Date[] = [];
    const jobs = ingestJobs({ pruneSamples: async (now) => (pruned.push(now), 7) });
    expect(jobs.map((j) => [j.name, j.schedule])).toEqual([['empire-sample-prune', '25 3 * * *']]);
    expect(jobs[0]!.description.length).toBeGreaterThan(20);
    const now = clock.now();
    const { database } = (await app()).app;
    expect(await jobs[0]!.run({ now, db: database.db, log: pino({ level: 'silent' }), trigger: 'manual' })).toEqual({ deleted: 7 });
    expect(pruned).toEqual([now]);
  });
});
