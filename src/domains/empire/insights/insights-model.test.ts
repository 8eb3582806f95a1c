import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../../../platform/crypto.ts';
import { dashboardKpis, denseHours, hourWindow, overviewRow, trendOf } from './dashboard.ts';
import { type EmpireEvent, SIGNED_MEMBER, signedBytesOf, signedMembersOf } from '../ingest/service.ts';
import type { StoredEmpireEvent } from './repository.ts';
import { rebuildSignedBytes } from './replay.ts';
import { SLO_BADGE_THRESHOLDS, sloBadge } from './slo.ts';

describe('hour windows', () => {
  it('end with the current UTC hour, whatever the minute', () => {
    expect(hourWindow(new Date('2026-11-24T12:59:59.999Z'), 24)).toEqual({ from: new Date('2026-11-23T13:00:00.000Z'), to: new Date('2026-11-24T13:00:00.000Z') });
    expect(hourWindow(new Date('2026-11-24T12:00:00.000Z'), 1)).toEqual({ from: new Date('2026-11-24T12:00:00.000Z'), to: new Date('2026-11-24T13:00:00.000Z') });
  });

  it('fill the hours without events with zeros and drop indexes outside', () => {
    expect(denseHours(4, [{ hour: 1, count: 3 }, { hour: 3, count: 1 }, { hour: 4, count: 9 }, { hour: -1, count: 9 }])).toEqual([0, 3, 0, 1]);
  });
});

describe('dashboard KPIs', () => {
  it('give null shares, not NaN, for a window without events', () => {
    const kpis = dashboardKpis({ hours: [], eventTypes: [], tenants: [], total: { count: 0, signed: 0, linked: 0 } }, new Array(24).fill(0));
    expect(Object.fromEntries(kpis.map((k) => [k.id, k.value]))).toEqual({
      events: 0,
      'events-per-hour': 0,
      'peak-hour': 0,
      'active-hours': 0,
      tenants: 0,
      'event-types': 0,
      'signed-pct': null,
      'linked-pct': null,
    });
  });

  it('do not count the events without a tenant as a tenant', () => {
    const kpis = dashboardKpis(
      { hours: [], eventTypes: [{ eventType: 'a', count: 3 }], tenants: [{ tenant: null, count: 1 }, { tenant: 'x', count: 2 }], total: { count: 3, signed: 1, linked: 0 } },
      [3],
    );
    expect(kpis.find((k) => k.id === 'tenants')!.value).toBe(1);
    expect(kpis.find((k) => k.id === 'signed-pct')!.value).toBe(33.3);
  });
});

describe('overview trend', () => {
  it('compares the last day\'s hourly rate with the 7-day one at 1.5× and 2/3', () => {
    // 7-day mean 1/h: 24 in a day is usual, 37 busier (above 36), 15 quieter (below 16).
    expect(trendOf(24, 168)).toBe('usual');
    expect(trendOf(36, 168)).toBe('usual');
    expect(trendOf(37, 168)).toBe('busier');
    expect(trendOf(16, 168)).toBe('usual');
    expect(trendOf(15, 168)).toBe('quieter');
    expect(trendOf(0, 0)).toBeNull();
    // Nothing before the last day: no baseline, so neither busier nor quieter.
    expect(trendOf(5, 5)).toBe('new');
    expect(overviewRow('lab', [...new Array(167).fill(0), 5], null).blurb).toBe('5 events in the last 24 hours, none in the 6 days before; no events yet.');
  });

  it('takes the sparkline from the last 24 of 168 hours', () => {
    const hours = Array.from({ length: 168 }, (_, i) => (i >= 144 ? 2 : 1));
    const row = overviewRow('lab', hours, null);
    expect(row).toMatchObject({ events24h: 48, events7d: 192, lastEventAt: null, sparkline24h: new Array(24).fill(2) });
    expect(row.blurb).toBe('48 events in the last 24 hours, busier than its 7-day average; no events yet.');
  });
});

describe('SLO badge', () => {
  const { minSamples, green, yellow } = SLO_BADGE_THRESHOLDS;
  it('is unknown under the minimum sample count', () => {
    expect(sloBadge({ totalSamples: minSamples - 1, okRatePct: 100, p95Ms: 1 })).toBe('unknown');
    expect(sloBadge({ totalSamples: 0, okRatePct: null, p95Ms: null })).toBe('unknown');
  });
  it('is green, yellow or red at the documented bounds, both the rate and p95 counting', () => {
    expect(sloBadge({ totalSamples: minSamples, okRatePct: green.okRatePct, p95Ms: green.p95Ms })).toBe('green');
    expect(sloBadge({ totalSamples: 100, okRatePct: green.okRatePct - 0.01, p95Ms: 1 })).toBe('yellow');
    expect(sloBadge({ totalSamples: 100, okRatePct: 100, p95Ms: green.p95Ms + 1 })).toBe('yellow');
    expect(sloBadge({ totalSamples: 100, okRatePct: yellow.okRatePct, p95Ms: yellow.p95Ms })).toBe('yellow');
    expect(sloBadge({ totalSamples: 100, okRatePct: yellow.okRatePct - 0.01, p95Ms: 1 })).toBe('red');
    expect(sloBadge({ totalSamples: 100, okRatePct: 100, p95Ms: yellow.p95Ms + 1 })).toBe('red');
  });
});

describe('rebuilding the signed bytes of a stored event', () => {
  const stored = (event: EmpireEvent, signedMembers: number | null): StoredEmpireEvent => {
    const ts = new Date(event.ts ?? '2026-11-24T12:00:00.000Z');
    return {
      eventId: '7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d01',
      toolset: 'lab',
      senderId: event.id,
      eventType: event.eventType,
      ts,
      tsSent: event.ts !== undefined && event.ts !== ts.toISOString() ? event.ts : null,
      tenant: event.tenant ?? null,
      causedBy: event.causedBy ?? null,
      payload: event.payload ?? {},
      eventHash: sha256Hex(signedBytesOf('lab', event)),
      keyId: null,
      compatMode: true,
      schemaVersion: 1,
      receivedAt: ts,
      bodyBytes: signedBytesOf('lab', event).length,
      signedMembers,
      attestationId: null,
    };
  };
  const shapes: EmpireEvent[] = [
    { id: 'a', eventType: 'x' },
    { id: 'b', eventType: 'x', ts: '2026-11-24T12:00:00+01:00', causedBy: null },
    { id: 'c', eventType: 'x', payload: {}, tenant: 't' },
    { id: 'd', eventType: 'x', ts: '2026-11-24T11:00:00.000Z', causedBy: 'a', payload: { n: [1, 2] } },
  ];

  it('gives back exactly the bytes the sender signed, from the recorded members', () => {
    for (const event of shapes) expect(rebuildSignedBytes(stored(event, signedMembersOf(event))).equals(signedBytesOf('lab', event))).toBe(true);
    expect(signedMembersOf(shapes[3]!)).toBe(SIGNED_MEMBER.ts | SIGNED_MEMBER.causedBy | SIGNED_MEMBER.payload);
  });

  it('finds the shape by the stored hash when the members were not recorded', () => {
    for (const event of shapes) expect(rebuildSignedBytes(stored(event, null)).equals(signedBytesOf('lab', event))).toBe(true);
  });
});
