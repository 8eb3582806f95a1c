import { type SQL, sql } from 'drizzle-orm';

/**
 * SQL for UTC calendar days (src/platform/days.ts is their TypeScript side): the reads that group
 * or bound rows by day, whatever the session's time zone; and the "changed since" condition of the
 * incremental reads (analytics rollup sources).
 */

/** The UTC day of a timestamptz column, as `YYYY-MM-DD` text. */
export const utcDayText = (column: SQL) => sql`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`;

/** The first instant of a UTC day given as `YYYY-MM-DD`, as a timestamptz parameter. */
export const utcDayStart = (day: string) => sql`${`${day}T00:00:00.000Z`}::timestamptz`;

/** `column > since`; TRUE when `since` is null (everything: a first run). */
export const changedAfter = (column: SQL, since: Date | null) => (since === null ? sql`TRUE` : sql`${column} > ${since.toISOString()}::timestamptz`);
