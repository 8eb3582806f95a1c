import { type SQL, sql } from 'drizzle-orm';
import { asDate } from './client.ts';

/**
 * Reading an append-only table in (time, id) order, a batch at a time, from where the last read
 * stopped. A reader keeps a watermark per stream and asks for the rows after it; a replay asks
 * for the rows at or before the watermark a past read ended on. The source domain writes the
 * query (its table, its columns); these helpers only give the comparison.
 */

/** A stream position: the (time, id) of the last row read; the time as PostgreSQL's text, to keep its microseconds. */
export interface Watermark {
  at: string;
  id: string;
}

/** A row read from a stream, with the position it leaves the reader at. */
export interface Positioned<T> {
  row: T;
  position: Watermark;
  /** The position's time as an instant (to the millisecond). */
  time: Date;
}

/** A row read with its position: `at` the time column as text, `time` the same column as read. */
export const positioned = <T>(row: T, at: unknown, id: unknown, time: unknown): Positioned<T> => ({
  row,
  position: { at: String(at), id: String(id) },
  time: asDate(time),
});

/** Rows after a watermark (every row when there is none). `id` must be a uuid column. */
export const keysetAfter = (time: SQL, id: SQL, watermark: Watermark | null): SQL =>
  watermark === null ? sql`true` : sql`(${time}, ${id}) > (${watermark.at}::timestamptz, ${watermark.id}::uuid)`;

/** Rows at or before a watermark: what a read that ended there had seen (none when there is no watermark). */
export const keysetUpTo = (time: SQL, id: SQL, watermark: Watermark | null): SQL =>
  watermark === null ? sql`false` : sql`(${time}, ${id}) <= (${watermark.at}::timestamptz, ${watermark.id}::uuid)`;
