import { createHash } from 'node:crypto';
import { memoizeByText } from '../../platform/memo.ts';

/**
 * Rollups of honeypot events (docs/honeypot-dashboard.md, "Rollups"). Pure: no I/O, no clock.
 *
 * Ingest turns each stored batch into deltas with `aggregateBatch` and adds them to the rollup
 * tables in the same transaction. The same definitions are written in SQL in
 * dashboard.repository.ts (rebuild and window advance); rollups.test.ts and dashboard.test.ts
 * check that both give the same tables.
 */

export const HOUR_MS = 3_600_000;

/** The dashboard windows and how many hour buckets each spans (the current hour included). */
export const WINDOWS = ['24h', '7d', '30d'] as const;
export type Window = (typeof WINDOWS)[number];
export const WINDOW_HOURS: Record<Window, number> = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 };

/** Start of the oldest hour bucket of each window. */
export type WindowStarts = Record<Window, Date>;

/**
 * How far ahead of its receive time an event's `ts` may be. Equal to ingest's MAX_FUTURE_MS
 * (a test checks); kept here so this module imports nothing from ingest.
 */
export const MAX_TS_AHEAD_MS = 5 * 60 * 1000;

/** The classes counted as "known and verified" (docs/vendors.md). */
export const VERIFIED_CLASSES: readonly string[] = ['KNOWN_LLM_AGENT', 'VERIFIED_CRAWLER'];

/** The dimensions of `honeypot_rollup_dims`. */
export const DIMS = ['class', 'attributed', 'path', 'country', 'ua', 'verified-ua'] as const;
export type Dim = (typeof DIMS)[number];

/** Stand-ins for "none" in rollup keys (primary-key columns cannot be null). */
export const NO_ASN = -1;
export const NO_JA4 = '';

export function hourStart(at: Date): Date {
  return new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
}

/** The first hour bucket of `window` at `now`: the current hour and the N-1 before it. */
export function windowStart(window: Window, now: Date): Date {
  return new Date(hourStart(now).getTime() - (WINDOW_HOURS[window] - 1) * HOUR_MS);
}

export function windowStarts(now: Date): WindowStarts {
  return { '24h': windowStart('24h', now), '7d': windowStart('7d', now), '30d': windowStart('30d', now) };
}

/**
 * The time an event counts at: its `ts`, or its receive time when `ts` is ahead of it (a sender
 * clock up to 5 minutes fast). So no event ever counts in an hour that had not begun when it
 * arrived.
 */
export function rollupTime(ts: Date, receivedAt: Date): Date {
  return ts.getTime() <= receivedAt.getTime() ? ts : receivedAt;
}

/**
 * The key of a dimension value: the first 16 bytes of SHA-256 over its UTF-8 form, written as a
 * UUID. Values can be 2 KB long (paths, user agents), too long for a B-tree key; SQL computes the
 * same with `encode(substring(sha256(convert_to(v, 'UTF8')) from 1 for 16), 'hex')::uuid`.
 */
export const valueKey = memoizeByText(hashKey);

function hashKey(value: string): string {
  const hex = createHash('sha256').update(value, 'utf8').digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** What a rollup needs of a stored event. */
export interface RollupEvent {
  tenantId: string;
  ts: Date;
  receivedAt: Date;
  path: string;
  uaRaw: string;
  country: string | null;
  asn: number | null;
  uaClass: string;
  ja4: string | null;
  fingerprintId: string;
}

/**
 * The key of a cluster (ja4, class, asn) with the stand-ins for none: valueKey of
 * "<ja4>|<class>|<asn>" (a class has no "|" and an AS number is digits, so the text is unambiguous).
 * SQL: the same over `coalesce(ja4, '') || '|' || ua_class || '|' || coalesce(asn, -1)`.
 */
export function clusterKey(ja4: string, uaClass: string, asn: number): string {
  return valueKey(`${ja4}|${uaClass}|${asn}`);
}

/** The (dimension, value) pairs one event counts under. */
export function dimValuesOf(e: RollupEvent): [Dim, string][] {
  const pairs: [Dim, string][] = [
    ['class', e.uaClass],
    ['attributed', e.country !== null || e.asn !== null ? 'yes' : 'no'],
    ['path', e.path],
    ['ua', e.uaRaw],
  ];
  if (e.country !== null) pairs.push(['country', e.country]);
  if (VERIFIED_CLASSES.includes(e.uaClass)) pairs.push(['verified-ua', e.uaRaw]);
  return pairs;
}

/** Events per tenant and hour bucket (all history). */
export interface HourlyDelta {
  hour: Date;
  tenantId: string;
  events: number;
}

/**
 * Events to add per (tenant, dimension, value) and hour bucket. Which window columns they count in
 * is decided where they are added, against the window starts locked there (dashboard.repository).
 */
export interface DimDelta {
  tenantId: string;
  dim: Dim;
  key: string;
  value: string;
  hour: Date;
  events: number;
}

/** The identity of a cluster member: one fingerprint seen with one class, AS and JA4. */
export interface MemberKey {
  tenantId: string;
  fingerprintId: string;
  uaClass: string;
  /** NO_ASN when unknown. */
  asn: number;
  /** NO_JA4 when none. */
  ja4: string;
}

/** Events to add per cluster member and hour bucket. */
export interface ClusterDelta extends MemberKey {
  /** clusterKey(ja4, uaClass, asn). */
  clusterKey: string;
  hour: Date;
  events: number;
}

/** First and last rollup time of a member over all history, and the UA of its latest event. */
export interface SeenDelta extends MemberKey {
  firstSeen: Date;
  lastSeen: Date;
  uaSample: string;
}

export interface RollupDeltas {
  hourly: HourlyDelta[];
  dims: DimDelta[];
  clusters: ClusterDelta[];
  seen: SeenDelta[];
}

/** Orders strings by their UTF-8 bytes, as PostgreSQL's `COLLATE "C"` does. */
export function compareUtf8(a: string, b: string): number {
  return a === b ? 0 : Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** True when (at, ua) is later than (currentAt, currentUa): the sample rule of SeenDelta. */
export function laterSample(at: Date, ua: string, currentAt: Date, currentUa: string): boolean {
  const d = at.getTime() - currentAt.getTime();
  return d > 0 || (d === 0 && compareUtf8(ua, currentUa) > 0);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const memberCmp = (a: MemberKey, b: MemberKey) =>
  cmp(a.tenantId, b.tenantId) || cmp(a.fingerprintId, b.fingerprintId) || cmp(a.uaClass, b.uaClass) || a.asn - b.asn || cmp(a.ja4, b.ja4);

/**
 * Aggregates a batch of stored events into deltas for the rollup tables, per hour bucket (the
 * window columns are filled from the hours where the deltas are added, under the lock that orders
 * them with the window advance). Every list comes out in key order, so concurrent writers touch
 * rollup rows in the same order and cannot deadlock.
 */
export function aggregateBatch(events: readonly RollupEvent[]): RollupDeltas {
  const hourly = new Map<string, HourlyDelta>();
  const dims = new Map<string, DimDelta>();
  const clusters = new Map<string, ClusterDelta>();
  const seen = new Map<string, SeenDelta>();

  for (const e of events) {
    const at = rollupTime(e.ts, e.receivedAt);
    const hour = hourStart(at);
    const hourKey = `${hour.getTime()}|${e.tenantId}`;
    const h = hourly.get(hourKey);
    if (h) h.events += 1;
    else hourly.set(hourKey, { hour, tenantId: e.tenantId, events: 1 });

    const member: MemberKey = {
      tenantId: e.tenantId,
      fingerprintId: e.fingerprintId,
      uaClass: e.uaClass,
      asn: e.asn ?? NO_ASN,
      ja4: e.ja4 ?? NO_JA4,
    };
    const memberId = `${member.tenantId}|${member.fingerprintId}|${member.uaClass}|${member.asn}|${member.ja4}`;
    const s = seen.get(memberId);
    if (!s) seen.set(memberId, { ...member, firstSeen: at, lastSeen: at, uaSample: e.uaRaw });
    else {
      if (at < s.firstSeen) s.firstSeen = at;
      if (laterSample(at, e.uaRaw, s.lastSeen, s.uaSample)) {
        s.lastSeen = at;
        s.uaSample = e.uaRaw;
      }
    }

    const c = clusters.get(`${memberId}|${hourKey}`);
    if (c) c.events += 1;
    else clusters.set(`${memberId}|${hourKey}`, { ...member, clusterKey: clusterKey(member.ja4, member.uaClass, member.asn), hour, events: 1 });

    for (const [dim, value] of dimValuesOf(e)) {
      const id = `${e.tenantId}|${dim}|${value}|${hour.getTime()}`;
      const d = dims.get(id);
      if (d) d.events += 1;
      else dims.set(id, { tenantId: e.tenantId, dim, key: valueKey(value), value, hour, events: 1 });
    }
  }

  const byHour = (a: { hour: Date }, b: { hour: Date }) => a.hour.getTime() - b.hour.getTime();
  return {
    hourly: [...hourly.values()].sort((a, b) => byHour(a, b) || cmp(a.tenantId, b.tenantId)),
    dims: [...dims.values()].sort((a, b) => cmp(a.tenantId, b.tenantId) || cmp(a.dim, b.dim) || cmp(a.key, b.key) || byHour(a, b)),
    clusters: [...clusters.values()].sort((a, b) => cmp(a.tenantId, b.tenantId) || cmp(a.clusterKey, b.clusterKey) || memberCmp(a, b) || byHour(a, b)),
    seen: [...seen.values()].sort(memberCmp),
  };
}
