import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ingestEmpire } from '../../../../test/helpers/empire.ts';
import type { EmpireEvent } from '../ingest/service.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

type LineageEvent = { eventId: string; id: string; depth: number; causedBy: string | null };
type Lineage = { focal: LineageEvent; upstream: LineageEvent[]; downstream: LineageEvent[]; upstreamTruncated: boolean; downstreamTruncated: boolean; depth: number };

/** Sends events (in requests of at most 500) and returns their eventIds by id. */
async function send(toolset: string, events: EmpireEvent[]): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (let i = 0; i < events.length; i += 500) {
    const res = await ingestEmpire(t, toolset, events.slice(i, i + 500));
    expect(res.statusCode).toBe(200);
    for (const r of res.json<{ results: { id: string; eventId: string }[] }>().results) ids.set(r.id, r.eventId);
  }
  return ids;
}

const lineage = async (eventId: string, query = '') => t.call({ method: 'GET', url: `${V1}/empire/lineage/${eventId}${query}` });

describe('GET {v1}/empire/lineage/{eventId}', () => {
  it('walks a 1,000-event chain both ways in one request, nearest first', async () => {
    const chain = Array.from({ length: 1000 }, (_, i): EmpireEvent => ({ id: `c-${i}`, eventType: 'step', causedBy: i === 0 ? null : `c-${i - 1}` }));
    const ids = await send('chain-lab', chain);
    const fromEnd = (await lineage(ids.get('c-999')!)).json<Lineage>();
    expect(fromEnd.focal.id).toBe('c-999');
    expect(fromEnd.upstream).toHaveLength(999);
    expect(fromEnd.upstream.slice(0, 3).map((e) => [e.id, e.depth])).toEqual([
      ['c-998', 1],
      ['c-997', 2],
      ['c-996', 3],
    ]);
    expect(fromEnd.upstream.at(-1)).toMatchObject({ id: 'c-0', depth: 999, causedBy: null });
    expect(fromEnd.downstream).toEqual([]);
    const fromStart = (await lineage(ids.get('c-0')!)).json<Lineage>();
    expect(fromStart.upstream).toEqual([]);
    expect(fromStart.downstream.map((e) => e.id)).toEqual(chain.slice(1).map((e) => e.id));
    const middle = (await lineage(ids.get('c-500')!)).json<Lineage>();
    expect([middle.upstream.length, middle.downstream.length]).toEqual([500, 499]);
    expect([middle.upstreamTruncated, middle.downstreamTruncated]).toEqual([false, false]);
  });

  it('stops at the depth asked for and says so', async () => {
    const ids = await send('depth-lab', Array.from({ length: 10 }, (_, i): EmpireEvent => ({ id: `d-${i}`, eventType: 'step', causedBy: i === 0 ? null : `d-${i - 1}` })));
    const near = (await lineage(ids.get('d-5')!, '?depth=2')).json<Lineage>();
    expect(near.upstream.map((e) => e.id)).toEqual(['d-4', 'd-3']);
    expect(near.downstream.map((e) => e.id)).toEqual(['d-6', 'd-7']);
    expect(near.depth).toBe(2);
  });

  it('is safe on a cycle: each event once, the walk stops where the cycle closes', async () => {
    const ids = await send('cycle-lab', [
      { id: 'a', eventType: 'x', causedBy: 'c' },
      { id: 'b', eventType: 'x', causedBy: 'a' },
      { id: 'c', eventType: 'x', causedBy: 'b' },
    ]);
    const res = (await lineage(ids.get('a')!)).json<Lineage>();
    expect(res.upstream.map((e) => e.id)).toEqual(['c', 'b']);
    expect(res.downstream.map((e) => e.id)).toEqual(['b', 'c']);
    const self = await send('cycle-lab', [{ id: 'self', eventType: 'x', causedBy: 'self' }]);
    const own = (await lineage(self.get('self')!)).json<Lineage>();
    expect([own.upstream, own.downstream]).toEqual([[], []]);
  });

  it('lists every branch downstream level by level, and never crosses into another toolset', async () => {
    const ids = await send('tree-lab', [
      { id: 'root', eventType: 'x' },
      { id: 'left', eventType: 'x', causedBy: 'root' },
      { id: 'right', eventType: 'x', causedBy: 'root' },
      { id: 'leaf', eventType: 'x', causedBy: 'left' },
    ]);
    await send('other-lab', [{ id: 'stranger', eventType: 'x', causedBy: 'root' }]);
    const res = (await lineage(ids.get('root')!)).json<Lineage>();
    expect(res.downstream.map((e) => [e.id, e.depth]).sort()).toEqual([
      ['leaf', 2],
      ['left', 1],
      ['right', 1],
    ]);
    expect(res.downstream.at(-1)!.id).toBe('leaf');
  });

  it('answers 404 for an unknown event, 400 for a bad depth, and needs read:empire', async () => {
    expect((await lineage('6a0f0a7e-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await lineage('not-an-id')).json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    const ids = await send('auth-lab', [{ id: 'x', eventType: 'x' }]);
    const bad = await lineage(ids.get('x')!, '?depth=0');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().field).toBe('query.depth');
    const other = await t.tokenWith(['read:events']);
    expect((await t.call({ method: 'GET', url: `${V1}/empire/lineage/${ids.get('x')}`, token: other })).statusCode).toBe(403);
  });
});

describe('{v1}/empire/notes', () => {
  const read = (query: string, token?: string) => t.call({ method: 'GET', url: `${V1}/empire/notes?${query}`, ...(token ? { token } : {}) });
  const write = (payload: unknown, token?: string) => t.call({ method: 'POST', url: `${V1}/empire/notes`, payload: payload as object, ...(token ? { token } : {}) });

  it('writes, reads and replaces the note on an event, keeping its id, and audits each write', async () => {
    expect((await read('eventId=ev-1')).json()).toMatchObject({ schema: 'svc-empire-note.v1', eventId: 'ev-1', tenant: null, note: null });
    const first = await write({ eventId: 'ev-1', note: 'Looks like a replayed crawl.', pinned: true, color: 'yellow' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ schema: 'svc-empire-note-upsert.v1', ok: true, eventId: 'ev-1' });
    const note = (await read('eventId=ev-1')).json().note;
    expect(note).toMatchObject({ id: first.json().id, targetKind: 'event', note: 'Looks like a replayed crawl.', pinned: true, color: 'yellow', userId: expect.any(String) });
    const second = await write({ eventId: 'ev-1', note: 'Confirmed: replay.', color: '#00aa33' });
    expect(second.json().id).toBe(first.json().id);
    expect((await read('eventId=ev-1')).json().note).toMatchObject({ note: 'Confirmed: replay.', pinned: false, color: '#00aa33' });
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=50` })).body;
    expect(audit.split('empire.note-upsert').length - 1).toBe(2);
  });

  it('takes any colour string of at most 32 characters, or null (spec A: string or null)', async () => {
    for (const color of ['amber', '#ffaa00', 'chartreuse', 'c'.repeat(32), null]) {
      const res = await write({ eventId: 'ev-colour', note: 'x', color });
      expect(res.statusCode, String(color)).toBe(200);
      expect((await read('eventId=ev-colour')).json().note.color).toBe(color);
    }
    const long = await write({ eventId: 'ev-colour', note: 'x', color: 'c'.repeat(33) });
    expect(long.statusCode).toBe(400);
    expect(long.json()).toMatchObject({ reason: 'invalid-body', field: 'body.color' });
  });

  it('keeps notes apart by tenant and target kind', async () => {
    await write({ eventId: 'ev-2', note: 'fleet-wide' });
    await write({ eventId: 'ev-2', note: 'for docs-mirror', tenant: 'docs-mirror' });
    await write({ eventId: 'ev-2', note: 'the incident', targetKind: 'incident' });
    expect((await read('eventId=ev-2')).json().note.note).toBe('fleet-wide');
    expect((await read('eventId=ev-2&tenant=docs-mirror')).json()).toMatchObject({ tenant: 'docs-mirror', note: { note: 'for docs-mirror' } });
    expect((await read('eventId=ev-2&targetKind=incident')).json().note).toMatchObject({ targetKind: 'incident', note: 'the incident' });
  });

  it('refuses bad fields with 400 naming them, and checks scopes', async () => {
    for (const [payload, field] of [
      [{ note: 'x' }, 'body.eventId'],
      [{ eventId: 'ev-3' }, 'body.note'],
      [{ eventId: 'ev-3', note: '' }, 'body.note'],
      [{ eventId: 'ev-3', note: 'x', color: 'c'.repeat(33) }, 'body.color'],
      [{ eventId: 'ev-3', note: 'x', targetKind: 'tenant' }, 'body.targetKind'],
      [{ eventId: 'ev-3', note: 'x', pinned: 'yes' }, 'body.pinned'],
    ] as const) {
      const res = await write(payload);
      expect(res.statusCode, field).toBe(400);
      expect(res.json().field, field).toBe(field);
    }
    expect((await read('')).json().field).toBe('query.eventId');
    const reader = await t.tokenWith(['read:events']);
    expect((await read('eventId=ev-1', reader)).statusCode).toBe(200);
    expect((await write({ eventId: 'ev-1', note: 'x' }, reader)).statusCode).toBe(403);
    const tenantsWriter = await t.tokenWith(['write:tenants']);
    expect((await write({ eventId: 'ev-1', note: 'x' }, tenantsWriter)).statusCode).toBe(200);
    expect((await read('eventId=ev-1', tenantsWriter)).statusCode).toBe(403);
  });
});
