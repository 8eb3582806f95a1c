import { randomUUID } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import type { DomainMetrics } from '../../../platform/metrics.ts';
import { createBufferedWrites } from '../../../platform/db/buffered-writes.ts';
import { createGroupCommit } from '../../../platform/db/group-commit.ts';
import { SLO_SAMPLE_RETENTION_MS } from '../../../platform/db/retention.ts';
import { isDatabaseUnavailable, isUniqueViolation, withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, ServiceError } from '../../../platform/errors.ts';
import { Nullable } from '../../../platform/http/registry.ts';
import * as repo from './repository.ts';
import { checkSignature, derivedEventId, type ParsedSignature, parseSignatureHeader, replayKeyOf } from './signature.ts';
import { EVENT_TS_MAX_FUTURE_MS, eventTimeProblem } from '../../../platform/event-time.ts';
import { decideTarpit, isVerifiedClass, TARPIT_DELAY_MS, TARPIT_WINDOW_MS, tarpitAnswer, tarpitExpiresAt } from './tarpit.ts';
import type { SourceFacts } from '../enrichment/fingerprint.ts';
import { type TenantRow, verifyingSecrets } from '../tenants/service.ts';

export const MAX_EVENTS_PER_REQUEST = 500;
/**
 * The version stored with each event (its replay envelope). 2: fingerprints keyed with their
 * source part (enrichment/fingerprint.ts `fingerprintSource`); 1: keyed by JA4 and UA alone.
 */
export const REPLAY_SCHEMA_VERSION = 2;

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
    // A failed check has a first error: TypeBox's Errors walks the rules Check applies.
    const first = checkIngestBody.Errors(parsed).First()!;
    const field = `body${first.path.replace(/\/(\d+)(?=\/|$)/g, '[$1]').replaceAll('/', '.')}`;
    throw badRequest('invalid-body', `${field} ${first.message}.`, { field });
  }
  return parsed;
}

/** What the vendor registry says of one request (see docs/honeypot/vendors.md). */
export interface Verdict {
  uaClass: string;
  vendorId: string | null;
  proof: string | null;
  evidence: Record<string, unknown>;
}

/** The ports ingest needs; app.ts fills them with the vendor registry and the GeoIP data. */
export interface Classifier {
  /** Synchronous: every event of a batch is judged in one turn, with no promise per event. */
  classify(input: { ua: string; ip: string; headers: Record<string, string>; method: string; path: string; now: Date }): Verdict;
}
export interface GeoLookup {
  lookup(ip: string): { country: string | null; asn: number | null };
}
export interface Fingerprinter {
  /** `source` tells sources apart beside the JA4 and UA (docs/honeypot/enrichment.md, "Fingerprint"). */
  fingerprintOf(input: { ja4: string | null; ua: string; source: SourceFacts }): { fingerprintId: string; uaNormalized: string };
  /** Keyed hash of the normalised IP, so every spelling of one address hashes alike. */
  hashIp(key: string, ip: string): string;
  isValidIp(ip: string): boolean;
}

export interface IngestedEvent {
  /** The sender's id, else the id derived from the signed request; null only for unsigned internal recording without ids. */
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
  /** The tenant row by slug for verification, possibly cached; `fresh` forces a read. */
  tenantBySlug(slug: string, fresh: boolean): Promise<TenantRow | null>;
  /** Key for the keyed hash of client IPs. */
  ipHashKey: () => string;
  liarThreshold: number;
  tarpitTtlMinutes: number;
  /** Told after a group committed events, which wait in a pending row for the rollup applier. */
  onPending?: () => void;
  /** Counts stored events and opened tarpits (per instance); none when absent. */
  metrics?: Pick<DomainMetrics, 'honeypotEventsStored' | 'tarpitsOpened'>;
}

const INGEST_REFUSALS = {
  'unknown-tenant': 'No tenant has that slug.',
  'bad-signature':
    'The signature does not verify under the tenant\'s signing secret. v1 is the hex HMAC-SHA256 of "<t>.<raw body>" keyed by the whole whsec_… secret as text, not base64-decoded as Standard Webhooks does; see docs/honeypot/README.md.',
  'stale-signature': 'The signature timestamp is more than 300 seconds from the server clock.',
} as const;

/** A request whose signature verified: its tenant and the key its id-less events derive their ids from. */
export interface VerifiedRequest {
  tenant: TenantRow;
  /** `replayKeyOf(t, rawBody)` (signature.ts). */
  replayKey: string;
}

export interface IngestOptions {
  /**
   * The verified request's replay key. Given, each event without an `id` gets
   * `derivedEventId(replayKey, index)`, so a replay of the request is a duplicate (spec D3).
   * Absent (events the service saw itself, which carry their own ids), id-less events stay id-less.
   */
  replayKey?: string;
}

/** Events one group commit holds at most (docs/honeypot/README.md, "Group commit"). */
export const GROUP_MAX_EVENTS = 2000;
/** Group commits written at the same time by one instance. */
export const GROUPS_IN_FLIGHT = 2;

/** A stored row and the normalised UA its fingerprint was made from. */
interface Derived {
  row: repo.EventRow;
  uaNormalized: string;
}

/** A verified request's events, classified and enriched, waiting for its group commit. */
interface PreparedBatch {
  /** The tenant's id and slug (the slug labels the metrics). */
  tenant: { id: string; slug: string };
  /** The rows to store, one per distinct sender id (or per event without one). */
  entries: Derived[];
  /** For each request event, the index of the entry it stands for (a repeated id points at its first). */
  slotOf: number[];
  /** The id of each request event: the sender's, else the derived one (null when neither). */
  senderIds: (string | null)[];
}

/** What an answer says of the event a request event stands for. */
interface Original {
  id: string;
  uaClass: string;
  fingerprintId: string;
  tenantId: string;
}

const keyOf = (tenantId: string, id: string) => `${tenantId}|${id}`;

export function createIngestService(deps: IngestDeps) {
  const { db, clock, classifier, geo, fingerprints } = deps;

  /**
   * Verifies `X-Observatory-Tenant` and `X-Observatory-Signature` over the raw body (spec D3):
   * 401 unknown-tenant, bad-signature or stale-signature; 403 tenant-disabled. A signature that
   * fails against a cached tenant row is checked once more against a fresh read (a secret rotated
   * on another instance).
   */
  async function verify(slug: string | undefined, signature: string | undefined, rawBody: string): Promise<VerifiedRequest> {
    const now = clock.now();
    const parsed = parseSignatureHeader(signature);
    const check = (row: TenantRow) => checkSignature(parsed, verifyingSecrets(row, now), rawBody, now.getTime());
    let tenant = slug ? await deps.tenantBySlug(slug, false) : null;
    if (!tenant) throw new ServiceError(401, 'unknown-tenant', INGEST_REFUSALS['unknown-tenant']);
    let result = check(tenant);
    if (result !== 'ok') {
      tenant = await deps.tenantBySlug(tenant.slug, true);
      if (!tenant) throw new ServiceError(401, 'unknown-tenant', INGEST_REFUSALS['unknown-tenant']);
      result = check(tenant);
    }
    if (result !== 'ok') throw new ServiceError(401, result, INGEST_REFUSALS[result]);
    if (tenant.disabledAt !== null) throw new ServiceError(403, 'tenant-disabled', `Tenant ${tenant.slug} is disabled; its events are refused.`);
    // `parsed` is non-null here: a null header never checks 'ok'.
    return { tenant, replayKey: replayKeyOf((parsed as ParsedSignature).t, rawBody) };
  }

  function checkEventBounds(events: IngestEvent[], now: Date): void {
    events.forEach((event, i) => {
      if (!fingerprints.isValidIp(event.ip)) {
        throw badRequest('invalid-body', `body.events[${i}].ip is not an IPv4 or IPv6 address.`, { field: `body.events[${i}].ip` });
      }
      const problem = event.ts === undefined ? null : eventTimeProblem(event.ts, now);
      if (problem !== null) {
        throw badRequest('invalid-body', `body.events[${i}].ts ${problem}; it must be at most 30 days in the past and 5 minutes in the future.`, {
          field: `body.events[${i}].ts`,
        });
      }
    });
  }

  function derive(tenant: TenantRow, event: IngestEvent, senderId: string | null, now: Date): Derived {
    const ua = event.ua ?? '';
    const headers = event.headers ?? {};
    const method = (event.method ?? 'GET').toUpperCase();
    const verdict = classifier.classify({ ua, ip: event.ip, headers, method, path: event.path, now });
    const senderGave = event.country != null || event.asn != null;
    const located = event.country != null && event.asn != null ? null : geo.lookup(event.ip);
    const country = event.country ?? located?.country ?? null;
    const asn = event.asn ?? located?.asn ?? null;
    const ipHash = fingerprints.hashIp(deps.ipHashKey(), event.ip);
    const verifiedVendorId = isVerifiedClass(verdict.uaClass) ? verdict.vendorId : null;
    const { fingerprintId, uaNormalized } = fingerprints.fingerprintOf({ ja4: event.ja4 ?? null, ua, source: { verifiedVendorId, asn, ipHash } });
    const row: repo.EventRow = {
      id: randomUUID(),
      tenantId: tenant.id,
      senderId,
      ts: event.ts ? new Date(event.ts) : now,
      receivedAt: now,
      method,
      path: event.path,
      query: event.query ?? null,
      uaRaw: ua,
      ipHash,
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

  /**
   * Checks, classifies and enriches a verified body; nothing is written yet. An event without an
   * id takes the one derived from the signed request, so replaying the request stores nothing.
   */
  function prepare(tenant: TenantRow, body: IngestBody, options: IngestOptions): PreparedBatch {
    const now = clock.now();
    checkEventBounds(body.events, now);
    const batch: PreparedBatch = { tenant: { id: tenant.id, slug: tenant.slug }, entries: [], slotOf: [], senderIds: [] };
    // Only sender ids are entered, so an id-less event (null) finds no earlier one.
    const firstOfSender = new Map<string | null, number>();
    for (const [index, event] of body.events.entries()) {
      const senderId = event.id ?? (options.replayKey === undefined ? null : derivedEventId(options.replayKey, index));
      batch.senderIds.push(senderId);
      const earlierInBatch = firstOfSender.get(senderId);
      if (earlierInBatch !== undefined) {
        batch.slotOf.push(earlierInBatch);
        continue;
      }
      if (senderId !== null) firstOfSender.set(senderId, batch.entries.length);
      batch.slotOf.push(batch.entries.length);
      batch.entries.push(derive(tenant, event, senderId, now));
    }
    return batch;
  }

  /** [tenantId, fingerprintId, uaNormalized] of each fingerprint of the stored rows, once. */
  function fingerprintNames(stored: readonly Derived[]): [string, string, string][] {
    const byKey = new Map<string, [string, string, string]>();
    for (const { row, uaNormalized } of stored) {
      const key = keyOf(row.tenantId, row.fingerprintId);
      if (!byKey.has(key)) byKey.set(key, [row.tenantId, row.fingerprintId, uaNormalized]);
    }
    return [...byKey.values()];
  }

  const uniqueKeys = (list: readonly { tenantId: string; fingerprintId: string }[]): repo.FingerprintKey[] => [
    ...new Map(list.map((k) => [keyOf(k.tenantId, k.fingerprintId), { tenantId: k.tenantId, fingerprintId: k.fingerprintId }])).values(),
  ];

  /**
   * Opens a tarpit for each LIAR fingerprint of the group that has now reached the liar threshold
   * within 10 minutes (spec A): the LIAR events stored before the group plus the group's own.
   * Returns the fingerprints it opened. Runs after the group committed, in its own transaction: a
   * crash in between loses no event, and the next LIAR event of the flood opens the tarpit.
   */
  async function openTarpits(stored: readonly Derived[], storedLiars: Map<string, number>, from: Date, to: Date, now: Date): Promise<string[]> {
    const own = new Map<string, number>();
    for (const { row } of stored) {
      if (row.uaClass !== 'LIAR' || row.ts < from || row.ts > to) continue;
      const key = keyOf(row.tenantId, row.fingerprintId);
      own.set(key, (own.get(key) ?? 0) + 1);
    }
    const opening = [...storedLiars].flatMap(([key, before]) => {
      const liarEventCount = before + (own.get(key) ?? 0);
      const decision = decideTarpit(liarEventCount, deps.liarThreshold);
      return decision.trigger ? [{ key, liarEventCount, reason: decision.reason }] : [];
    });
    if (opening.length === 0) return [];
    const keys = opening.map(({ key }) => {
      const [tenantId, fingerprintId] = key.split('|') as [string, string];
      return { tenantId, fingerprintId };
    });
    await withTransaction(db, async (tx) => {
      await repo.endExpiredTarpits(tx, keys, now);
      // A row skipped on conflict means a concurrent ingest opened it first: it is active either way.
      await repo.insertTarpits(
        tx,
        opening.map(({ liarEventCount, reason }, i) => ({
          id: randomUUID(),
          ...keys[i]!,
          triggeredAt: now,
          expiresAt: tarpitExpiresAt(now, deps.tarpitTtlMinutes),
          delayMs: TARPIT_DELAY_MS,
          reason,
          liarEventCount,
          active: true,
          endedAt: null,
        })),
      );
    });
    return opening.map((o) => o.key);
  }

  /**
   * Stores the batches of one group and answers each; the answers are released only after the
   * statement that stored them has committed, so an acknowledged event survives a crash.
   *
   * Optimistically every event is new and the group is one statement. When a sender id turns out
   * to be stored already (the statement fails whole with a unique violation), the originals are
   * looked up and the group is stored again without those events; a repeat within the group is
   * answered from its first occurrence without asking the database.
   */
  async function writeGroup(batches: PreparedBatch[]): Promise<IngestResult[]> {
    const now = clock.now();
    const entries = batches.flatMap((b) => b.entries);
    const firstInGroup = new Map<string, Derived>();
    const repeatOf = new Map<string, Derived>();
    for (const entry of entries) {
      if (entry.row.senderId === null) continue;
      const key = keyOf(entry.row.tenantId, entry.row.senderId);
      const first = firstInGroup.get(key);
      if (first) repeatOf.set(entry.row.id, first);
      else firstInGroup.set(key, entry);
    }
    const liarFrom = new Date(now.getTime() - TARPIT_WINDOW_MS);
    const liarTo = new Date(now.getTime() + EVENT_TS_MAX_FUTURE_MS);

    let storedBefore = new Map<string, Original>();
    const storedBeforeOf = (row: repo.EventRow) => (row.senderId === null ? undefined : storedBefore.get(keyOf(row.tenantId, row.senderId)));
    let toStore: Derived[] = [];
    let written: repo.GroupWritten | null = null;
    for (let attempt = 0; written === null; attempt++) {
      toStore = entries.filter((e) => !repeatOf.has(e.row.id) && storedBeforeOf(e.row) === undefined);
      try {
        written = await repo.storeGroup(db, {
          rows: toStore.map((e) => e.row),
          fingerprints: fingerprintNames(toStore),
          // A verified event is never delayed, so its fingerprint's tarpit is not looked up.
          tarpitKeys: uniqueKeys([...toStore.map((e) => e.row), ...storedBefore.values()].filter((k) => !isVerifiedClass(k.uaClass))),
          liarKeys: uniqueKeys(toStore.filter((e) => e.row.uaClass === 'LIAR').map((e) => e.row)),
          liarFrom,
          liarTo,
          now,
        });
      } catch (error) {
        // Each retry knows every original committed before it; only a writer racing this one can
        // make another necessary.
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
        const withSenderIds = [...firstInGroup.values()].map((e) => ({ tenantId: e.row.tenantId, senderId: e.row.senderId as string }));
        storedBefore = new Map((await repo.findEventsBySenderIds(db, withSenderIds)).map((o) => [keyOf(o.tenantId, o.senderId), o]));
      }
    }
    if (toStore.length > 0) deps.onPending?.();
    const tarpits = written.activeTarpits;
    const opened = await openTarpits(toStore, written.storedLiarEvents, liarFrom, liarTo, now);
    for (const key of opened) tarpits.set(key, { delayMs: TARPIT_DELAY_MS });
    if (deps.metrics) countGroup(deps.metrics, batches, toStore, opened);

    const stored = new Set(toStore.map((e) => e.row.id));
    const originalOf = (row: repo.EventRow): Original => storedBeforeOf(row) ?? (repeatOf.get(row.id)?.row ?? row);
    return batches.map((batch) => {
      const answered = new Set<number>();
      let duplicates = 0;
      const events = batch.slotOf.map((slot, i) => {
        const { row } = batch.entries[slot]!;
        const original = originalOf(row);
        const duplicate = !stored.has(row.id) || answered.has(slot);
        answered.add(slot);
        if (duplicate) duplicates += 1;
        return {
          id: batch.senderIds[i] ?? null,
          eventId: original.id,
          uaClass: original.uaClass,
          fingerprintId: original.fingerprintId,
          tarpit: tarpitAnswer(original.uaClass, tarpits.get(keyOf(original.tenantId, original.fingerprintId))),
        };
      });
      return { accepted: events.length - duplicates, duplicates, events };
    });
  }

  /**
   * Counts a committed group's events by tenant and class, and the tarpits it opened: one pass over
   * the stored rows and a few counter increments per tenant, so the hot path pays next to nothing.
   */
  function countGroup(
    metrics: NonNullable<IngestDeps['metrics']>,
    batches: readonly PreparedBatch[],
    stored: readonly Derived[],
    openedKeys: readonly string[],
  ): void {
    const slugOf = new Map(batches.map((b) => [b.tenant.id, b.tenant.slug]));
    const byTenant = new Map<string, Map<string, number>>();
    for (const { row } of stored) {
      let byClass = byTenant.get(row.tenantId);
      if (byClass === undefined) byTenant.set(row.tenantId, (byClass = new Map()));
      byClass.set(row.uaClass, (byClass.get(row.uaClass) ?? 0) + 1);
    }
    for (const [tenantId, byClass] of byTenant) metrics.honeypotEventsStored(slugOf.get(tenantId) ?? tenantId, byClass);
    const openedBy = new Map<string, number>();
    for (const key of openedKeys) {
      const tenantId = key.slice(0, key.indexOf('|'));
      openedBy.set(tenantId, (openedBy.get(tenantId) ?? 0) + 1);
    }
    for (const [tenantId, count] of openedBy) metrics.tarpitsOpened(slugOf.get(tenantId) ?? tenantId, count);
  }

  const groups = createGroupCommit<PreparedBatch, IngestResult>({
    write: writeGroup,
    weight: (batch) => batch.entries.length,
    maxWeight: GROUP_MAX_EVENTS,
    maxInFlight: GROUPS_IN_FLIGHT,
    retryAlone: (error) => !isDatabaseUnavailable(error),
  });

  // Ingest samples (the SLO) are buffered and written in batches: one per request would cost a
  // commit each, more than the ingest itself.
  const samples = createBufferedWrites<repo.SampleRow>({ write: (rows) => repo.insertSamples(db, rows), log: deps.log, what: 'ingest samples' });

  return {
    verify,
    /**
     * Classifies, enriches and stores a verified batch; it shares a transaction with the batches
     * of concurrent requests (group commit) and resolves after that transaction commits. Signed
     * ingest passes the request's `replayKey`.
     */
    async ingest(tenant: TenantRow, body: IngestBody, options: IngestOptions = {}): Promise<IngestResult> {
      return groups.submit(prepare(tenant, body, options));
    },
    parseBody: parseIngestBody,
    /** Buffers one ingest request's outcome and latency for the SLO; never fails the caller. */
    recordSample: (sample: repo.SampleRow): void => samples.push(sample),
    /** Writes the buffered samples now (before the SLO read, at shutdown). */
    flushSamples: samples.flush,
    /** Waits for every ingest in flight to commit and writes the buffered samples (shutdown). */
    async close(): Promise<void> {
      await groups.drain();
      await samples.flush();
    },
    groupStats: () => groups.stats(),
    expireTarpits: (now: Date) => repo.expireTarpits(db, now),
    /** Tarpits active now, fleet-wide (a metrics gauge). */
    countActiveTarpits: () => repo.countActiveTarpits(db, clock.now()),
    /** Deletes the SLO samples older than the retention (platform/db/retention.ts) at `now`. */
    pruneSamples: (now: Date) => repo.deleteSamplesBefore(db, new Date(now.getTime() - SLO_SAMPLE_RETENTION_MS)),
  };
}

export type IngestService = ReturnType<typeof createIngestService>;
