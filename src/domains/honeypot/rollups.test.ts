import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_FUTURE_MS } from './ingest.ts';
import {
  aggregateBatch,
  clusterKey,
  compareUtf8,
  type RollupDeltas,
  type RollupEvent,
  MAX_TS_AHEAD_MS,
  NO_ASN,
  NO_JA4,
  rollupTime,
  valueKey,
  windowStart,
} from './rollups.ts';

const NOW = new Date('2026-11-23T10:30:00.000Z');
const T1 = '11111111-1111-4111-8111-111111111111';
const T2 = '22222222-2222-4222-8222-222222222222';

function event(over: Partial<RollupEvent> = {}): RollupEvent {
  return {
    tenantId: T1,
    ts: new Date('2026-11-23T10:10:00.000Z'),
    receivedAt: NOW,
    path: '/honeypot/topics/a',
    uaRaw: 'curl/8.4.0',
    country: null,
    asn: null,
    uaClass: 'UNKNOWN_BOT',
    ja4: null,
    fingerprintId: 'aaaaaaaaaaaaaaaa',
    ...over,
  };
}

describe('windows', () => {
  it('start at the current hour minus N-1 hours', () => {
    expect(windowStart('24h', NOW).toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(windowStart('7d', NOW).toISOString()).toBe('2026-11-16T11:00:00.000Z');
    expect(windowStart('30d', NOW).toISOString()).toBe('2026-10-24T11:00:00.000Z');
    expect(windowStart('24h', new Date('2026-11-23T10:00:00.000Z')).toISOString()).toBe('2026-11-22T11:00:00.000Z');
    expect(windowStart('24h', new Date('2026-11-23T09:59:59.999Z')).toISOString()).toBe('2026-11-22T10:00:00.000Z');
  });

  it('count an event at its ts, or at its receive time when ts is ahead of it', () => {
    const received = new Date('2026-11-23T10:30:00.000Z');
    expect(rollupTime(new Date('2026-11-23T10:34:00.000Z'), received)).toEqual(received);
    expect(rollupTime(new Date('2026-11-20T00:00:00.000Z'), received).toISOString()).toBe('2026-11-20T00:00:00.000Z');
  });

  it('allow ts ahead of the receive time by exactly what ingest accepts', () => {
    expect(MAX_TS_AHEAD_MS).toBe(MAX_FUTURE_MS);
  });
});

describe('valueKey', () => {
  it('is the first 16 bytes of SHA-256 over UTF-8, as a UUID', () => {
    expect(valueKey('abc')).toBe('ba7816bf-8f01-cfea-4141-40de5dae2223');
    expect(valueKey('')).toBe('e3b0c442-98fc-1c14-9afb-f4c8996fb924');
    expect(valueKey('/é')).not.toBe(valueKey('/e'));
  });
});

describe('aggregateBatch', () => {
  it('counts each event in its hour bucket (the window columns are filled where the deltas are added)', () => {
    const d = aggregateBatch([
      event({ ts: new Date('2026-11-22T11:00:00.000Z') }),
      event({ ts: new Date('2026-11-22T11:59:59.999Z') }),
      event({ ts: new Date('2026-10-24T10:59:59.999Z') }),
      // 4 minutes ahead of the receive time: it counts at the receive time.
      event({ ts: new Date('2026-11-23T10:34:00.000Z') }),
    ]);
    const hours = ['2026-10-24T10:00:00.000Z', '2026-11-22T11:00:00.000Z', '2026-11-23T10:00:00.000Z'];
    expect(d.dims.filter((x) => x.dim === 'class').map((x) => [x.hour.toISOString(), x.events])).toEqual([
      [hours[0], 1],
      [hours[1], 2],
      [hours[2], 1],
    ]);
    expect(d.clusters).toEqual(
      [1, 2, 1].map((events, i) => ({
        tenantId: T1,
        clusterKey: clusterKey(NO_JA4, 'UNKNOWN_BOT', NO_ASN),
        fingerprintId: 'aaaaaaaaaaaaaaaa',
        uaClass: 'UNKNOWN_BOT',
        asn: NO_ASN,
        ja4: NO_JA4,
        hour: new Date(hours[i]!),
        events,
      })),
    );
    expect(d.hourly.map((h) => [h.hour.toISOString(), h.events])).toEqual([
      [hours[0], 1],
      [hours[1], 2],
      [hours[2], 1],
    ]);
    expect(d.seen[0]).toMatchObject({ firstSeen: new Date('2026-10-24T10:59:59.999Z'), lastSeen: NOW });
  });

  it('counts every event under class, attribution, path and UA; country and verified UA only when they apply', () => {
    const d = aggregateBatch([
      event({ uaClass: 'KNOWN_LLM_AGENT', uaRaw: 'GPTBot/1.1', country: 'US', asn: 8075 }),
      event({ uaClass: 'VERIFIED_CRAWLER', uaRaw: 'Googlebot/2.1', asn: 15169 }),
      event({ uaClass: 'LIAR', uaRaw: 'GPTBot/1.1' }),
    ]);
    const of = (dim: string) => Object.fromEntries(d.dims.filter((x) => x.dim === dim).map((x) => [x.value, x.events]));
    expect(of('class')).toEqual({ KNOWN_LLM_AGENT: 1, VERIFIED_CRAWLER: 1, LIAR: 1 });
    expect(of('attributed')).toEqual({ yes: 2, no: 1 });
    expect(of('country')).toEqual({ US: 1 });
    expect(of('ua')).toEqual({ 'GPTBot/1.1': 2, 'Googlebot/2.1': 1 });
    expect(of('verified-ua')).toEqual({ 'GPTBot/1.1': 1, 'Googlebot/2.1': 1 });
    expect(of('path')).toEqual({ '/honeypot/topics/a': 3 });
    for (const x of d.dims) expect(x.key).toBe(valueKey(x.value));
  });

  it('keys cluster members by fingerprint, class, AS and JA4, with stand-ins for none', () => {
    const d = aggregateBatch([event({ asn: 3320, ja4: 't13d' }), event({ asn: 3320, ja4: 't13d' }), event({ asn: 3320 }), event({ uaClass: 'LIAR' })]);
    expect(d.clusters.map((c) => [c.uaClass, c.asn, c.ja4, c.events]).sort()).toEqual([
      ['LIAR', NO_ASN, NO_JA4, 1],
      ['UNKNOWN_BOT', 3320, NO_JA4, 1],
      ['UNKNOWN_BOT', 3320, 't13d', 2],
    ]);
    for (const c of d.clusters) expect(c.clusterKey).toBe(clusterKey(c.ja4, c.uaClass, c.asn));
    expect(clusterKey(NO_JA4, 'LIAR', NO_ASN)).toBe(valueKey('|LIAR|-1'));
  });

  it('samples the UA of the latest event, the greatest UA (UTF-8 byte order) on a tie', () => {
    const at = new Date('2026-11-23T10:00:00.000Z');
    const d = aggregateBatch([
      event({ ts: at, uaRaw: 'b' }),
      event({ ts: at, uaRaw: 'é' }),
      event({ ts: at, uaRaw: 'z' }),
      event({ ts: new Date('2026-11-23T09:00:00.000Z'), uaRaw: '~' }),
    ]);
    // 'é' is U+00E9, whose UTF-8 bytes (C3 A9) order after 'z' (7A).
    expect(d.seen[0]).toMatchObject({ uaSample: 'é', lastSeen: at, firstSeen: new Date('2026-11-23T09:00:00.000Z') });
    expect(compareUtf8('\u{1F600}', '\uFFFD')).toBeGreaterThan(0); // unlike UTF-16 code-unit order
  });

  it('returns every list in key order', () => {
    const d = aggregateBatch([
      event({ tenantId: T2, fingerprintId: 'b', path: '/z' }),
      event({ fingerprintId: 'c', path: '/a' }),
      event({ fingerprintId: 'a', path: '/m', ts: new Date('2026-11-23T09:00:00.000Z') }),
      event({ fingerprintId: 'a', path: '/m' }),
    ]);
    const sorted = (keys: string[]) => expect(keys).toEqual([...keys].sort());
    sorted(d.dims.map((x) => `${x.tenantId}|${x.dim}|${x.key}|${x.hour.toISOString()}`));
    sorted(d.clusters.map((x) => `${x.tenantId}|${x.clusterKey}|${x.fingerprintId}|${x.hour.toISOString()}`));
    sorted(d.seen.map((x) => `${x.tenantId}|${x.fingerprintId}`));
    sorted(d.hourly.map((x) => `${x.hour.toISOString()}|${x.tenantId}`));
    expect(d.clusters.map((c) => c.tenantId)).toEqual([T1, T1, T1, T2]);
  });

  it('gives the same totals however a batch is split (the incremental sums are the batch sums)', () => {
    const arbEvent = fc.record({
      tenantId: fc.constantFrom(T1, T2),
      ts: fc.integer({ min: Date.parse('2026-10-20T00:00:00Z'), max: NOW.getTime() + 5 * 60_000 }).map((ms) => new Date(ms)),
      receivedAt: fc.constant(NOW),
      path: fc.constantFrom('/a', '/b', '/q/é', ''),
      uaRaw: fc.constantFrom('ua-1', 'ua-2', 'GPTBot'),
      country: fc.constantFrom(null, 'DE', 'US'),
      asn: fc.constantFrom(null, 3320, 0),
      uaClass: fc.constantFrom('LIAR', 'KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER', 'BROWSER'),
      ja4: fc.constantFrom(null, 't13d', ''),
      fingerprintId: fc.constantFrom('f1', 'f2', 'f3'),
    });
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 40 }), fc.nat(), (events, cut) => {
        const at = events.length === 0 ? 0 : cut % (events.length + 1);
        const whole = aggregateBatch(events);
        const merged = merge(aggregateBatch(events.slice(0, at)), aggregateBatch(events.slice(at)));
        expect(normalise(merged)).toEqual(normalise(whole));
        const total = whole.hourly.reduce((s, h) => s + h.events, 0);
        expect(total).toBe(events.length);
        const classes = whole.dims.filter((d) => d.dim === 'class').reduce((s, d) => s + d.events, 0);
        expect(classes).toBe(events.length);
      }),
    );
  });
});

/** What the upserts do with two batches, done in memory. */
function merge(a: RollupDeltas, b: RollupDeltas): RollupDeltas {
  const sum = <T extends object>(list: T[], id: (x: T) => string, add: (into: T, x: T) => void) => {
    const out = new Map<string, T>();
    for (const x of list) {
      const current = out.get(id(x));
      if (current) add(current, x);
      else out.set(id(x), { ...x });
    }
    return [...out.values()];
  };
  const member = (x: { tenantId: string; fingerprintId: string; uaClass: string; asn: number; ja4: string }) =>
    `${x.tenantId}|${x.fingerprintId}|${x.uaClass}|${x.asn}|${x.ja4}`;
  return {
    hourly: sum([...a.hourly, ...b.hourly], (x) => `${x.hour.getTime()}|${x.tenantId}`, (i, x) => (i.events += x.events)),
    dims: sum([...a.dims, ...b.dims], (x) => `${x.tenantId}|${x.dim}|${x.key}|${x.hour.getTime()}`, (i, x) => (i.events += x.events)),
    clusters: sum([...a.clusters, ...b.clusters], (x) => `${member(x)}|${x.hour.getTime()}`, (i, x) => (i.events += x.events)),
    seen: sum([...a.seen, ...b.seen], member, (i, x) => {
      if (x.firstSeen < i.firstSeen) i.firstSeen = x.firstSeen;
      if (x.lastSeen > i.lastSeen || (x.lastSeen.getTime() === i.lastSeen.getTime() && compareUtf8(x.uaSample, i.uaSample) > 0)) {
        i.lastSeen = x.lastSeen;
        i.uaSample = x.uaSample;
      }
    }),
  };
}

function normalise(d: RollupDeltas) {
  const by = (f: (x: never) => string) => (x: unknown, y: unknown) => (f(x as never) < f(y as never) ? -1 : 1);
  return {
    hourly: [...d.hourly].sort(by((x: { hour: Date; tenantId: string }) => `${x.hour.getTime()}|${x.tenantId}`)),
    dims: [...d.dims].sort(by((x: { tenantId: string; dim: string; key: string; hour: Date }) => `${x.tenantId}|${x.dim}|${x.key}|${x.hour.getTime()}`)),
    clusters: [...d.clusters].sort(
      by((x: { tenantId: string; fingerprintId: string; uaClass: string; asn: number; ja4: string; hour: Date }) => `${x.tenantId}|${x.fingerprintId}|${x.uaClass}|${x.asn}|${x.ja4}|${x.hour.getTime()}`),
    ),
    seen: [...d.seen].sort(by((x: { tenantId: string; fingerprintId: string; uaClass: string; asn: number; ja4: string }) => `${x.tenantId}|${x.fingerprintId}|${x.uaClass}|${x.asn}|${x.ja4}`)),
  };
}
