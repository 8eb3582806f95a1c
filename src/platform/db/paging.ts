import { and, eq, lt, or, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { badRequest } from '../errors.ts';

/**
 * Newest-first paging by (time, id). A page's `nextCursor` is `<ISO time>|<id>` of its last row, so
 * rows that share a time (written by one request) are neither skipped nor repeated; a bare ISO time
 * (the spec's form) is accepted too and means "strictly older than this".
 */

export interface TimeCursor {
  at: Date;
  /** null: a bare time cursor; every row at `at` is passed too. */
  id: string | null;
}

/** True for a UUID in its text form: ids from a path or cursor are checked before they reach a uuid column (which would refuse them with an error). */
export const isUuid = (text: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text);

export function decodeTimeCursor(cursor: string | undefined): TimeCursor | null {
  if (cursor === undefined) return null;
  const [time, id, ...rest] = cursor.split('|');
  const at = new Date(time ?? '');
  if (rest.length > 0 || Number.isNaN(at.getTime()) || (id !== undefined && !isUuid(id))) {
    throw badRequest('invalid-query', 'query.cursor must be the nextCursor of an earlier page, or an ISO 8601 time.', { field: 'query.cursor' });
  }
  return { at, id: id ?? null };
}

/** The rows after `cursor` in (time desc, id desc) order. */
export function olderThan(atColumn: AnyPgColumn, idColumn: AnyPgColumn, cursor: TimeCursor): SQL {
  return cursor.id === null ? lt(atColumn, cursor.at) : or(lt(atColumn, cursor.at), and(eq(atColumn, cursor.at), lt(idColumn, cursor.id)))!;
}

/** A page from `limit + 1` rows fetched: the first `limit`, and the cursor past them when there were more. */
export function pageOf<Row extends { id: string }>(rows: readonly Row[], limit: number, timeOf: (row: Row) => Date): { page: Row[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? `${timeOf(last).toISOString()}|${last.id}` : null };
}

/**
 * Newest-first paging by (time, seq) for tables with an insertion-order `seq` (a bigserial): the
 * same contract as the (time, id) cursor above, with the tie-break in insertion order rather than
 * id order, so rows written in one clock tick page newest first. `nextCursor` is `<ISO time>|<seq>`;
 * a bare ISO time is accepted too and means "strictly older than this".
 */
export interface SeqCursor {
  at: Date;
  /** null: a bare time cursor; every row at `at` is passed too. */
  seq: number | null;
}

export function decodeSeqCursor(cursor: string | undefined): SeqCursor | null {
  if (cursor === undefined) return null;
  const [time, seq, ...rest] = cursor.split('|');
  const at = new Date(time ?? '');
  if (rest.length > 0 || Number.isNaN(at.getTime()) || (seq !== undefined && !/^[0-9]{1,15}$/.test(seq))) {
    throw badRequest('invalid-query', 'query.cursor must be the nextCursor of an earlier page, or an ISO 8601 time.', { field: 'query.cursor' });
  }
  return { at, seq: seq === undefined ? null : Number(seq) };
}

/** The rows after `cursor` in (time desc, seq desc) order. */
export function olderThanSeq(atColumn: AnyPgColumn, seqColumn: AnyPgColumn, cursor: SeqCursor): SQL {
  return cursor.seq === null ? lt(atColumn, cursor.at) : or(lt(atColumn, cursor.at), and(eq(atColumn, cursor.at), lt(seqColumn, cursor.seq)))!;
}

/** A page from `limit + 1` rows fetched in (time desc, seq desc) order, and the cursor past it when there were more. */
export function pageOfSeq<Row extends { seq: number }>(rows: readonly Row[], limit: number, timeOf: (row: Row) => Date): { page: Row[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { page, nextCursor: rows.length > limit && last ? `${timeOf(last).toISOString()}|${last.seq}` : null };
}
