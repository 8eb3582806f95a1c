import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, notFound, ServiceError } from '../../../platform/errors.ts';
import * as repo from './repository.ts';

/**
 * The subprocessor registry: the third parties that process the service's data, each with its
 * role, what it can reach, where, and when an operator last reviewed it. Operators upsert rows by
 * name, review and archive them; every change is an operator audit row in the transaction that
 * makes it. The compliance predicate `subprocessors-reviewed` reads `reviewState`. Subprocessors
 * belong to no toolset: scopes alone decide who reads and changes them. docs/compliance/README.md,
 * "Subprocessors".
 */

export const SUBPROCESSOR_ROLES = ['ai', 'auth', 'billing', 'cdn', 'email', 'infra', 'observability', 'other', 'storage'] as const;
export type SubprocessorRole = (typeof SUBPROCESSOR_ROLES)[number];
export const SUBPROCESSOR_ACTIONS = ['archive', 'review'] as const;
export type SubprocessorAction = (typeof SUBPROCESSOR_ACTIONS)[number];

/**
 * The registry holds at most this many rows, archived ones included (409 `limit-reached` beyond),
 * so the list, which has no paging, always answers every row.
 */
export const SUBPROCESSORS_MAX = 1000;
export const NAME_MAX = 200;
export const REGION_MAX = 200;
export const DATA_ACCESS_MAX = 2000;
export const NOTES_MAX = 4000;
export const URL_MAX = 2048;

export const AUDIT_VERBS = {
  upsert: 'compliance.subprocessor.upsert',
  review: 'compliance.subprocessor.review',
  archive: 'compliance.subprocessor.archive',
} as const;

export interface SubprocessorView {
  id: string;
  name: string;
  role: SubprocessorRole;
  dataAccess: string;
  region: string;
  notes: string;
  websiteUrl: string | null;
  contractUrl: string | null;
  lastReviewedAt: string | null;
  reviewerOperatorId: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The body of `POST {v1}/compliance/subprocessors` (the endpoint's schema has checked types and lengths). */
export interface UpsertInput {
  name: string;
  role: SubprocessorRole;
  dataAccess?: string | undefined;
  region?: string | undefined;
  notes?: string | undefined;
  websiteUrl?: string | null | undefined;
  contractUrl?: string | null | undefined;
  markReviewed?: boolean | undefined;
}

/** An upsert's fields once checked: trimmed; `undefined` where the body left a field out (an existing row keeps its value). */
export interface CheckedUpsert {
  name: string;
  role: SubprocessorRole;
  dataAccess: string | undefined;
  region: string | undefined;
  notes: string | undefined;
  websiteUrl: string | null | undefined;
  contractUrl: string | null | undefined;
  markReviewed: boolean;
}

export interface ReviewState {
  inUse: number;
  unreviewedCount: number;
  unreviewed: { name: string; lastReviewedAt: string | null }[];
}

const DAY_MS = 86_400_000;
const iso = (d: Date | null) => (d === null ? null : d.toISOString());
const sameTime = (a: Date | null, b: Date | null) => (a === null || b === null ? a === b : a.getTime() === b.getTime());
// Control characters (C0, DEL, C1): a name is one line of plain text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function viewOf(row: repo.SubprocessorRow): SubprocessorView {
  return {
    id: row.id,
    name: row.name,
    role: row.role as SubprocessorRole,
    dataAccess: row.dataAccess,
    region: row.region,
    notes: row.notes,
    websiteUrl: row.websiteUrl,
    contractUrl: row.contractUrl,
    lastReviewedAt: iso(row.lastReviewedAt),
    reviewerOperatorId: row.reviewerOperatorId,
    archivedAt: iso(row.archivedAt),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * A link of a subprocessor (its site, its contract): trimmed; `null` or empty clears it. Otherwise
 * an absolute http or https URL of at most URL_MAX characters with a host and no user name or
 * password (a link is shown to operators and goes into evidence bundles; it carries no secret).
 */
export function checkUrl(value: string | null | undefined, field: string): string | null | undefined {
  if (value === undefined || value === null) return value;
  const text = value.trim();
  if (text === '') return null;
  const refuse = (why: string) => badRequest('invalid-body', `${field} ${why}.`, { field });
  if (text.length > URL_MAX) throw refuse(`is longer than ${URL_MAX} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('must be an http or https URL');
  if (url.hostname === '') throw refuse('names no host');
  if (url.username !== '' || url.password !== '') throw refuse('must not carry a user name or password');
  return text;
}

/** The name rule: trimmed, 1 to NAME_MAX characters, one line. */
export function checkName(value: string): string {
  const name = value.trim();
  if (name === '') throw badRequest('invalid-body', 'body.name must not be empty or blank.', { field: 'body.name' });
  if (name.length > NAME_MAX) throw badRequest('invalid-body', `body.name is longer than ${NAME_MAX} characters.`, { field: 'body.name' });
  if (CONTROL.test(name)) throw badRequest('invalid-body', 'body.name must not hold control characters (line breaks, tabs).', { field: 'body.name' });
  return name;
}

export function checkUpsert(input: UpsertInput): CheckedUpsert {
  return {
    name: checkName(input.name),
    role: input.role,
    dataAccess: input.dataAccess?.trim(),
    region: input.region?.trim(),
    notes: input.notes?.trim(),
    websiteUrl: checkUrl(input.websiteUrl, 'body.websiteUrl'),
    contractUrl: checkUrl(input.contractUrl, 'body.contractUrl'),
    markReviewed: input.markReviewed === true,
  };
}

/** A new row from a checked upsert: fields left out are empty text or null. */
export function createdRow(input: CheckedUpsert, id: string, now: Date, callerUserId: string): repo.SubprocessorRow {
  return {
    id,
    name: input.name,
    role: input.role,
    dataAccess: input.dataAccess ?? '',
    region: input.region ?? '',
    notes: input.notes ?? '',
    websiteUrl: input.websiteUrl ?? null,
    contractUrl: input.contractUrl ?? null,
    lastReviewedAt: input.markReviewed ? now : null,
    reviewerOperatorId: input.markReviewed ? callerUserId : null,
    archivedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * An upsert applied to the row of the same name: the fields given replace the stored ones (the name
 * takes the spelling given), those left out stay; an archived row is brought back into use;
 * `markReviewed` stamps the review. Null when nothing would change (no write, no audit row).
 */
export function upsertedRow(before: repo.SubprocessorRow, input: CheckedUpsert, now: Date, callerUserId: string): repo.SubprocessorRow | null {
  const after: repo.SubprocessorRow = {
    ...before,
    name: input.name,
    role: input.role,
    dataAccess: input.dataAccess ?? before.dataAccess,
    region: input.region ?? before.region,
    notes: input.notes ?? before.notes,
    websiteUrl: input.websiteUrl === undefined ? before.websiteUrl : input.websiteUrl,
    contractUrl: input.contractUrl === undefined ? before.contractUrl : input.contractUrl,
    lastReviewedAt: input.markReviewed ? now : before.lastReviewedAt,
    reviewerOperatorId: input.markReviewed ? callerUserId : before.reviewerOperatorId,
    archivedAt: null,
  };
  const changed =
    (['name', 'role', 'dataAccess', 'region', 'notes', 'websiteUrl', 'contractUrl', 'reviewerOperatorId'] as const).some((k) => after[k] !== before[k]) ||
    !sameTime(after.lastReviewedAt, before.lastReviewedAt) ||
    !sameTime(after.archivedAt, before.archivedAt);
  return changed ? { ...after, updatedAt: now } : null;
}

/**
 * An action applied to a row (the state table): `review` stamps lastReviewedAt and the reviewer and
 * leaves the row in use (an archived one is brought back); `archive` stamps archivedAt. Null when
 * nothing changes: archiving an archived row keeps its first archivedAt.
 */
export function actedRow(before: repo.SubprocessorRow, action: SubprocessorAction, now: Date, callerUserId: string): repo.SubprocessorRow | null {
  if (action === 'archive') return before.archivedAt === null ? { ...before, archivedAt: now, updatedAt: now } : null;
  return { ...before, lastReviewedAt: now, reviewerOperatorId: callerUserId, archivedAt: null, updatedAt: now };
}

/** The instant before which a review is too old: `maxAgeDays` whole days before `now`. */
export const reviewCutoff = (now: Date, maxAgeDays: number) => new Date(now.getTime() - maxAgeDays * DAY_MS);

const patchOf = ({ id: _id, createdAt: _createdAt, ...patch }: repo.SubprocessorRow): repo.SubprocessorPatch => patch;

export function createSubprocessorService({ db, clock, audit }: { db: Db; clock: Clock; audit: AuditLog }) {
  const target = (id: string) => `compliance-subprocessor:${id}`;
  const record = (tx: Db, ctx: CallContext, verb: string, before: repo.SubprocessorRow | null, after: repo.SubprocessorRow) =>
    audit.record(tx, {
      verb,
      target: target(after.id),
      surface: 'api',
      actor: actorOf(ctx.principal),
      before: before === null ? null : viewOf(before),
      after: viewOf(after),
      requestId: ctx.requestId,
    });

  return {
    /** `GET {v1}/compliance/subprocessors`: by name; archived rows only with `includeArchived`. */
    async list(query: { includeArchived?: '0' | '1' | undefined }): Promise<{ rows: SubprocessorView[] }> {
      const rows = await repo.list(db, { includeArchived: query.includeArchived === '1', limit: SUBPROCESSORS_MAX });
      return { rows: rows.map(viewOf) };
    },

    /**
     * `POST {v1}/compliance/subprocessors`: creates the row of this name or changes it (names are
     * trimmed and compare ignoring case), audited as `compliance.subprocessor.upsert` with before
     * and after; a call that changes nothing writes nothing.
     */
    async upsert(ctx: CallContext, body: UpsertInput): Promise<{ ok: true; row: SubprocessorView }> {
      const input = checkUpsert(body);
      const now = clock.now();
      const row = await withTransaction(db, async (tx) => {
        await repo.lockUpserts(tx);
        let before = await repo.lockByName(tx, input.name);
        if (before === null) {
          if ((await repo.countAll(tx)) >= SUBPROCESSORS_MAX) {
            throw new ServiceError(409, 'limit-reached', `The registry holds at most ${SUBPROCESSORS_MAX} subprocessors, archived ones included; change an existing one instead.`);
          }
          const created = createdRow(input, randomUUID(), now, ctx.principal.userId);
          if (await repo.insertIfAbsent(tx, created)) {
            await record(tx, ctx, AUDIT_VERBS.upsert, null, created);
            return created;
          }
          // The exact name was inserted meanwhile by a writer that did not take the upsert lock: change that row.
          before = await repo.lockByName(tx, input.name);
          if (before === null) throw new Error(`subprocessor ${JSON.stringify(input.name)} neither inserted nor found`);
        }
        const after = upsertedRow(before, input, now, ctx.principal.userId);
        if (after === null) return before;
        await repo.update(tx, before.id, patchOf(after));
        await record(tx, ctx, AUDIT_VERBS.upsert, before, after);
        return after;
      });
      return { ok: true as const, row: viewOf(row) };
    },

    /**
     * `POST {v1}/compliance/subprocessors/{id}`: `review` or `archive`, audited as
     * `compliance.subprocessor.review` / `.archive`; archiving an archived row answers it unchanged
     * and writes nothing. 404 for an unknown id.
     */
    async act(ctx: CallContext, id: string, action: SubprocessorAction): Promise<{ ok: true; row: SubprocessorView }> {
      const row = await withTransaction(db, async (tx) => {
        const before = await repo.lockById(tx, id);
        assertThat(before, notFound(`There is no subprocessor ${id}.`));
        const after = actedRow(before, action, clock.now(), ctx.principal.userId);
        if (after === null) return before;
        await repo.update(tx, id, patchOf(after));
        await record(tx, ctx, AUDIT_VERBS[action], before, after);
        return after;
      });
      return { ok: true as const, row: viewOf(row) };
    },

    /**
     * For the compliance predicate `subprocessors-reviewed`: rows in use (not archived), and those
     * of them never reviewed or last reviewed more than `maxAgeDays` days before `now` (counted
     * exactly), the first `listedMax` of them listed never-reviewed first, then oldest review first.
     * Counted in SQL; the count and the list are two statements, so a change committed between them
     * may show in one and not the other.
     */
    async reviewState(now: Date, maxAgeDays: number, listedMax: number): Promise<ReviewState> {
      if (!(Number.isInteger(maxAgeDays) && maxAgeDays >= 0)) throw new Error(`reviewState: maxAgeDays must be a whole number ≥ 0 (got ${maxAgeDays})`);
      if (!(Number.isInteger(listedMax) && listedMax >= 0)) throw new Error(`reviewState: listedMax must be a whole number ≥ 0 (got ${listedMax})`);
      const cutoff = reviewCutoff(now, maxAgeDays);
      const counts = await repo.countReviewState(db, cutoff);
      const listed = await repo.listUnreviewed(db, cutoff, listedMax);
      return {
        inUse: counts.inUse,
        unreviewedCount: counts.unreviewed,
        unreviewed: listed.map((r) => ({ name: r.name, lastReviewedAt: iso(r.lastReviewedAt) })),
      };
    },
  };
}

export type SubprocessorService = ReturnType<typeof createSubprocessorService>;
