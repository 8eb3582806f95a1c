import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { assertThat, badRequest, notFound } from '../../../platform/errors.ts';
import { fingerprintOf, normaliseJa4 } from '../enrichment/fingerprint.ts';
import { ja4Drift, uaJa4Consistency } from '../enrichment/ja4.ts';
import * as repo from './repository.ts';
import { isVerifiedClass } from '../ingest/tarpit.ts';
import type { TenantService } from '../tenants/service.ts';
import { reclassify } from '../vendors/classify.ts';
import { proofSourcesOf, type RegistryHolder, type VendorRegistry } from '../vendors/registry.ts';
import { rdnsFactFrom } from '../vendors/reverse-dns.ts';

/**
 * The honeypot reads (docs/honeypot/reads.md): recent events, single-fingerprint investigation,
 * replay, lure and bait-sitemap statistics, tarpits and the ingest SLO. Rules only; the SQL is in
 * repository.ts.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Ingest SLO windows (spec C). */
export const SLO_WINDOWS = { '1h': HOUR_MS, '24h': DAY_MS, '7d': 7 * DAY_MS } as const;
export type SloWindow = keyof typeof SLO_WINDOWS;

/** Sample outcomes counted as signature failures by the ingest SLO. `unknown-tenant` is not one. */
export const SIGNATURE_FAILURE_OUTCOMES = ['bad-signature', 'stale-signature'] as const;

/** The three generated bait roots of the sitemap statistics (spec B). */
export const SITEMAP_ROOTS = ['/honeypot/topics/', '/q/', '/agents/'] as const;

/** How many events investigate returns, and how many distinct paths it lists. */
export const INVESTIGATE_EVENTS = 50;
export const INVESTIGATE_PATHS = 50;
/** How many ended tarpits are listed after the ones in force. */
export const TARPIT_HISTORY = 100;

// ---------------------------------------------------------------------------------------------
// Lure catalogue

export const LureFamilyDefinition = Type.Object({
  id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  kind: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,63}$' }),
  intent: Type.String({ minLength: 1, maxLength: 1000 }),
  /** A PostgreSQL LIKE pattern over the request path; starts with `/`, no escape character. */
  pathLike: Type.String({ pattern: '^/[^\\\\]*$', maxLength: 256 }),
});
export type LureFamilyDefinition = Static<typeof LureFamilyDefinition>;

const LureCatalogueFile = Type.Object({
  matching: Type.Optional(Type.String()),
  families: Type.Array(LureFamilyDefinition, { minItems: 1 }),
});

export const SHIPPED_LURES_FILE = fileURLToPath(new URL('./lures.json', import.meta.url));

/** Reads and checks a lure catalogue: valid shape, unique ids, unique patterns. Throws naming the problem. */
export function loadLureCatalogue(file: string = SHIPPED_LURES_FILE): LureFamilyDefinition[] {
  const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!Value.Check(LureCatalogueFile, json)) {
    const first = Value.Errors(LureCatalogueFile, json).First();
    throw new Error(`Lure catalogue ${file}: ${first?.path ?? '(root)'} ${first?.message ?? 'is invalid'}`);
  }
  const ids = new Set<string>();
  const patterns = new Set<string>();
  for (const family of json.families) {
    if (ids.has(family.id)) throw new Error(`Lure catalogue ${file}: family id ${family.id} appears twice`);
    if (patterns.has(family.pathLike)) throw new Error(`Lure catalogue ${file}: pathLike ${family.pathLike} appears twice`);
    ids.add(family.id);
    patterns.add(family.pathLike);
  }
  return json.families;
}

/** The LIKE rule in JavaScript (`%` any run, `_` one character, case-sensitive); for tests and docs. */
export function likeMatches(pattern: string, text: string): boolean {
  const source = [...pattern].map((c) => (c === '%' ? '[\\s\\S]*' : c === '_' ? '[\\s\\S]' : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`, 'u').test(text);
}

/** The family an event path belongs to under the first-match rule, or null. */
export function lureFamilyOf(catalogue: readonly LureFamilyDefinition[], path: string): LureFamilyDefinition | null {
  return catalogue.find((f) => likeMatches(f.pathLike, path)) ?? null;
}

// ---------------------------------------------------------------------------------------------
// Views

export interface EventView {
  id: string;
  tenant: string;
  senderId: string | null;
  ts: string;
  receivedAt: string;
  method: string;
  path: string;
  query: string | null;
  uaRaw: string;
  uaClass: string;
  vendorId: string | null;
  proof: string | null;
  fingerprintId: string;
  ja4: string | null;
  asn: number | null;
  country: string | null;
  referer: string | null;
  ipHash: string;
}

export function toEventView(e: repo.StoredEvent): EventView {
  return {
    id: e.id,
    tenant: e.tenant,
    senderId: e.senderId,
    ts: e.ts.toISOString(),
    receivedAt: e.receivedAt.toISOString(),
    method: e.method,
    path: e.path,
    query: e.query,
    uaRaw: e.uaRaw,
    uaClass: e.uaClass,
    vendorId: e.vendorId,
    proof: e.proof,
    fingerprintId: e.fingerprintId,
    ja4: e.ja4,
    asn: e.asn,
    country: e.country,
    referer: e.referer,
    ipHash: e.ipHash,
  };
}

export interface TarpitRowView {
  active: boolean;
  fingerprintId: string;
  tenant: string;
  triggeredAt: string;
  expiresAt: string;
  delayMs: number;
  reason: string;
  liarEventCount: number;
}

const toTarpitView = (t: repo.TarpitView): TarpitRowView => ({
  ...t,
  triggeredAt: t.triggeredAt.toISOString(),
  expiresAt: t.expiresAt.toISOString(),
});

export interface ReplayDifference {
  field: string;
  stored: string | null;
  replayed: string | null;
}

/** The fields replay re-derives, in this order. */
export const REPLAYED_FIELDS = ['fingerprintId', 'uaClass', 'vendorId', 'proof'] as const;

/** Percentages with two decimals; null when nothing was counted (0/0 is no rate). */
const pct = (part: number, whole: number): number | null => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 100);
/** Latencies are stored as float4; three decimals (microseconds) is all they carry meaningfully. */
const ms = (value: number | null): number | null => (value === null ? null : Math.round(value * 1000) / 1000);

/** Why the verdict of one event is what it is, read from its stored evidence. */
export function explainVerdict(registry: VendorRegistry, e: Pick<repo.StoredEvent, 'uaClass' | 'vendorId' | 'proof' | 'evidence'>) {
  const ev = e.evidence;
  const claimed = Array.isArray(ev.claimed) ? ev.claimed.filter((c): c is string => typeof c === 'string') : [];
  const verified = isVerifiedClass(e.uaClass);
  const vendor = e.vendorId === null ? undefined : registry.byId.get(e.vendorId);
  const failed: string[] = [];
  if (!verified && e.vendorId !== null) {
    if (ev.ipValid === false) failed.push('ip-range: the client IP did not parse, so no published range could hold it');
    else if (ev.ipInRange === false) failed.push(`ip-range: the client IP is outside every range ${e.vendorId} publishes`);
    if (ev.signature === 'invalid') {
      failed.push(`web-bot-auth: the signature did not verify${typeof ev.signatureError === 'string' ? ` (${ev.signatureError})` : ''}`);
    } else if (ev.signature === 'valid' && typeof ev.keyid === 'string') {
      failed.push(`web-bot-auth: the signature verified with key ${ev.keyid}, which is not one of ${e.vendorId}'s keys`);
    } else if (ev.signature === 'absent' && vendor !== undefined && vendor.keys.size > 0) {
      failed.push(`web-bot-auth: no signature, though ${e.vendorId} publishes keys`);
    }
    const rdns = rdnsFactFrom(ev.rdns);
    if (rdns?.status === 'answered' && vendor !== undefined && vendor.reverseDns.length > 0) {
      const named = rdns.ptr.length === 0 ? 'has no reverse DNS name' : `is named ${rdns.ptr.join(', ')}`;
      failed.push(`fcrdns: the client IP ${named}, and no name under ${vendor.reverseDns.join(' or ')} resolves back to it`);
    }
  }
  const reason = typeof ev.unverifiedReason === 'string' ? ev.unverifiedReason : null;
  const proofSources = Array.isArray(ev.proofSources) ? ev.proofSources.filter((p): p is string => typeof p === 'string') : vendor ? proofSourcesOf(vendor) : [];
  let summary: string;
  if (verified) summary = `verified as ${e.vendorId} by ${e.proof}`;
  else if (e.uaClass === 'LIAR') summary = `claims ${e.vendorId}, and every proof ${e.vendorId} publishes failed`;
  else if (e.uaClass === 'UNVERIFIED_AGENT') summary = `claims ${e.vendorId}; ${UNVERIFIED_WHY[reason ?? ''] ?? 'no proof it publishes was checked'}: neither confirmed nor refuted`;
  else summary = `names no registry vendor (rule ${typeof ev.rule === 'string' ? ev.rule : 'unknown'})`;
  return {
    uaClass: e.uaClass,
    vendorId: e.vendorId,
    vendorName: vendor?.name ?? null,
    proof: e.proof,
    verified,
    claimed,
    proofSources,
    unverifiedReason: e.uaClass === 'UNVERIFIED_AGENT' ? reason : null,
    failed,
    summary,
  };
}

const UNVERIFIED_WHY: Record<string, string> = {
  'no-proof-source': 'it publishes no proof source at all (no IP ranges, no Web Bot Auth keys, no reverse DNS domain)',
  'lookup-pending': 'its only proof is reverse DNS, and the lookup had not answered (the event is judged again when it does)',
  'lookup-failed': 'its only proof is reverse DNS, and the lookup failed or was not made',
  'not-compared': 'the client IP was never compared with its proofs (it was named after this event was stored)',
};

// ---------------------------------------------------------------------------------------------
// Service

export interface ReadDeps {
  db: Db;
  clock: Clock;
  /** Resolves the tenant a read names (404 for an unknown one), or lists every tenant. */
  tenants: Pick<TenantService, 'requireBySlug' | 'refs'>;
  /** The vendor registry in force (swapped by the range refresh job); replay reads `current`. */
  registry: RegistryHolder;
  lures?: LureFamilyDefinition[];
  /** Writes this instance's buffered ingest samples, so the SLO read counts every request answered. */
  flushSamples?: () => Promise<void>;
  /** Adds pending events to the fingerprint counters, so investigate counts every acknowledged event. */
  applyPending?: () => Promise<void>;
}

export function createReadService(deps: ReadDeps) {
  const { db, clock, registry } = deps;
  const catalogue = deps.lures ?? loadLureCatalogue();

  /** The tenants a read covers: the one named (404 when unknown) or all of them. */
  async function tenantsOf(slug: string | undefined): Promise<{ tenant: string | null; ids: string[] }> {
    if (slug === undefined) return { tenant: null, ids: (await deps.tenants.refs()).map((t) => t.id) };
    const found = await deps.tenants.requireBySlug(slug);
    return { tenant: found.slug, ids: [found.id] };
  }

  async function recent(query: { tenant?: string; limit: number }) {
    const { tenant, ids } = await tenantsOf(query.tenant);
    const events = ids.length === 0 ? [] : await repo.recentEvents(db, ids, query.limit);
    return { tenant, events: events.map(toEventView) };
  }

  async function investigate(query: { tenant?: string; fingerprintId: string }) {
    const { tenant, ids } = await tenantsOf(query.tenant);
    const { fingerprintId } = query;
    await deps.applyPending?.();
    const rows = ids.length === 0 ? [] : await repo.fingerprintRows(db, ids, fingerprintId);
    const empty = {
      tenant,
      fingerprintId,
      found: false,
      fingerprint: null,
      events: [],
      countriesSeen: [],
      pathsSeen: [],
      uaClassesSeen: [],
      ja4Drift: null,
      uaJa4Consistency: null,
      verifiedVendorVerdict: null,
      tarpit: null,
    };
    if (rows.length === 0) return empty;

    // Rows come newest last-seen first: the first one speaks for the latest UA, class and ASN.
    const latest = rows[0]!;
    const fingerprint = {
      fingerprintId,
      tenants: [...new Set(rows.map((r) => r.tenant))].sort(),
      firstSeen: new Date(Math.min(...rows.map((r) => r.firstSeen.getTime()))).toISOString(),
      lastSeen: latest.lastSeen.toISOString(),
      eventCount: rows.reduce((n, r) => n + r.eventCount, 0),
      liarCount: rows.reduce((n, r) => n + r.liarCount, 0),
      ja4: latest.ja4,
      uaNormalized: latest.uaNormalized,
      uaSample: latest.uaSample,
      lastUaClass: latest.lastUaClass,
      asn: latest.asn ?? rows.find((r) => r.asn !== null)?.asn ?? null,
    };
    const [events, countries, paths, classes, siblings, tarpits] = await Promise.all([
      repo.fingerprintEvents(db, ids, fingerprintId, INVESTIGATE_EVENTS),
      repo.fingerprintValueCounts(db, ids, fingerprintId, 'country', 300),
      repo.fingerprintValueCounts(db, ids, fingerprintId, 'path', INVESTIGATE_PATHS),
      repo.fingerprintValueCounts(db, ids, fingerprintId, 'ua_class', 20),
      repo.fingerprintsWithUa(db, ids, latest.uaNormalized),
      repo.activeTarpits(db, ids, clock.now(), fingerprintId),
    ]);

    // JA4 drift: every fingerprint of the covered tenants with the same normalised UA.
    const perFingerprint = new Map<string, { fingerprintId: string; ja4: string | null; eventCount: number }>();
    for (const s of siblings) {
      const entry = perFingerprint.get(s.fingerprintId) ?? { fingerprintId: s.fingerprintId, ja4: normaliseJa4(s.ja4), eventCount: 0 };
      entry.eventCount += s.eventCount;
      perFingerprint.set(s.fingerprintId, entry);
    }
    const [drift] = ja4Drift(siblings.map((s) => ({ uaNormalized: s.uaNormalized, ja4: s.ja4, count: s.eventCount })));
    const ownJa4 = normaliseJa4(latest.ja4);
    const ja4s = drift?.ja4s ?? [...new Set([...perFingerprint.values()].map((f) => f.ja4).filter((j): j is string => j !== null))].sort();

    const newest = events[0];
    return {
      tenant,
      fingerprintId,
      found: true,
      fingerprint,
      events: events.map(toEventView),
      countriesSeen: countries.map((c) => ({ countryCode: c.value, count: c.count })),
      pathsSeen: paths.map((p) => ({ path: p.value, count: p.count })),
      uaClassesSeen: classes.map((c) => ({ uaClass: c.value, count: c.count })),
      ja4Drift: {
        uaNormalized: latest.uaNormalized,
        drifting: drift !== undefined,
        ja4s,
        otherJa4s: ja4s.filter((j) => j !== ownJa4),
        eventsWithJa4: drift?.count ?? [...perFingerprint.values()].filter((f) => f.ja4 !== null).reduce((n, f) => n + f.eventCount, 0),
        fingerprints: [...perFingerprint.values()].sort((a, b) => b.eventCount - a.eventCount || (a.fingerprintId < b.fingerprintId ? -1 : 1)),
      },
      uaJa4Consistency: uaJa4Consistency(newest?.uaRaw ?? latest.uaSample, newest ? newest.ja4 : latest.ja4),
      verifiedVendorVerdict: newest ? { eventId: newest.id, ts: newest.ts.toISOString(), ...explainVerdict(registry.current, newest) } : null,
      tarpit: tarpits[0] ? toTarpitView(tarpits[0]) : null,
    };
  }

  /**
   * Re-derives the verdict (reclassify, current registry) and fingerprintId (fingerprintOf) of a
   * stored event, keyed as its schema version was: from version 2 on with the source part (the
   * replayed verdict, the stored AS number and IP hash), version 1 by JA4 and UA alone.
   */
  function replayOf(e: repo.StoredEvent) {
    const verdict = reclassify(registry.current, { ua: e.uaRaw, headers: e.headers, evidence: e.evidence });
    const source = { verifiedVendorId: isVerifiedClass(verdict.uaClass) ? verdict.vendorId : null, asn: e.asn, ipHash: e.ipHash };
    const { fingerprintId } = fingerprintOf({ ja4: e.ja4, ua: e.uaRaw, ...(e.schemaVersion >= 2 ? { source } : {}) });
    const replayed: Record<(typeof REPLAYED_FIELDS)[number], string | null> = {
      fingerprintId,
      uaClass: verdict.uaClass,
      vendorId: verdict.vendorId,
      proof: verdict.proof,
    };
    const fields: ReplayDifference[] = REPLAYED_FIELDS.filter((f) => e[f] !== replayed[f]).map((f) => ({ field: f, stored: e[f], replayed: replayed[f] }));
    return { fields, matches: fields.length === 0 };
  }

  async function replay(query: { eventId?: string; list?: '0' | '1'; limit: number; tenant?: string }) {
    const listing = query.list === '1' || query.eventId === undefined;
    if (query.list === '1' && query.eventId !== undefined) {
      throw badRequest('invalid-query', 'Give eventId to replay one event, or list=1 to list envelopes, not both.', { field: 'query.list' });
    }
    const compared = [...REPLAYED_FIELDS];
    if (listing) {
      const { tenant, ids } = await tenantsOf(query.tenant);
      const envelopes = ids.length === 0 ? [] : await repo.recentEnvelopes(db, ids, query.limit);
      return {
        mode: 'list' as const,
        tenant,
        eventId: null,
        matches: null,
        compared,
        fields: [],
        envelope: null,
        envelopes: envelopes.map((e) => ({
          eventId: e.id,
          schemaVersion: e.schemaVersion,
          receivedAt: e.receivedAt.toISOString(),
          sourceTenant: e.tenant,
          bodyBytes: e.bodyBytes,
        })),
      };
    }
    const eventId = query.eventId as string;
    const tenant = query.tenant === undefined ? null : (await tenantsOf(query.tenant)).tenant;
    const stored = await repo.eventById(db, eventId);
    const event = stored !== null && (tenant === null || stored.tenant === tenant) ? stored : null;
    assertThat(event, notFound(`There is no stored event ${eventId}${tenant ? ` in tenant ${tenant}` : ''}.`));
    const { fields, matches } = replayOf(event);
    return {
      mode: 'event' as const,
      tenant: event.tenant,
      eventId: event.id,
      matches,
      compared,
      fields,
      envelope: {
        schemaVersion: event.schemaVersion,
        receivedAt: event.receivedAt.toISOString(),
        sourceTenant: event.tenant,
        bodyBytes: event.bodyBytes,
      },
      envelopes: null,
    };
  }

  async function lures(query: { tenant?: string }) {
    const { tenant, ids } = await tenantsOf(query.tenant);
    const now = clock.now();
    const since24h = new Date(now.getTime() - DAY_MS);
    const since7d = new Date(now.getTime() - 7 * DAY_MS);
    const patterns = catalogue.map((f) => f.pathLike);
    const [counts, classes] =
      ids.length === 0
        ? [[], []]
        : await Promise.all([repo.lureCounts(db, ids, patterns, since24h, since7d), repo.lureClassCounts(db, ids, patterns, since7d)]);
    const byFamily = new Map(counts.map((c) => [c.family, c]));
    const topClass = new Map<number, { uaClass: string; count: number }>();
    for (const c of classes) {
      const best = topClass.get(c.family);
      if (!best || c.count > best.count || (c.count === best.count && c.uaClass < best.uaClass)) topClass.set(c.family, c);
    }
    const families = catalogue.map((f, i) => {
      const c = byFamily.get(i);
      return {
        id: f.id,
        title: f.title,
        kind: f.kind,
        intent: f.intent,
        pathLike: f.pathLike,
        hits24h: c?.hits24h ?? 0,
        hits7d: c?.hits7d ?? 0,
        uniqueIpHashes24h: c?.uniqueIpHashes24h ?? 0,
        uniqueFingerprints24h: c?.uniqueFingerprints24h ?? 0,
        topUaClass: topClass.get(i)?.uaClass ?? null,
        lastHitAt: c?.lastHitAt?.toISOString() ?? null,
      };
    });
    return {
      tenant,
      totals: {
        families: families.length,
        hits24h: families.reduce((n, f) => n + f.hits24h, 0),
        hits7d: families.reduce((n, f) => n + f.hits7d, 0),
      },
      families,
    };
  }

  async function sitemap(query: { tenant?: string }) {
    const { tenant, ids } = await tenantsOf(query.tenant);
    const now = clock.now();
    const since24h = new Date(now.getTime() - DAY_MS);
    const since7d = new Date(now.getTime() - 7 * DAY_MS);
    const [paths, ips] =
      ids.length === 0
        ? [[], new Map<string, number>()]
        : await Promise.all([
            repo.generatedPathCounts(db, ids, SITEMAP_ROOTS, since24h, since7d),
            repo.generatedUniqueIps(db, ids, SITEMAP_ROOTS, since24h),
          ]);
    const buckets = SITEMAP_ROOTS.map((rootPath) => {
      const mine = paths.filter((p) => p.root === rootPath);
      let top: repo.GeneratedPathCount | null = null;
      for (const p of mine) if (!top || p.hits7d > top.hits7d || (p.hits7d === top.hits7d && p.path < top.path)) top = p;
      return {
        rootPath,
        hits24h: mine.reduce((n, p) => n + p.hits24h, 0),
        hits7d: mine.reduce((n, p) => n + p.hits7d, 0),
        uniqueIpHashes24h: ips.get(rootPath) ?? 0,
        topPath: top?.path ?? null,
        topPathCount: top?.hits7d ?? 0,
      };
    });
    return {
      tenant,
      buckets,
      uniqueGeneratedUrlsSeen7d: paths.length,
      totalGeneratedHits7d: buckets.reduce((n, b) => n + b.hits7d, 0),
    };
  }

  async function tarpits(query: { tenant?: string }) {
    const { tenant, ids } = await tenantsOf(query.tenant);
    if (ids.length === 0) return { tenant, rows: [] };
    const now = clock.now();
    const [active, past] = await Promise.all([repo.activeTarpits(db, ids, now), repo.pastTarpits(db, ids, now, TARPIT_HISTORY)]);
    return { tenant, rows: [...active, ...past].map(toTarpitView) };
  }

  async function opsIngest(query: { window: SloWindow }) {
    const window = query.window;
    const now = clock.now();
    const from = new Date(now.getTime() - SLO_WINDOWS[window]);
    await deps.flushSamples?.();
    const [summary, outcomes, perTenant] = await Promise.all([
      repo.sampleSummary(db, from, now, SIGNATURE_FAILURE_OUTCOMES),
      repo.sampleCountsBy(db, 'outcome', from, now),
      repo.sampleCountsBy(db, 'tenant_slug', from, now),
    ]);
    return {
      window,
      windowStartIso: from.toISOString(),
      totalSamples: summary.totalSamples,
      okCount: summary.okCount,
      okRatePct: pct(summary.okCount, summary.totalSamples),
      signatureFailureCount: summary.signatureFailureCount,
      signatureFailureRatePct: pct(summary.signatureFailureCount, summary.totalSamples),
      p50Ms: ms(summary.p50Ms),
      p95Ms: ms(summary.p95Ms),
      p99Ms: ms(summary.p99Ms),
      outcomeBreakdown: outcomes.map((o) => ({ outcome: o.value ?? '', count: o.count })),
      perTenantCount: perTenant.map((t) => ({ tenant: t.value, count: t.count })),
    };
  }

  return { recent, investigate, replay, lures, sitemap, tarpits, opsIngest, catalogue: () => catalogue };
}

export type ReadService = ReturnType<typeof createReadService>;
