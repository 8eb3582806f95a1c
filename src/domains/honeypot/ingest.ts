import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { badRequest, ServiceError } from '../../platform/errors.ts';
import { Nullable } from '../../platform/http/registry.ts';
import { recordRollups } from './dashboard.ts';
import * as repo from './repository.ts';
import { checkSignature, parseSignatureHeader } from './signature.ts';
import { decideTarpit, TARPIT_DELAY_MS, TARPIT_WINDOW_MS } from './tarpit.ts';
import { verifyingSecrets } from './tenants.ts';

export const MAX_EVENTS_PER_REQUEST = 500;
export const MAX_PAST_MS = 30 * 24 * 60 * 60 * 1000;
export const MAX_FUTURE_MS = 5 * 60 * 1000;
export const REPLAY_SCHEMA_VERSION = 1;

export const IngestEvent = Type.Object({
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'The sender\'s id; sent again for the same tenant it counts as a duplicate.' })),
  ts: Type.Optional(Type.String({ format: 'date-time', description: 'Default: the receive time. At most 30 days in the past and 5 minutes in the future.' })),
  method: Type.Optional(Type.String({ pattern: '^[A-Za-z]{1,16}$', default: 'GET' })),
  path: Type.String({ minLength: 1, maxLength: 2048 }),
  query: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
  ua: Type.Optional(Type.String({ maxLength: 2048, description: 'Raw User-Agent; may be empty.' })),
  ip: Type.String({ minLength: 2, maxLength: 64, description: 'IPv4 or IPv6 text; only a keyed hash is stored.' }),
  ja4: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
  asn: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 }))),
  country: Type.Optional(Nullable(Type.String({ pattern: '^[A-Z]{2}$' }))),
  referer: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
  headers: Type.Optional(
    Type.Record(Type.String({ pattern: '^[a-z0-9-]{1,64}$' }), Type.String({ maxLength: 8192 }), { maxProperties: 64 }),
  ),
});
export type IngestEvent = Static<typeof IngestEvent>;

export const IngestBody = Type.Object({
  events: Type.Array(IngestEvent, { minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST }),
});
export type IngestBody = Static<typeof IngestBody>;
const checkIngestBody = TypeCompiler.Compile(IngestBody);

/** What the vendor registry says of one request (see docs/vendors.md). */
/**
 * Parses and validates a raw ingest body exactly as the HTTP route does (same schema), for
 * callers that hold the raw bytes: the test event. Throws 400 malformed-json or invalid-body.
 */
export function parseIngestBody(rawBody: string): IngestBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw badRequest('malformed-json', 'The request body is not valid JSON.');
  }
  if (!checkIngestBody.Check(parsed)) {
    const first = checkIngestBody.Errors(parsed).First();
    const field = `body${(first?.path ?? '').replace(/\/(\d+)(?=\/|$)/g, '[$1]').replaceAll('/', '.')}`;
    throw badRequest('invalid-body', `${field} ${first?.message ?? 'is invalid'}.`, { field });
  }
  return parsed;
}

/** What the vendor registry says of one request (see docs/vendors.md). */
export interface Verdict {
  uaClass: string;
  vendorId: string | null;
  proof: string | null;
  evidence: Record<string, unknown>;
}

/** The ports ingest needs; app.ts fills them with the vendor registry and the GeoIP data. */
export interface Classifier {
  classify(input: { ua: string; ip: string; headers: Record<string, string>; method: string; path: string; now: Date }): Promise<Verdict>;
}
export interface GeoLookup {
  lookup(ip: string): { country: string | null; asn: number | null };
}
export interface Fingerprinter {
  fingerprintOf(input: { ja4: string | null; ua: string }): { fingerprintId: string; uaNormalized: string };
  /** Keyed hash of the normalised IP, so every spelling of one address hashes alike. */
  hashIp(key: string, ip: string): string;
  isValidIp(ip: string): boolean;
}

export interface IngestedEvent {
  id: string | null;
  eventId: string;
  uaClass: string;
  fingerprintId: string;
  tarpit: { active: boolean; delayMs: number };
}

export interface IngestResult {
  accepted: number;
  duplicates: number;
  events: IngestedEvent[];
}

export interface IngestDeps {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  classifier: Classifier;
  geo: GeoLookup;
  fingerprints: Fingerprinter;
  /** Key for the keyed hash of client IPs. */
  ipHashKey: () => string;
  liarThreshold: number;
  tarpitTtlMinutes: number;
}

const INGEST_REFUSALS = {
  'unknown-tenant': 'No tenant has that slug.',
  'bad-signature': 'The signature does not verify under the tenant\'s signing secret.',
  'stale-signature': 'The signature timestamp is more than 300 seconds from the server clock.',
} as const;

export function createIngestService(deps: IngestDeps) {
  const { db, clock, classifier, geo, fingerprints } = deps;

  /**
   * Verifies `X-Observatory-Tenant` and `X-Observatory-Signature` over the raw body (spec D3):
   * 401 unknown-tenant, bad-signature or stale-signature; 403 tenant-disabled.
   */
  async function verify(slug: string | undefined, signature: string | undefined, rawBody: string): Promise<repo.TenantRow> {
    const tenant = slug ? await repo.findTenantBySlug(db, slug) : null;
    if (!tenant) throw new ServiceError(401, 'unknown-tenant', INGEST_REFUSALS['unknown-tenant']);
    const now = clock.now();
    const check = checkSignature(parseSignatureHeader(signature), verifyingSecrets(tenant, now), rawBody, now.getTime());
    if (check !== 'ok') throw new ServiceError(401, check, INGEST_REFUSALS[check]);
    if (tenant.disabledAt !== null) throw new ServiceError(403, 'tenant-disabled', `Tenant ${tenant.slug} is disabled; its events are refused.`);
    return tenant;
  }

  function checkEventBounds(events: IngestEvent[], now: Date): void {
    events.forEach((event, i) => {
      if (!fingerprints.isValidIp(event.ip)) {
        throw badRequest('invalid-body', `body.events[${i}].ip is not an IPv4 or IPv6 address.`, { field: `body.events[${i}].ip` });
      }
      if (event.ts !== undefined) {
        const at = Date.parse(event.ts);
        if (at < now.getTime() - MAX_PAST_MS || at > now.getTime() + MAX_FUTURE_MS) {
          throw badRequest('invalid-body', `body.events[${i}].ts must be at most 30 days in the past and 5 minutes in the future.`, {
            field: `body.events[${i}].ts`,
          });
        }
      }
    });
  }

  /** A stored row and the normalised UA its fingerprint was made from. */
  interface Derived {
    row: repo.EventRow;
    uaNormalized: string;
  }

  async function derive(tenant: repo.TenantRow, event: IngestEvent, now: Date): Promise<Derived> {
    const ua = event.ua ?? '';
    const headers = event.headers ?? {};
    const method = (event.method ?? 'GET').toUpperCase();
    const verdict = await classifier.classify({ ua, ip: event.ip, headers, method, path: event.path, now });
    const senderGave = event.country != null || event.asn != null;
    const located = event.country != null && event.asn != null ? null : geo.lookup(event.ip);
    const country = event.country ?? located?.country ?? null;
    const asn = event.asn ?? located?.asn ?? null;
    const { fingerprintId, uaNormalized } = fingerprints.fingerprintOf({ ja4: event.ja4 ?? null, ua });
    const row: repo.EventRow = {
      id: randomUUID(),
      tenantId: tenant.id,
      senderId: event.id ?? null,
      ts: event.ts ? new Date(event.ts) : now,
      receivedAt: now,
      method,
      path: event.path,
      query: event.query ?? null,
      uaRaw: ua,
      ipHash: fingerprints.hashIp(deps.ipHashKey(), event.ip),
      ja4: event.ja4 ?? null,
      asn,
      country,
      attributionSource: country === null && asn === null ? null : senderGave ? 'sender' : 'geoip',
      referer: event.referer ?? null,
      headers,
      uaClass: verdict.uaClass,
      vendorId: verdict.vendorId,
      proof: verdict.proof,
      evidence: verdict.evidence,
      fingerprintId,
      schemaVersion: REPLAY_SCHEMA_VERSION,
      bodyBytes: Buffer.byteLength(JSON.stringify(event)),
    };
    return { row, uaNormalized };
  }

  function fingerprintDeltas(derived: Derived[]): repo.FingerprintDelta[] {
    const byId = new Map<string, repo.FingerprintDelta>();
    for (const { row, uaNormalized } of derived) {
      const current = byId.get(row.fingerprintId);
      const liar = row.uaClass === 'LIAR' ? 1 : 0;
      if (!current) {
        byId.set(row.fingerprintId, {
          tenantId: row.tenantId,
          fingerprintId: row.fingerprintId,
          ja4: row.ja4,
          uaNormalized,
          uaSample: row.uaRaw,
          lastUaClass: row.uaClass,
          asn: row.asn,
          firstSeen: row.ts,
          lastSeen: row.ts,
          events: 1,
          liars: liar,
        });
        continue;
      }
      current.events += 1;
      current.liars += liar;
      if (row.ts < current.firstSeen) current.firstSeen = row.ts;
      if (row.ts >= current.lastSeen) {
        current.lastSeen = row.ts;
        current.lastUaClass = row.uaClass;
        current.uaSample = row.uaRaw;
      }
      current.asn ??= row.asn;
    }
    // A stable order keeps concurrent upserts from deadlocking on the same fingerprints.
    return [...byId.values()].sort((a, b) => a.fingerprintId.localeCompare(b.fingerprintId));
  }

  /** Opens tarpits for fingerprints of this batch that crossed the liar threshold. */
  async function updateTarpits(tx: Db, tenantId: string, liarFingerprints: string[], now: Date): Promise<void> {
    const counts = await repo.countLiarEvents(tx, tenantId, liarFingerprints, new Date(now.getTime() - TARPIT_WINDOW_MS), new Date(now.getTime() + MAX_FUTURE_MS));
    for (const fingerprintId of liarFingerprints) {
      const liarEventCount = counts.get(fingerprintId) ?? 0;
      const decision = decideTarpit(liarEventCount, deps.liarThreshold);
      if (!decision.trigger) continue;
      await repo.insertTarpit(tx, {
        id: randomUUID(),
        tenantId,
        fingerprintId,
        triggeredAt: now,
        expiresAt: new Date(now.getTime() + deps.tarpitTtlMinutes * 60_000),
        delayMs: TARPIT_DELAY_MS,
        reason: decision.reason,
        liarEventCount,
        active: true,
        endedAt: null,
      });
    }
  }

  /**
   * Classifies, enriches and stores a verified batch in one transaction; the answer is sent only
   * after it commits, so an acknowledged event survives a crash.
   */
  async function ingest(tenant: repo.TenantRow, body: IngestBody): Promise<IngestResult> {
    const now = clock.now();
    checkEventBounds(body.events, now);
    const derived: Derived[] = [];
    // Each request event points at the derived row it stands for; an id repeated within the
    // batch points at its first occurrence.
    const firstOfSender = new Map<string, number>();
    const slotOf: number[] = [];
    for (const event of body.events) {
      const earlierInBatch = event.id === undefined ? undefined : firstOfSender.get(event.id);
      if (earlierInBatch !== undefined) {
        slotOf.push(earlierInBatch);
        continue;
      }
      if (event.id !== undefined) firstOfSender.set(event.id, derived.length);
      slotOf.push(derived.length);
      derived.push(await derive(tenant, event, now));
    }
    const rows = derived.map((d) => d.row);

    return withTransaction(db, async (tx) => {
      const inserted = await repo.insertEvents(tx, rows);
      const stored = rows.filter((r) => inserted.has(r.id));
      // Rows whose sender id was already stored: answer with the stored original.
      const earlier = new Map(
        (await repo.findEventsBySenderIds(tx, tenant.id, rows.filter((r) => !inserted.has(r.id) && r.senderId !== null).map((r) => r.senderId as string)))
          .map((e) => [e.senderId as string, e]),
      );
      const liars = [...new Set(stored.filter((r) => r.uaClass === 'LIAR').map((r) => r.fingerprintId))].sort();
      await updateTarpits(tx, tenant.id, liars, now);

      const answered = new Set<number>();
      const resolved = slotOf.map((slot) => {
        const row = rows[slot]!;
        const isNew = inserted.has(row.id) && !answered.has(slot);
        answered.add(slot);
        const original = inserted.has(row.id) ? row : earlier.get(row.senderId as string);
        if (!original) throw new Error('a duplicate event has no stored original');
        return { eventId: original.id, uaClass: original.uaClass, fingerprintId: original.fingerprintId, duplicate: !isNew };
      });
      const tarpitted = new Map(
        (await repo.activeTarpits(tx, tenant.id, [...new Set(resolved.map((r) => r.fingerprintId))], now)).map((t) => [t.fingerprintId, t]),
      );
      const events = resolved.map((r, i) => {
        const tarpit = tarpitted.get(r.fingerprintId);
        return {
          id: body.events[i]?.id ?? null,
          eventId: r.eventId,
          uaClass: r.uaClass,
          fingerprintId: r.fingerprintId,
          tarpit: { active: tarpit !== undefined, delayMs: tarpit?.delayMs ?? 0 },
        };
      });
      const duplicates = resolved.filter((r) => r.duplicate).length;
      // Counters last, just before the commit: the fingerprint and rollup rows that concurrent
      // ingests of a tenant share stay locked only until then (nothing above reads them).
      await repo.upsertFingerprints(tx, fingerprintDeltas(derived.filter((d) => inserted.has(d.row.id))));
      await recordRollups(tx, stored);
      return { accepted: resolved.length - duplicates, duplicates, events };
    });
  }

  return {
    verify,
    ingest,
    parseBody: parseIngestBody,
    /** Records one ingest request's outcome and latency for the SLO; never fails the caller. */
    async recordSample(sample: { tenantSlug: string | null; receivedAt: Date; outcome: string; latencyMs: number; eventCount: number }) {
      try {
        await repo.insertSample(db, sample);
      } catch (error) {
        deps.log.warn({ err: error }, 'could not record an ingest sample');
      }
    },
    expireTarpits: (now: Date) => repo.expireTarpits(db, now),
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
