import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire, ingestRaw, nodeKeyPair, registerKey, signWithNode, tokenBoundTo } from '../../../../test/helpers/empire.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { EVENT_TS_MAX_FUTURE_MS, EVENT_TS_MAX_PAST_MS } from '../../../platform/event-time.ts';
import { MAX_PAYLOAD_BYTES, MAX_PAYLOAD_DEPTH } from './event-checks.ts';

/**
 * Attacks on the empire ingest (docs/empire/README.md, "Security model"): each is reproduced through the
 * API and must end in a 400 or 403 that stores nothing, or in a visible SLO count; never a 500.
 */

const clock = new ManualClock('2026-11-24T10:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const db = () => t.app.database.db;

async function storedIds(toolset: string): Promise<string[]> {
  const rows = rowsOf<{ sender_id: string }>(await db().execute(sql`SELECT sender_id FROM empire_events WHERE toolset = ${toolset} ORDER BY sender_id`));
  return rows.map((r) => r.sender_id);
}

async function attestationCount(toolset: string): Promise<number> {
  const [row] = rowsOf<{ n: number }>(await db().execute(sql`SELECT count(*)::int AS n FROM provenance_attestations WHERE toolset = ${toolset}`));
  return Number(row!.n);
}

async function sampledOutcomes(toolset: string | null): Promise<string[]> {
  await t.app.empire.ingest.flushSamples();
  const where = toolset === null ? sql`toolset IS NULL` : sql`toolset = ${toolset}`;
  return rowsOf<{ outcome: string }>(await db().execute(sql`SELECT outcome FROM empire_ingest_samples WHERE ${where} ORDER BY id`)).map((r) => r.outcome);
}

/** A batch whose first event is fine and whose second carries `payloadJson` (raw JSON text). */
const batchWith = (toolset: string, payloadJson: string) =>
  `{"toolset":"${toolset}","events":[{"id":"fine-0","eventType":"x","payload":{"ok":true}},{"id":"bad-1","eventType":"x","payload":${payloadJson}}]}`;

/** Expects a 400 invalid-body naming `field`, and that nothing of the batch was stored or attested. */
async function expectRefused(res: { statusCode: number; json: () => Record<string, unknown> }, toolset: string, field: string, human: RegExp) {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(400);
  expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body', field });
  expect(String(res.json().human)).toMatch(human);
  expect(await storedIds(toolset)).toEqual([]);
  expect(await attestationCount(toolset)).toBe(0);
}

describe('payloads that break canonicalisation or storage are refused whole (400, never 500)', () => {
  it('refuses a payload nested ~5,000 levels deep (objects and arrays), naming the event', async () => {
    const deepObject = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    await expectRefused(await ingestRaw(t, batchWith('deep-lab', deepObject)), 'deep-lab', 'body.events[1].payload', /nested more than 32 levels/);
    const deepArray = `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    await expectRefused(await ingestRaw(t, batchWith('deep-lab', deepArray)), 'deep-lab', 'body.events[1].payload', /nested more than 32 levels/);
    expect(await sampledOutcomes('deep-lab')).toEqual(['invalid-body', 'invalid-body']);
  });

  it('takes exactly 32 levels and refuses 33', async () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}true${'}'.repeat(levels)}`;
    expect(MAX_PAYLOAD_DEPTH).toBe(32);
    await expectRefused(await ingestRaw(t, batchWith('depth-lab', nested(33))), 'depth-lab', 'body.events[1].payload', /32 levels/);
    const ok = await ingestRaw(t, batchWith('depth-lab', nested(32)));
    expect(ok.statusCode, ok.body).toBe(200);
    expect(await storedIds('depth-lab')).toEqual(['bad-1', 'fine-0']);
  });

  it('refuses a lone surrogate in a payload value or key, high or low half, and takes a proper pair', async () => {
    for (const payload of ['{"s":"\\ud800"}', '{"\\ud800":1}', '{"list":["ok","x\\udc00y"]}', '{"a":{"b\\udbff":null}}']) {
      await expectRefused(await ingestRaw(t, batchWith('surrogate-lab', payload)), 'surrogate-lab', 'body.events[1].payload', /lone UTF-16 surrogate/);
    }
    const pair = await ingestRaw(t, batchWith('surrogate-lab', '{"\\ud83d\\ude00":"\\ud83d\\ude00"}'));
    expect(pair.statusCode, pair.body).toBe(200);
    expect(rowsOf(await db().execute(sql`SELECT payload FROM empire_events WHERE toolset = 'surrogate-lab' AND sender_id = 'bad-1'`))).toEqual([{ payload: { '😀': '😀' } }]);
  });

  it('refuses a lone surrogate in id, eventType, tenant, causedBy and signatureB64, naming the field', async () => {
    for (const name of ['id', 'eventType', 'tenant', 'causedBy', 'signatureB64']) {
      const event = { id: 'ok-id', eventType: 'x', [name]: `a${'\\ud800'}b` };
      const body = `{"toolset":"strings-lab","events":[{"id":"fine","eventType":"x"},${JSON.stringify(event).replace('\\\\ud800', '\\ud800')}]}`;
      await expectRefused(await ingestRaw(t, body), 'strings-lab', `body.events[1].${name}`, /lone UTF-16 surrogate/);
    }
  });

  it('refuses a number that parses to Infinity (1e999, -1e999) written in the JSON text', async () => {
    for (const payload of ['{"n":1e999}', '{"list":[1,-1e999]}']) {
      await expectRefused(await ingestRaw(t, batchWith('infinite-lab', payload)), 'infinite-lab', 'body.events[1].payload', /not finite/);
    }
  });

  it('refuses a payload over 64 KiB in canonical form, and takes one of exactly 64 KiB', async () => {
    expect(MAX_PAYLOAD_BYTES).toBe(65_536);
    // {"s":"…"} is the string plus 8 bytes in canonical form.
    const sized = (bytes: number) => JSON.stringify({ s: 'x'.repeat(bytes - 8) });
    await expectRefused(await ingestRaw(t, batchWith('size-lab', sized(65_537))), 'size-lab', 'body.events[1].payload', /larger than 65536 bytes/);
    // Escapes count as written: 11,000 "\u0001" are 66,000 canonical bytes from a small object.
    await expectRefused(await ingestRaw(t, batchWith('size-lab', JSON.stringify({ s: '\u0001'.repeat(11_000) }))), 'size-lab', 'body.events[1].payload', /larger than/);
    // 1e20 is written in full (21 digits): 4,000 of them are over 64 KiB from a 20 KB body.
    await expectRefused(await ingestRaw(t, batchWith('size-lab', `{"n":[${new Array(4000).fill('1e20').join(',')}]}`)), 'size-lab', 'body.events[1].payload', /larger than/);
    const ok = await ingestRaw(t, batchWith('size-lab', sized(65_536)));
    expect(ok.statusCode, ok.body).toBe(200);
    const [row] = rowsOf<{ body_bytes: number }>(await db().execute(sql`SELECT body_bytes FROM empire_events WHERE toolset = 'size-lab' AND sender_id = 'bad-1'`));
    // The signed bytes add the envelope members around the 64 KiB payload.
    expect(row!.body_bytes).toBeGreaterThan(65_536);
  });
});

describe('event time bounds (spec D3, shared with the honeypot ingest)', () => {
  it('takes ts exactly 30 days back and 5 minutes ahead, refuses a millisecond beyond either, naming the field', async () => {
    const now = clock.now().getTime();
    const at = (ms: number) => new Date(now + ms).toISOString();
    const ok = await ingestEmpire(t, 'time-lab', [
      { id: 'oldest', eventType: 'x', ts: at(-EVENT_TS_MAX_PAST_MS) },
      { id: 'newest', eventType: 'x', ts: at(EVENT_TS_MAX_FUTURE_MS) },
    ]);
    expect(ok.statusCode, ok.body).toBe(200);
    for (const [ts, problem] of [
      [at(-EVENT_TS_MAX_PAST_MS - 1), /more than 30 days in the past/],
      [at(EVENT_TS_MAX_FUTURE_MS + 1), /more than 5 minutes in the future/],
      ['1970-01-01T00:00:00.000Z', /30 days/],
      ['2999-01-01T00:00:00.000Z', /5 minutes/],
    ] as const) {
      const res = await ingestEmpire(t, 'time-lab', [
        { id: 'fine', eventType: 'x' },
        { id: 'stray', eventType: 'x', ts },
      ]);
      expect(res.statusCode, ts).toBe(400);
      expect(res.json()).toMatchObject({ reason: 'invalid-body', field: 'body.events[1].ts' });
      expect(res.json().human).toMatch(problem);
    }
    expect(await storedIds('time-lab')).toEqual(['newest', 'oldest']);
  });

  it('refuses a leap second, which JSON Schema\'s date-time admits but no Date can hold', async () => {
    const res = await ingestEmpire(t, 'time-lab', [{ id: 'leap', eventType: 'x', ts: '2026-11-23T23:59:60Z' }]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ reason: 'invalid-body', field: 'body.events[0].ts' });
  });
});

describe('tokens bound to toolsets', () => {
  it('write their own toolsets only: another toolset is 403 naming it, and nothing is stored', async () => {
    const bound = await tokenBoundTo(t, ['write:events'], ['own-lab', 'second-lab']);
    expect((await ingestEmpire(t, 'own-lab', [{ id: 'o-1', eventType: 'x' }], bound)).statusCode).toBe(200);
    expect((await ingestEmpire(t, 'second-lab', [{ id: 's-1', eventType: 'x' }], bound)).statusCode).toBe(200);
    const refused = await ingestEmpire(t, 'victim-lab', [{ id: 'v-1', eventType: 'x' }], bound);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'forbidden' });
    expect(refused.json().human).toContain('victim-lab');
    expect(await storedIds('victim-lab')).toEqual([]);
    expect(await attestationCount('victim-lab')).toBe(0);
    // The refusal is sampled, but not against the toolset the caller may not write for.
    expect(await sampledOutcomes('victim-lab')).toEqual([]);
    expect(await sampledOutcomes(null)).toContain('forbidden');
  });

  it('are refused before the body is judged: a bound token learns nothing of another toolset\'s events', async () => {
    const bound = await tokenBoundTo(t, ['write:events'], ['own-lab']);
    const res = await ingestRaw(t, batchWith('victim-lab', '{"n":1e999}'), bound);
    expect(res.statusCode).toBe(403);
  });

  it('leave unbound tokens free to write any toolset', async () => {
    const unbound = await t.tokenWith(['write:events']);
    expect((await ingestEmpire(t, 'victim-lab', [{ id: 'v-2', eventType: 'x' }], unbound)).statusCode).toBe(200);
    expect(await storedIds('victim-lab')).toEqual(['v-2']);
  });
});

type SloRow = { toolset: string; totalSamples: number; okCount: number; outcomeBreakdown: { outcome: string; count: number }[] };

describe('unsigned events of a toolset with active keys', () => {
  it('are sampled as compat-unsigned-with-keys, which the SLO counts apart and not as ok', async () => {
    clock.advance(60_000);
    const key = nodeKeyPair();
    const keyId = await registerKey(t, 'downgrade-lab', key.publicKeyB64);
    const signed = (id: string) => signWithNode('downgrade-lab', { id, eventType: 'x' }, key.privateKey);
    // Signed: ok. Unsigned while the key is active: admitted (compatibility mode), but counted.
    expect((await ingestEmpire(t, 'downgrade-lab', [signed('d-1')])).json()).toMatchObject({ accepted: 1 });
    expect((await ingestEmpire(t, 'downgrade-lab', [signed('d-2'), { id: 'd-3', eventType: 'x' }])).json()).toMatchObject({ accepted: 2, results: [{ compatMode: false }, { compatMode: true }] });
    // A badly signed event in the same batch does not hide the downgrade behind rejected-events.
    expect((await ingestEmpire(t, 'downgrade-lab', [{ id: 'd-4', eventType: 'x' }, { id: 'd-5', eventType: 'x', signatureB64: 'AAAA' }])).json()).toMatchObject({ rejected: 1 });
    // A toolset without keys sends unsigned events as before: ok.
    await ingestEmpire(t, 'keyless-lab', [{ id: 'k-1', eventType: 'x' }]);
    // Once its only key is retired, the toolset no longer signs: unsigned is ok again.
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/keys/${keyId}/retire`, payload: {} })).statusCode).toBe(200);
    await ingestEmpire(t, 'downgrade-lab', [{ id: 'd-6', eventType: 'x' }]);

    expect(await sampledOutcomes('downgrade-lab')).toEqual(['ok', 'compat-unsigned-with-keys', 'compat-unsigned-with-keys', 'ok']);
    expect(await sampledOutcomes('keyless-lab')).toEqual(['ok']);
    const slo = (await t.call({ method: 'GET', url: `${V1}/empire/slo?window=1h` })).json<{ rows: SloRow[] }>();
    const row = slo.rows.find((r) => r.toolset === 'downgrade-lab')!;
    expect(row).toMatchObject({ totalSamples: 4, okCount: 2 });
    expect(row.outcomeBreakdown).toEqual([
      { outcome: 'compat-unsigned-with-keys', count: 2 },
      { outcome: 'ok', count: 2 },
    ]);
  });
});
