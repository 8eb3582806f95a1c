import { randomUUID } from 'node:crypto';
import { type AuditActor, type AuditLog, actorOf, type AuditSurface, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, notFound } from '../../../platform/errors.ts';
import {
  type Breach,
  type Detector,
  type DriftKind,
  type DriftSeverity,
  type DriftStatus,
  HELD_STATUSES,
  type ListStatus,
  type ResolveStatus,
  slotKey,
} from './kinds.ts';
import * as repo from './repository.ts';

/**
 * The drift inbox (spec A "Trust drift event" and its state table; docs/federation/README.md, "Drift
 * inbox and detectors"): the auto-open scan, ack, resolve, the remediation pass, and the reads
 * other domains take (counts by severity, events opened since).
 */

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 500;
/** sinceHours: a whole number of hours up to ten years. */
export const SINCE_HOURS_MAX = 87_600;
export const NOTES_MAX = 2000;
/** How long one detector may take before its scan is reported as an error (its work is not cancelled, only not waited for). */
export const DETECTOR_TIMEOUT_MS = 60_000;
/** Held (open or acknowledged) events one scan or remediation pass reads: the detectors' re-check list and what remediation may resolve. */
export const HELD_MAX = 1000;
/** Breaches one detector may report per scan; more are cut (and said so in detectorErrors). */
export const BREACHES_MAX = 200;
/** Who auto-resolved an event. */
export const JOB_RESOLVER = 'job';

export interface DriftEventView {
  id: string;
  kind: DriftKind;
  source: string;
  sourceId: string;
  description: string;
  severity: DriftSeverity;
  status: DriftStatus;
  openedAt: string;
  acknowledgedAt: string | null;
  resolvedAt: string | null;
  resolvedBy: string | null;
  resolutionNotes: string;
  payload: unknown;
}

export function toView(row: repo.DriftRow): DriftEventView {
  return {
    id: row.id,
    kind: row.kind as DriftKind,
    source: row.source,
    sourceId: row.sourceId,
    description: row.description,
    severity: row.severity as DriftSeverity,
    status: row.status as DriftStatus,
    openedAt: row.openedAt.toISOString(),
    acknowledgedAt: row.acknowledgedAt?.toISOString() ?? null,
    resolvedAt: row.resolvedAt?.toISOString() ?? null,
    resolvedBy: row.resolvedBy,
    resolutionNotes: row.resolutionNotes,
    payload: row.payload,
  };
}

export interface DetectorError {
  detector: DriftKind;
  error: string;
}

export interface ScanResult {
  scannedAt: string;
  openedNow: DriftEventView[];
  alreadyOpen: number;
  /** Breaches whose slot's latest event is `wont-fix` and has not cleared since: an accepted divergence, nothing opened. */
  acceptedWontFix: number;
  detectorErrors: DetectorError[];
}

export interface RemediateResult {
  scannedAt: string;
  autoResolved: DriftEventView[];
  stillBreaching: number;
  /** `wont-fix` events whose slot was found clear now: a returning breach opens a new event. */
  clearedWontFix: number;
  detectorErrors: DetectorError[];
}

/** Who triggered a scan: an operator's call, or a scheduled or on-demand job run. */
export type Trigger = { call: CallContext } | { job: true };

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/** The fact the audit chain keeps of an event's change: the event as it is after it. */
const factPayload = (row: repo.DriftRow, action: string, notes: string | null = null) => ({
  action,
  kind: row.kind,
  source: row.source,
  sourceId: row.sourceId,
  severity: row.severity,
  status: row.status,
  ...(notes !== null ? { notes } : {}),
});

export function createDriftService(deps: { db: Db; clock: Clock; audit: AuditLog; detectors: () => readonly Detector[]; detectorTimeoutMs?: number }) {
  const { db, clock, audit } = deps;
  const timeoutMs = deps.detectorTimeoutMs ?? DETECTOR_TIMEOUT_MS;

  /** Runs every detector (one after another, each bounded by DETECTOR_TIMEOUT_MS); a failure is reported and its kind left alone. */
  async function detect(now: Date, held: readonly Pick<repo.DriftRow, 'kind' | 'source' | 'sourceId'>[]) {
    const breaches = new Map<DriftKind, Breach[]>();
    const errors: DetectorError[] = [];
    for (const detector of deps.detectors()) {
      const mine = held.filter((h) => h.kind === detector.kind).map((h) => ({ kind: detector.kind, source: h.source, sourceId: h.sourceId }));
      let timer: NodeJS.Timeout | undefined;
      try {
        const found = await Promise.race([
          detector.scan({ now, held: mine }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`gave no answer within ${timeoutMs / 1000} s`)), timeoutMs);
          }),
        ]);
        // One breach per slot: the first wins.
        const unique = [...new Map(found.map((b) => [slotKey({ kind: detector.kind, ...b }), b])).values()];
        if (unique.length > BREACHES_MAX) errors.push({ detector: detector.kind, error: `found ${unique.length} breaches; the first ${BREACHES_MAX} were considered` });
        breaches.set(detector.kind, unique.slice(0, BREACHES_MAX));
      } catch (error) {
        errors.push({ detector: detector.kind, error: errorText(error) });
      } finally {
        clearTimeout(timer);
      }
    }
    return { breaches, errors };
  }

  const who = (trigger: Trigger): { actor: AuditActor | null; surface: AuditSurface; requestId: string | null; name: string | null } =>
    'call' in trigger
      ? { actor: actorOf(trigger.call.principal), surface: 'api', requestId: trigger.call.requestId, name: trigger.call.principal.username }
      : { actor: null, surface: 'job', requestId: null, name: null };

  /**
   * The auto-open scan (POST {v1}/trust/drift, job drift-auto-open): a breach opens an event only
   * when no open and no acknowledged event holds its slot. The insert relies on the partial unique
   * index, so a concurrent scan that opened it first makes this one count it as already open.
   */
  async function autoOpen(trigger: Trigger): Promise<ScanResult> {
    const now = clock.now();
    const held = await repo.heldEvents(db, HELD_MAX);
    const accepted = await repo.unclearedWontFix(db, HELD_MAX);
    const { breaches, errors } = await detect(now, [...held, ...accepted]);
    const by = who(trigger);
    let alreadyOpen = 0;
    let acceptedWontFix = 0;
    const opened = await withTransaction(db, async (tx) => {
      // The slots held now (the detectors ran meanwhile), read under the scan lock.
      await repo.lockScan(tx);
      const found = [...breaches.values()].flat();
      const sourceIds = found.map((b) => b.sourceId);
      const heldSlots = new Set((await repo.heldAmong(tx, sourceIds)).map(slotKey));
      const acceptedSlots = new Set((await repo.acceptedAmong(tx, sourceIds)).map(slotKey));
      const rows: repo.DriftRow[] = [];
      for (const [kind, found] of breaches) {
        for (const breach of found) {
          if (heldSlots.has(slotKey({ kind, ...breach }))) {
            alreadyOpen++;
            continue;
          }
          if (acceptedSlots.has(slotKey({ kind, ...breach }))) {
            acceptedWontFix++;
            continue;
          }
          const row = await repo.insertOpenIfAbsent(tx, {
            id: randomUUID(),
            kind,
            source: breach.source,
            sourceId: breach.sourceId,
            description: breach.description,
            severity: breach.severity,
            status: 'open',
            openedAt: now,
            acknowledgedAt: null,
            resolvedAt: null,
            resolvedBy: null,
            resolutionNotes: '',
            payload: breach.payload,
            clearedAt: null,
          });
          if (row === null) {
            alreadyOpen++;
            continue;
          }
          await audit.appendFact(tx, { source: 'TrustDriftEvent', sourceId: row.id, kind: 'drift', actor: by.name, payload: factPayload(row, 'open') });
          rows.push(row);
        }
      }
      if (rows.length > 0) {
        await audit.record(tx, {
          verb: 'trust.drift-auto-open',
          target: 'trust-drift',
          surface: by.surface,
          actor: by.actor,
          before: null,
          after: { opened: rows.map((r) => ({ id: r.id, kind: r.kind, source: r.source, sourceId: r.sourceId, severity: r.severity })) },
          requestId: by.requestId,
        });
      }
      return rows;
    });
    return { scannedAt: now.toISOString(), openedNow: opened.map(toView), alreadyOpen, acceptedWontFix, detectorErrors: errors };
  }

  /**
   * The remediation pass (job drift-remediate): re-runs the detectors and auto-resolves every open
   * or acknowledged event whose slot no longer breaches. A detector that failed leaves its kind alone.
   */
  async function remediate(): Promise<RemediateResult> {
    const now = clock.now();
    const held = await repo.heldEvents(db, HELD_MAX);
    const accepted = await repo.unclearedWontFix(db, HELD_MAX);
    const { breaches, errors } = await detect(now, [...held, ...accepted]);
    const resolved: repo.DriftRow[] = [];
    let stillBreaching = 0;
    let clearedWontFix = 0;
    // An accepted divergence that has cleared frees its slot: if it returns, it is news again.
    for (const event of accepted) {
      const found = breaches.get(event.kind as DriftKind);
      if (found === undefined || found.some((b) => b.source === event.source && b.sourceId === event.sourceId)) continue;
      await withTransaction(db, (tx) => repo.markCleared(tx, event.id, now));
      clearedWontFix++;
    }
    for (const event of held) {
      const found = breaches.get(event.kind as DriftKind);
      if (found === undefined) continue; // the detector failed (or is unknown): nothing is known of this kind
      if (found.some((b) => b.source === event.source && b.sourceId === event.sourceId)) {
        stillBreaching++;
        continue;
      }
      const notes = `Cleared: the ${event.kind} detector no longer finds ${event.source} ${event.sourceId} in breach (scan at ${now.toISOString()}).`;
      const row = await withTransaction(db, async (tx) => {
        const locked = await repo.lockEvent(tx, event.id);
        if (locked === null || !(HELD_STATUSES as readonly string[]).includes(locked.status)) return null; // moved meanwhile
        const updated = await repo.updateEvent(tx, event.id, { status: 'auto-resolved', resolvedAt: now, resolvedBy: JOB_RESOLVER, resolutionNotes: notes });
        await audit.record(tx, {
          verb: 'trust.drift-auto-resolve',
          target: `trust-drift:${event.id}`,
          surface: 'job',
          actor: null,
          before: { status: locked.status },
          after: { status: updated.status, resolvedBy: JOB_RESOLVER, resolutionNotes: notes },
        });
        await audit.appendFact(tx, { source: 'TrustDriftEvent', sourceId: event.id, kind: 'drift', actor: null, payload: factPayload(updated, 'auto-resolve', notes) });
        return updated;
      });
      if (row !== null) resolved.push(row);
    }
    return { scannedAt: now.toISOString(), autoResolved: resolved.map(toView), stillBreaching, clearedWontFix, detectorErrors: errors };
  }

  function cleanNotes(notes: string | undefined): string {
    const text = (notes ?? '').trim();
    if (text.length > NOTES_MAX) throw badRequest('invalid-body', `notes may hold at most ${NOTES_MAX} characters.`, { field: 'body.notes' });
    return text;
  }

  /** Open and acknowledged events by severity (what the trust snapshot and the chaos schedule read). */
  async function openDriftCounts(): Promise<DriftCounts> {
    const counts: DriftCounts = { open: { critical: 0, major: 0, minor: 0 }, acknowledged: { critical: 0, major: 0, minor: 0 } };
    for (const r of await repo.heldCounts(db)) {
      const bucket = counts[r.status as 'open' | 'acknowledged'];
      if (bucket && r.severity in bucket) bucket[r.severity as DriftSeverity] += r.n;
    }
    return counts;
  }

  return {
    autoOpen,
    remediate,

    /** `GET {v1}/trust/drift`. */
    async list(query: { status?: ListStatus | undefined; kind?: DriftKind | undefined; limit?: string | undefined; sinceHours?: string | undefined }) {
      const status = query.status ?? 'open';
      let limit = LIST_LIMIT_DEFAULT;
      if (query.limit !== undefined) {
        limit = /^[0-9]{1,4}$/.test(query.limit) ? Number(query.limit) : NaN;
        if (!(limit >= 1 && limit <= LIST_LIMIT_MAX)) {
          throw badRequest('invalid-query', `limit must be a whole number from 1 to ${LIST_LIMIT_MAX} (got ${JSON.stringify(query.limit.slice(0, 20))}).`, { field: 'query.limit' });
        }
      }
      let sinceHours: number | null = null;
      if (query.sinceHours !== undefined) {
        sinceHours = /^[0-9]{1,6}$/.test(query.sinceHours) ? Number(query.sinceHours) : NaN;
        if (!(sinceHours >= 1 && sinceHours <= SINCE_HOURS_MAX)) {
          throw badRequest('invalid-query', `sinceHours must be a whole number from 1 to ${SINCE_HOURS_MAX} (got ${JSON.stringify(query.sinceHours.slice(0, 20))}).`, { field: 'query.sinceHours' });
        }
      }
      const since = sinceHours === null ? null : new Date(clock.now().getTime() - sinceHours * 3_600_000);
      const rows = await repo.listEvents(db, { status: status === 'all' ? null : status, kind: query.kind ?? null, since, limit });
      return { filter: { status, kind: query.kind ?? null, limit, sinceHours }, events: rows.map(toView) };
    },

    /**
     * `POST {v1}/trust/drift/{id}/ack`: open → acknowledged (acknowledgedAt stamped). On an
     * acknowledged event it answers the event unchanged and writes nothing; on a resolved,
     * auto-resolved or wont-fix one it is 409.
     */
    async acknowledge(ctx: CallContext, id: string, input: { notes?: string | undefined }) {
      const notes = cleanNotes(input.notes);
      return withTransaction(db, async (tx) => {
        const row = await repo.lockEvent(tx, id);
        assertThat(row, notFound(`There is no drift event ${id}.`));
        if (row.status === 'acknowledged') return { ok: true as const, event: toView(row) };
        if (row.status !== 'open') throw conflict(`Drift event ${id} is ${row.status}; only an open event can be acknowledged.`);
        const updated = await repo.updateEvent(tx, id, { status: 'acknowledged', acknowledgedAt: clock.now() });
        await audit.record(tx, {
          verb: 'trust.drift-ack',
          target: `trust-drift:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: { status: row.status },
          after: { status: updated.status, acknowledgedAt: updated.acknowledgedAt?.toISOString() ?? null, notes },
          requestId: ctx.requestId,
        });
        await audit.appendFact(tx, { source: 'TrustDriftEvent', sourceId: id, kind: 'drift', actor: ctx.principal.username, payload: factPayload(updated, 'ack', notes) });
        return { ok: true as const, event: toView(updated) };
      });
    },

    /**
     * `POST {v1}/trust/drift/{id}/resolve`: open or acknowledged → the body's status (`resolved`
     * when omitted), stamping resolvedAt, resolvedBy (the caller's username) and resolutionNotes.
     * An event already resolved, auto-resolved or wont-fix is 409.
     */
    async resolve(ctx: CallContext, id: string, input: { status?: ResolveStatus | undefined; notes?: string | undefined }) {
      const notes = cleanNotes(input.notes);
      const status = input.status ?? 'resolved';
      return withTransaction(db, async (tx) => {
        const row = await repo.lockEvent(tx, id);
        assertThat(row, notFound(`There is no drift event ${id}.`));
        if (!(HELD_STATUSES as readonly string[]).includes(row.status)) throw conflict(`Drift event ${id} is ${row.status} already; only an open or acknowledged event can be resolved.`);
        const updated = await repo.updateEvent(tx, id, { status, resolvedAt: clock.now(), resolvedBy: ctx.principal.username, resolutionNotes: notes });
        await audit.record(tx, {
          verb: 'trust.drift-resolve',
          target: `trust-drift:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: { status: row.status },
          after: { status: updated.status, resolvedBy: updated.resolvedBy, resolutionNotes: notes },
          requestId: ctx.requestId,
        });
        await audit.appendFact(tx, { source: 'TrustDriftEvent', sourceId: id, kind: 'drift', actor: ctx.principal.username, payload: factPayload(updated, 'resolve', notes) });
        return { ok: true as const, event: toView(updated) };
      });
    },

    openDriftCounts,

    /** Events opened at or after `since`, whatever their status now. */
    openedSince: (since: Date) => repo.countOpenedSince(db, since),

    /** Open or acknowledged critical events: the count, and the oldest `listedMax` (the compliance control no-open-critical-drift). */
    async criticalUnresolved(listedMax: number) {
      const counts = await openDriftCounts();
      const rows = await repo.heldOfSeverity(db, 'critical', listedMax);
      return {
        open: counts.open.critical,
        acknowledged: counts.acknowledged.critical,
        listed: rows.map((r) => ({ id: r.id, kind: r.kind, source: r.source, sourceId: r.sourceId, status: r.status, openedAt: r.openedAt.toISOString() })),
      };
    },
  };
}

export interface DriftCounts {
  open: Record<DriftSeverity, number>;
  acknowledged: Record<DriftSeverity, number>;
}

export type DriftService = ReturnType<typeof createDriftService>;
