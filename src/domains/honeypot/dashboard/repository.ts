import { type SQL, sql } from 'drizzle-orm';
import { asDate, asDateOrNull, type Db, rowsOf } from '../../../platform/db/client.ts';
import { executePrepared } from '../../../platform/db/prepared.ts';
import {
  MAX_TS_AHEAD_MS,
  NO_ASN,
  NO_JA4,
  type Window,
  WINDOWS,
  type WindowStarts,
} from './rollups.ts';
import { VERIFIED_CLASSES } from '../vendors/classify.ts';

/**
 * The SQL of the honeypot rollups and of the reads built on them (dashboard, clusters, fleet,
 * heartbeat, db-health); rules live in service.ts, the batch aggregation in rollups.ts. The
 * rebuild and advance statements below restate rollups.ts in SQL: `at` is least(ts, received_at),
 * hour buckets are date_trunc('hour', at, 'UTC'), a dimension value's key is the first 16 bytes of
 * its SHA-256. Timestamps go in as ISO text and come back as Date on both drivers.
 */

const toNumber = (value: unknown): number => Number(value ?? 0);
const at = (date: Date) => sql`${date.toISOString()}::timestamptz`;
const tenantIs = (column: SQL, tenantId: string | null) => (tenantId === null ? sql`TRUE` : sql`${column} = ${tenantId}::uuid`);

const COLUMN: Record<Window, SQL> = {
  '24h': sql.raw('events_24h'),
  '7d': sql.raw('events_7d'),
  '30d': sql.raw('events_30d'),
};
const VERIFIED = sql.join(
  VERIFIED_CLASSES.map((c) => sql`${c}`),
  sql`, `,
);
/** The time an event counts at (rollups.ts `rollupTime`). */
const AT = sql`least(e.ts, e.received_at)`;
const KEY_OF = (value: SQL) => sql`encode(substring(sha256(convert_to(${value}, 'UTF8')) from 1 for 16), 'hex')::uuid`;
/**
 * Merges first and last seen and the sample UA of a member into row `r` (an upsert's `excluded`
 * into the stored row): earliest first, latest last, and the UA of the latest event (on a tie of
 * times the greatest UA in byte order), so merging in any order gives one answer.
 */
const MERGE_SEEN = sql`first_seen = least(r.first_seen, excluded.first_seen),
        last_seen = greatest(r.last_seen, excluded.last_seen),
        ua_sample = CASE WHEN excluded.last_seen > r.last_seen
            OR (excluded.last_seen = r.last_seen AND excluded.ua_sample COLLATE "C" > r.ua_sample COLLATE "C")
          THEN excluded.ua_sample ELSE r.ua_sample END`;
/** First and last rollup time and latest UA of the events `ev` (rows with `at`) of one group. */
const SEEN_OF_GROUP = sql`min(ev.at) AS first_seen, max(ev.at) AS last_seen,
  (array_agg(ev.ua_raw ORDER BY ev.at DESC, ev.ua_raw COLLATE "C" DESC))[1] AS ua_sample`;

// State

function startsOf(row: Record<string, unknown>): WindowStarts {
  return { '24h': asDate(row.from24h), '7d': asDate(row.from7d), '30d': asDate(row.from30d) };
}

export async function readState(db: Db): Promise<(WindowStarts & { advancedAt: Date }) | null> {
  const [row] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`SELECT from_24h AS "from24h", from_7d AS "from7d", from_30d AS "from30d", advanced_at AS "advancedAt"
      FROM honeypot_rollup_state WHERE id = 1`),
  );
  return row ? { ...startsOf(row), advancedAt: asDate(row.advancedAt) } : null;
}

/** Locks the state row against ingest and other advances; null when it does not exist yet. */
export async function lockWindowStarts(tx: Db): Promise<WindowStarts | null> {
  const [row] = rowsOf<Record<string, unknown>>(
    await tx.execute(sql`SELECT from_24h AS "from24h", from_7d AS "from7d", from_30d AS "from30d"
      FROM honeypot_rollup_state WHERE id = 1 FOR UPDATE`),
  );
  return row ? startsOf(row) : null;
}

/** Creates the state row unless it exists; true when this call created it (the caller then rebuilds). */
export async function createState(tx: Db, starts: WindowStarts, now: Date): Promise<boolean> {
  const inserted = rowsOf(
    await tx.execute(sql`INSERT INTO honeypot_rollup_state (id, from_24h, from_7d, from_30d, advanced_at)
      VALUES (1, ${at(starts['24h'])}, ${at(starts['7d'])}, ${at(starts['30d'])}, ${at(now)})
      ON CONFLICT (id) DO NOTHING RETURNING id`),
  );
  return inserted.length === 1;
}

export async function setState(tx: Db, starts: WindowStarts, now: Date): Promise<void> {
  await tx.execute(sql`UPDATE honeypot_rollup_state SET from_24h = ${at(starts['24h'])}, from_7d = ${at(starts['7d'])},
    from_30d = ${at(starts['30d'])}, advanced_at = ${at(now)} WHERE id = 1`);
}

// Incremental maintenance: the pending rows ingest writes

/** Pending rows one apply statement takes at most; `applyPending` repeats until none is left. */
export const APPLY_GROUPS_PER_STATEMENT = 500;

/**
 * Adds the events of pending rows (schema.ts `honeypotRollupPending`) to the four rollup tables and
 * the fingerprint counters, and deletes those rows, in one statement: the counters and the queue
 * change together or not at all. Returns how many pending rows it took (0: nothing was pending).
 *
 * Lock order: the state row is share-locked (the EXISTS below is evaluated once, before the DELETE
 * locks its first row), so the advance and the rebuild (FOR UPDATE, then the pending rows) can
 * never wait for an apply that waits for them. Two applies delete disjoint rows: a row another
 * apply deleted first is skipped. Counter rows are upserted in key order, so concurrent applies
 * cannot deadlock. The rollup definitions are the rebuild's own (`dimCounts`, `clusterCounts`,
 * `seenOf`, the hourly statement), so applying and rebuilding give the same counts and the same
 * member histories (a clusters row merged with its seen row).
 */
export async function applyPending(db: Db): Promise<number> {
  const [row] = rowsOf<{ taken: unknown }>(await executePrepared(db, 'honeypot_rollup_apply', APPLY_PENDING));
  return toNumber(row?.taken);
}

// The applier's text never changes: built once, prepared once per connection.
const APPLY_PENDING = sql`WITH rollup_state AS (SELECT from_24h, from_7d, from_30d FROM honeypot_rollup_state WHERE id = 1 FOR SHARE),
    taken AS (
      DELETE FROM honeypot_rollup_pending WHERE EXISTS (SELECT 1 FROM rollup_state)
        AND id IN (SELECT id FROM honeypot_rollup_pending ORDER BY id LIMIT ${APPLY_GROUPS_PER_STATEMENT})
      RETURNING event_ids, fingerprints
    ),
    pending_events AS MATERIALIZED (
      SELECT e.tenant_id, e.path, e.ua_raw, e.country, e.asn, e.ua_class, e.ja4, e.fingerprint_id, e.ts, ${AT} AS at,
        CASE WHEN ${AT} >= s.from_24h THEN 1 ELSE 0 END AS m24, CASE WHEN ${AT} >= s.from_7d THEN 1 ELSE 0 END AS m7,
        CASE WHEN ${AT} >= s.from_30d THEN 1 ELSE 0 END AS m30
      FROM (SELECT DISTINCT unnest(event_ids) AS id FROM taken) p JOIN honeypot_events e ON e.id = p.id CROSS JOIN rollup_state s
    ),
    rollup_hourly AS (
      INSERT INTO honeypot_rollup_hourly AS r (hour, tenant_id, events)
      SELECT date_trunc('hour', at, 'UTC'), tenant_id, count(*) FROM pending_events GROUP BY 1, 2 ORDER BY 1, 2
      ON CONFLICT (hour, tenant_id) DO UPDATE SET events = r.events + excluded.events
    ),
    rollup_dims AS (
      INSERT INTO honeypot_rollup_dims AS r (tenant_id, dim, key, value, events_24h, events_7d, events_30d)
      SELECT * FROM (${dimCounts(sql`SELECT * FROM pending_events WHERE m30 = 1`)}) a ORDER BY tenant_id, dim, key
      ON CONFLICT (tenant_id, dim, key) DO UPDATE SET events_24h = r.events_24h + excluded.events_24h,
        events_7d = r.events_7d + excluded.events_7d, events_30d = r.events_30d + excluded.events_30d
    ),
    -- A member's counts and its first/last seen in one upsert: seen had a row for each clusters
    -- row, and upserting both cost about a quarter of the applier (docs/performance.md).
    rollup_clusters AS (
      INSERT INTO honeypot_rollup_clusters AS r (tenant_id, cluster_key, fingerprint_id, ua_class, asn, ja4, events_24h, events_7d, events_30d,
        first_seen, last_seen, ua_sample)
      SELECT * FROM (${clusterCounts(sql`SELECT * FROM pending_events WHERE m30 = 1`, { seen: true })}) a
      ORDER BY tenant_id, cluster_key, fingerprint_id, ua_class, asn, ja4
      ON CONFLICT (tenant_id, cluster_key, fingerprint_id, ua_class, asn, ja4) DO UPDATE SET events_24h = r.events_24h + excluded.events_24h,
        events_7d = r.events_7d + excluded.events_7d, events_30d = r.events_30d + excluded.events_30d, ${MERGE_SEEN}
    ),
    -- Events already older than the 30-day window have no clusters row to go to: seen keeps their times.
    rollup_seen AS (
      INSERT INTO honeypot_rollup_seen AS r (tenant_id, fingerprint_id, ua_class, asn, ja4, first_seen, last_seen, ua_sample)
      ${seenOf(sql`(SELECT * FROM pending_events WHERE m30 = 0)`)} ORDER BY 1, 2, 3, 4, 5
      ON CONFLICT (tenant_id, fingerprint_id, ua_class, asn, ja4) DO UPDATE SET ${MERGE_SEEN}
    ),
    normalised AS (
      SELECT DISTINCT ON (1, 2) (f ->> 0)::uuid AS tenant_id, f ->> 1 AS fingerprint_id, f ->> 2 AS ua_normalized
      FROM taken, jsonb_array_elements(taken.fingerprints) AS f
    ),
    fingerprints AS (
      INSERT INTO honeypot_fingerprints AS f (tenant_id, fingerprint_id, ja4, ua_normalized, ua_sample, last_ua_class, asn, first_seen, last_seen,
        event_count, liar_count)
      SELECT ev.tenant_id, ev.fingerprint_id, min(ev.ja4), coalesce(min(n.ua_normalized), ''),
        (array_agg(ev.ua_raw ORDER BY ev.ts DESC, ev.ua_raw COLLATE "C" DESC))[1],
        (array_agg(ev.ua_class ORDER BY ev.ts DESC, ev.ua_raw COLLATE "C" DESC))[1],
        (array_agg(ev.asn ORDER BY ev.ts DESC) FILTER (WHERE ev.asn IS NOT NULL))[1],
        min(ev.ts), max(ev.ts), count(*), count(*) FILTER (WHERE ev.ua_class = 'LIAR')
      FROM pending_events ev LEFT JOIN normalised n ON n.tenant_id = ev.tenant_id AND n.fingerprint_id = ev.fingerprint_id
      GROUP BY ev.tenant_id, ev.fingerprint_id ORDER BY ev.tenant_id, ev.fingerprint_id
      ON CONFLICT (tenant_id, fingerprint_id) DO UPDATE SET
        event_count = f.event_count + excluded.event_count,
        liar_count = f.liar_count + excluded.liar_count,
        first_seen = least(f.first_seen, excluded.first_seen),
        last_seen = greatest(f.last_seen, excluded.last_seen),
        last_ua_class = CASE WHEN excluded.last_seen >= f.last_seen THEN excluded.last_ua_class ELSE f.last_ua_class END,
        ua_sample = CASE WHEN excluded.last_seen >= f.last_seen THEN excluded.ua_sample ELSE f.ua_sample END,
        asn = coalesce(excluded.asn, f.asn)
    )
    SELECT count(*) AS taken FROM taken`;

/**
 * True when some pending row exists. Counter reads ask this first: the applier is one large
 * statement, and PGlite (which does not keep prepared plans) would plan it on every read.
 */
export async function hasPending(db: Db): Promise<boolean> {
  const [row] = rowsOf<{ pending: boolean }>(await executePrepared(db, 'honeypot_rollup_has_pending', HAS_PENDING));
  return row?.pending === true;
}
const HAS_PENDING = sql`SELECT EXISTS (SELECT 1 FROM honeypot_rollup_pending) AS pending`;

/**
 * Seconds since the oldest pending row was committed (0 when none is pending): how far the
 * rollups are behind the events. Measured on the database's clock, which wrote `created_at`; the
 * oldest row is the first by id (the primary key), so this reads one row.
 */
export async function pendingLagSec(db: Db): Promise<number> {
  const [row] = rowsOf<{ lag: number | string | null }>(
    await db.execute(sql`SELECT GREATEST(0, EXTRACT(EPOCH FROM now() - created_at)) AS lag FROM honeypot_rollup_pending ORDER BY id LIMIT 1`),
  );
  return row?.lag == null ? 0 : Number(row.lag);
}

// Re-judged events: their old counts out, their new ones in

/**
 * The advisory lock that keeps a re-judge and the applier apart: each apply holds it shared
 * before its statement starts (so its snapshot is taken after any re-judge it waited for
 * committed), a re-judge holds it alone. Without it an apply whose snapshot predates a
 * re-judge's commit would add a pending event with its old verdict.
 */
const ROLLUP_LOCK = 0x686f6e6579; // "honey"

/** Takes the rollup lock shared for the rest of the transaction (the applier, before it applies). */
export async function lockForApply(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock_shared(${ROLLUP_LOCK})`);
}

/**
 * Takes the state row shared (as ingest does), then the rollup lock alone, for the rest of the
 * transaction: no apply runs and none starts until it ends. The state row comes first, in the
 * order the window advance and the rebuild take them, so they cannot wait on each other.
 */
export async function lockForRejudge(tx: Db): Promise<void> {
  await tx.execute(sql`SELECT 1 FROM honeypot_rollup_state WHERE id = 1 FOR SHARE`);
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${ROLLUP_LOCK})`);
}

/** Which of these events still wait in a pending row (not yet in the rollups). */
export async function pendingAmong(tx: Db, eventIds: readonly string[]): Promise<Set<string>> {
  if (eventIds.length === 0) return new Set();
  const rows = rowsOf<{ id: string }>(
    await tx.execute(sql`SELECT DISTINCT p.id FROM (SELECT unnest(event_ids) AS id FROM honeypot_rollup_pending) p
      WHERE p.id = ANY(${toUuidArray(eventIds)})`),
  );
  return new Set(rows.map((r) => String(r.id)));
}

const toUuidArray = (ids: readonly string[]) => sql`${`{${ids.join(',')}}`}::uuid[]`;

/**
 * Takes events that are in the rollups back out of them, as they are stored now: the hourly
 * counts, the window counts of each dimension and cluster member (flagged by the windows in force,
 * as the applier flags them), and the fingerprint counters. Rows left with nothing are deleted
 * (a cluster member's times kept in seen). First and last seen are left as they are: they cannot
 * be subtracted, and the same events come back with their new verdict through a pending row. The
 * caller holds `lockForRejudge`.
 */
export async function subtractEvents(tx: Db, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  const ids = toUuidArray(eventIds);
  const ev = sql`SELECT e.tenant_id, e.path, e.ua_raw, e.country, e.asn, e.ua_class, e.ja4, e.fingerprint_id, ${AT} AS at,
      CASE WHEN ${AT} >= s.from_24h THEN 1 ELSE 0 END AS m24, CASE WHEN ${AT} >= s.from_7d THEN 1 ELSE 0 END AS m7, 1 AS m30
    FROM honeypot_events e CROSS JOIN (SELECT from_24h, from_7d, from_30d FROM honeypot_rollup_state WHERE id = 1) s
    WHERE e.id = ANY(${ids}) AND ${AT} >= s.from_30d`;
  await tx.execute(sql`UPDATE honeypot_rollup_hourly r SET events = r.events - a.n
    FROM (SELECT date_trunc('hour', ${AT}, 'UTC') AS hour, e.tenant_id, count(*) AS n FROM honeypot_events e WHERE e.id = ANY(${ids}) GROUP BY 1, 2) a
    WHERE r.hour = a.hour AND r.tenant_id = a.tenant_id`);
  await subtractWindowCounts(tx, ev);
  await tx.execute(sql`UPDATE honeypot_fingerprints f SET event_count = f.event_count - a.n, liar_count = f.liar_count - a.liars
    FROM (SELECT tenant_id, fingerprint_id, count(*) AS n, count(*) FILTER (WHERE ua_class = 'LIAR') AS liars
      FROM honeypot_events WHERE id = ANY(${ids}) GROUP BY 1, 2) a
    WHERE f.tenant_id = a.tenant_id AND f.fingerprint_id = a.fingerprint_id`);
  const tenants = sql`(SELECT DISTINCT tenant_id FROM honeypot_events WHERE id = ANY(${ids}))`;
  await tx.execute(sql`DELETE FROM honeypot_rollup_dims WHERE tenant_id IN ${tenants} AND events_30d <= 0`);
  await tx.execute(removeMembers(sql`tenant_id IN ${tenants} AND events_30d <= 0`));
  await tx.execute(sql`DELETE FROM honeypot_fingerprints WHERE tenant_id IN ${tenants} AND event_count <= 0`);
}

/**
 * Queues re-judged events for the rollups: those taken out (`readd`) in a new pending row, and the
 * fingerprints they now have (`[tenantId, fingerprintId, uaNormalized]`) added to the pending rows
 * of the others (`waiting`), so the applier can name a fingerprint it has not seen.
 */
export async function queueRejudged(tx: Db, readd: readonly string[], waiting: readonly string[], fingerprints: [string, string, string][]): Promise<void> {
  const names = JSON.stringify(fingerprints);
  if (readd.length > 0) {
    await tx.execute(sql`INSERT INTO honeypot_rollup_pending (event_ids, fingerprints) VALUES (${toUuidArray(readd)}, ${names}::jsonb)`);
  }
  if (waiting.length > 0) {
    await tx.execute(sql`UPDATE honeypot_rollup_pending SET fingerprints = fingerprints || ${names}::jsonb
      WHERE event_ids && ${toUuidArray(waiting)}`);
  }
}

// Rebuild and window advance: the same rollups, computed from the events in SQL

/** A range of rollup times [from, to); `to` null = no end. */
interface Range {
  from: Date;
  to: Date | null;
}

/**
 * Events whose rollup time lies in `range`, with flags m24, m7, m30 saying which window columns
 * they count in. The `ts` bounds follow from at <= ts <= at + 5 minutes, so the scan runs on the
 * (tenant_id, ts) index.
 */
function eventsIn(range: Range, flags: { m24: SQL; m7: SQL; m30: SQL }): SQL {
  const upper = range.to === null ? sql`` : sql`AND e.ts < ${at(new Date(range.to.getTime() + MAX_TS_AHEAD_MS))} AND ${AT} < ${at(range.to)}`;
  return sql`SELECT e.tenant_id, e.path, e.ua_raw, e.country, e.asn, e.ua_class, e.ja4, e.fingerprint_id, ${AT} AS at,
      ${flags.m24} AS m24, ${flags.m7} AS m7, ${flags.m30} AS m30
    FROM honeypot_events e
    WHERE e.tenant_id IN (SELECT id FROM honeypot_tenants) AND e.ts >= ${at(range.from)} AND ${AT} >= ${at(range.from)} ${upper}`;
}

/** The events of a rebuild: every event inside the 30-day window, flagged per window. */
function eventsForRebuild(starts: WindowStarts): SQL {
  return eventsIn(
    { from: starts['30d'], to: null },
    {
      m24: sql`CASE WHEN ${AT} >= ${at(starts['24h'])} THEN 1 ELSE 0 END`,
      m7: sql`CASE WHEN ${AT} >= ${at(starts['7d'])} THEN 1 ELSE 0 END`,
      m30: sql`1`,
    },
  );
}

/** The events that leave each window when it moves from `from` to `to`, flagged for that window only. */
function eventsLeaving(from: WindowStarts, to: WindowStarts): SQL | null {
  const parts = WINDOWS.filter((w) => to[w] > from[w]).map((w) =>
    eventsIn(
      { from: from[w], to: to[w] },
      { m24: w === '24h' ? sql`1` : sql`0`, m7: w === '7d' ? sql`1` : sql`0`, m30: w === '30d' ? sql`1` : sql`0` },
    ),
  );
  return parts.length === 0 ? null : sql.join(parts, sql` UNION ALL `);
}

/** Window counts per (tenant, dim, value) of the events `ev` yields (rollups.ts dimValuesOf, in SQL). */
function dimCounts(ev: SQL): SQL {
  return sql`WITH ev AS MATERIALIZED (${ev}), dv AS (
      SELECT tenant_id, 'class' AS dim, ua_class AS value, m24, m7, m30 FROM ev
      UNION ALL SELECT tenant_id, 'attributed', CASE WHEN country IS NOT NULL OR asn IS NOT NULL THEN 'yes' ELSE 'no' END, m24, m7, m30 FROM ev
      UNION ALL SELECT tenant_id, 'path', path, m24, m7, m30 FROM ev
      UNION ALL SELECT tenant_id, 'ua', ua_raw, m24, m7, m30 FROM ev
      UNION ALL SELECT tenant_id, 'country', country, m24, m7, m30 FROM ev WHERE country IS NOT NULL
      UNION ALL SELECT tenant_id, 'verified-ua', ua_raw, m24, m7, m30 FROM ev WHERE ua_class IN (${VERIFIED})
    ), agg AS (
      SELECT tenant_id, dim, value, sum(m24)::bigint AS n24, sum(m7)::bigint AS n7, sum(m30)::bigint AS n30
      FROM dv GROUP BY tenant_id, dim, value
    )
    SELECT tenant_id, dim, ${KEY_OF(sql`value`)} AS key, value, n24, n7, n30 FROM agg`;
}

/**
 * Window counts per cluster member of the events `ev` yields (rollups.ts clusterKey, in SQL);
 * with `seen`, also their first and last rollup time and latest UA (`ev` rows then carry `at`).
 */
function clusterCounts(ev: SQL, options: { seen: boolean } = { seen: false }): SQL {
  const seen = options.seen ? sql`, first_seen, last_seen, ua_sample` : sql``;
  return sql`SELECT tenant_id, ${KEY_OF(sql`ja4 || '|' || ua_class || '|' || asn::text`)} AS cluster_key, fingerprint_id, ua_class, asn, ja4, n24, n7, n30${seen}
    FROM (
      SELECT tenant_id, fingerprint_id, ua_class, coalesce(asn, ${NO_ASN})::bigint AS asn, coalesce(ja4, ${NO_JA4}) AS ja4,
        sum(m24)::bigint AS n24, sum(m7)::bigint AS n7, sum(m30)::bigint AS n30${options.seen ? sql`, ${SEEN_OF_GROUP}` : sql``}
      FROM (${ev}) ev GROUP BY 1, 2, 3, 4, 5
    ) m`;
}

/** First and last rollup time and latest UA per cluster member of `ev` (rows with `at`), as the seen table holds them. */
function seenOf(ev: SQL): SQL {
  return sql`SELECT ev.tenant_id, ev.fingerprint_id, ev.ua_class, coalesce(ev.asn, ${NO_ASN})::bigint, coalesce(ev.ja4, ${NO_JA4}), ${SEEN_OF_GROUP}
    FROM ${ev} ev GROUP BY 1, 2, 3, 4, 5`;
}

/**
 * Deletes the cluster members `where` selects and merges their first/last seen and sample UA into
 * seen, in one statement, so no member's history is lost when its window counts reach zero. Rows
 * still holding the neutral values of migration 0030 (first after last) have nothing to add.
 */
function removeMembers(where: SQL): SQL {
  return sql`WITH gone AS (
      DELETE FROM honeypot_rollup_clusters WHERE ${where}
      RETURNING tenant_id, fingerprint_id, ua_class, asn, ja4, first_seen, last_seen, ua_sample
    )
    INSERT INTO honeypot_rollup_seen AS r (tenant_id, fingerprint_id, ua_class, asn, ja4, first_seen, last_seen, ua_sample)
    SELECT * FROM gone WHERE first_seen <= last_seen ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, fingerprint_id, ua_class, asn, ja4) DO UPDATE SET ${MERGE_SEEN}`;
}

/**
 * Empties the rollups and recomputes them from every stored event; the caller holds the state
 * lock and has applied the pending rows first (they also feed the fingerprints, which a rebuild
 * does not recompute).
 */
export async function rebuildRollups(tx: Db, starts: WindowStarts): Promise<void> {
  await tx.execute(sql`DELETE FROM honeypot_rollup_hourly`);
  await tx.execute(sql`DELETE FROM honeypot_rollup_dims`);
  await tx.execute(sql`DELETE FROM honeypot_rollup_clusters`);
  await tx.execute(sql`DELETE FROM honeypot_rollup_seen`);
  await tx.execute(sql`INSERT INTO honeypot_rollup_hourly (hour, tenant_id, events)
    SELECT date_trunc('hour', ${AT}, 'UTC'), e.tenant_id, count(*) FROM honeypot_events e GROUP BY 1, 2`);
  await tx.execute(sql`INSERT INTO honeypot_rollup_seen (tenant_id, fingerprint_id, ua_class, asn, ja4, first_seen, last_seen, ua_sample)
    ${seenOf(sql`(SELECT e.*, ${AT} AS at FROM honeypot_events e)`)}`);
  const ev = eventsForRebuild(starts);
  await tx.execute(sql`INSERT INTO honeypot_rollup_dims (tenant_id, dim, key, value, events_24h, events_7d, events_30d) ${dimCounts(ev)}`);
  await tx.execute(sql`INSERT INTO honeypot_rollup_clusters (tenant_id, cluster_key, fingerprint_id, ua_class, asn, ja4, events_24h, events_7d, events_30d,
      first_seen, last_seen, ua_sample)
    ${clusterCounts(ev, { seen: true })}`);
}

/** Subtracts the window counts of the events `ev` yields (flagged m24, m7, m30) from the dimension and cluster rollups. */
async function subtractWindowCounts(tx: Db, ev: SQL): Promise<void> {
  await tx.execute(sql`UPDATE honeypot_rollup_dims r SET events_24h = r.events_24h - a.n24, events_7d = r.events_7d - a.n7,
      events_30d = r.events_30d - a.n30
    FROM (${dimCounts(ev)}) a WHERE r.tenant_id = a.tenant_id AND r.dim = a.dim AND r.key = a.key`);
  await tx.execute(sql`UPDATE honeypot_rollup_clusters r SET events_24h = r.events_24h - a.n24, events_7d = r.events_7d - a.n7,
      events_30d = r.events_30d - a.n30
    FROM (${clusterCounts(ev)}) a
    WHERE r.tenant_id = a.tenant_id AND r.cluster_key = a.cluster_key AND r.fingerprint_id = a.fingerprint_id AND r.ua_class = a.ua_class
      AND r.asn = a.asn AND r.ja4 = a.ja4`);
}

/**
 * Moves the window columns from `from` to `to`: subtracts the events of the hours that left each
 * window, then deletes rows with nothing left in 30 days. The caller holds the state lock, so no
 * ingest is between reading the starts and committing.
 */
export async function subtractLeaving(tx: Db, from: WindowStarts, to: WindowStarts): Promise<void> {
  const ev = eventsLeaving(from, to);
  if (ev === null) return;
  await subtractWindowCounts(tx, ev);
  if (to['30d'] > from['30d']) {
    await tx.execute(sql`DELETE FROM honeypot_rollup_dims WHERE events_30d <= 0`);
    await tx.execute(removeMembers(sql`events_30d <= 0`));
  }
}

// Reads

export interface DimCount {
  dim: string;
  value: string;
  count: number;
}

export interface DashboardRows {
  /** Per dimension the `limit` values with most events (ties by value in byte order); every class and attribution value. */
  dims: DimCount[];
  uniqueFingerprints: number;
  /** Events per hour bucket from the window start on; buckets without events are absent. */
  hours: { hour: Date; events: number }[];
}

const ALL_VALUES = 1000;
const DIM_LIMITS = (limit: number) =>
  sql.raw(
    `(VALUES ('class', ${ALL_VALUES}), ('attributed', ${ALL_VALUES}), ('path', ${limit}), ('country', ${limit}), ('ua', ${limit}), ('verified-ua', ${limit}))`,
  );

/**
 * Everything the dashboard shows, in one round trip: per dimension a top-N read on the primary
 * key (one tenant) or a grouping over every tenant's rows, the distinct fingerprints of the window,
 * and the hourly series. Rows come back as (part, value, n).
 */
export async function dashboardRows(db: Db, tenantId: string | null, window: Window, from: Date, limit: number): Promise<DashboardRows> {
  const n = COLUMN[window];
  const perDim =
    tenantId === null
      ? sql`SELECT min(r.value) AS value, sum(r.${n}) AS n FROM honeypot_rollup_dims r WHERE r.dim = l.dim AND r.${n} > 0
          GROUP BY r.key ORDER BY sum(r.${n}) DESC, min(r.value) COLLATE "C" LIMIT l.lim`
      : sql`SELECT r.value, r.${n} AS n FROM honeypot_rollup_dims r WHERE r.tenant_id = ${tenantId}::uuid AND r.dim = l.dim AND r.${n} > 0
          ORDER BY r.${n} DESC, r.value COLLATE "C" LIMIT l.lim`;
  const result = await executePrepared(db, `honeypot_dashboard_${window}_${tenantId === null ? 'all' : 'one'}_${limit}`, sql`
    SELECT l.dim AS part, x.value, x.n::bigint AS n FROM ${DIM_LIMITS(limit)} AS l(dim, lim) CROSS JOIN LATERAL (${perDim}) x
    UNION ALL
    SELECT 'fingerprints', NULL, count(DISTINCT fingerprint_id) FROM honeypot_rollup_clusters
      WHERE ${n} > 0 AND ${tenantIs(sql`tenant_id`, tenantId)}
    UNION ALL
    SELECT 'hour', (extract(epoch FROM hour) * 1000)::bigint::text, sum(events)::bigint FROM honeypot_rollup_hourly
      WHERE hour >= ${at(from)} AND ${tenantIs(sql`tenant_id`, tenantId)} GROUP BY hour`);
  const rows = rowsOf<{ part: string; value: string | null; n: unknown }>(result);
  return {
    dims: rows.filter((r) => r.part !== 'fingerprints' && r.part !== 'hour').map((r) => ({ dim: r.part, value: String(r.value), count: toNumber(r.n) })),
    uniqueFingerprints: toNumber(rows.find((r) => r.part === 'fingerprints')?.n),
    hours: rows.filter((r) => r.part === 'hour').map((r) => ({ hour: new Date(Number(r.value)), events: toNumber(r.n) })),
  };
}

export interface ClusterRow {
  ja4: string | null;
  uaClass: string;
  asn: number | null;
  eventCount: number;
  fingerprintCount: number;
  firstSeen: Date;
  lastSeen: Date;
  sampleUa: string;
  sampleFingerprintId: string;
}

/**
 * Members with events in the window grouped by cluster, most events first, at most `limit`;
 * ties go by the cluster key (a hash of ja4, class and asn), which is arbitrary but stable. Only
 * the members of the clusters returned are joined with their seen rows: a member's first/last seen
 * and sample UA are its clusters row merged with its seen row (MERGE_SEEN's rule), over all
 * history; the sample is the latest UA of the member with most events in the window.
 */
/** The sample UA of member `c` merged with its seen row `s` (none: its own), by MERGE_SEEN's rule. */
const SAMPLE_OF_MEMBER = sql`CASE WHEN s.last_seen > c.last_seen
    OR (s.last_seen = c.last_seen AND s.ua_sample COLLATE "C" > c.ua_sample COLLATE "C") THEN s.ua_sample ELSE c.ua_sample END`;

export async function topClusters(db: Db, tenantId: string | null, window: Window, limit: number): Promise<ClusterRow[]> {
  const n = COLUMN[window];
  const tenant = tenantIs(sql`c.tenant_id`, tenantId);
  // Across tenants one fingerprint may be a member in several: count it once.
  const fingerprints = tenantId === null ? sql`count(DISTINCT c.fingerprint_id)` : sql`count(*)`;
  const result = await executePrepared(
    db,
    `honeypot_clusters_${window}_${tenantId === null ? 'all' : 'one'}`,
    sql`
    WITH top AS (
      SELECT c.cluster_key, sum(c.${n}) AS events, ${fingerprints} AS fingerprints
      FROM honeypot_rollup_clusters c WHERE ${tenant} AND c.${n} > 0
      GROUP BY c.cluster_key ORDER BY 2 DESC, 1 LIMIT ${limit}
    )
    SELECT min(c.ja4) AS ja4, min(c.ua_class) AS "uaClass", min(c.asn) AS asn, t.events::bigint AS "eventCount",
      t.fingerprints::bigint AS "fingerprintCount", min(least(c.first_seen, s.first_seen)) AS "firstSeen",
      max(greatest(c.last_seen, s.last_seen)) AS "lastSeen",
      (array_agg(${SAMPLE_OF_MEMBER} ORDER BY c.${n} DESC, c.fingerprint_id, c.tenant_id))[1] AS "sampleUa",
      (array_agg(c.fingerprint_id ORDER BY c.${n} DESC, c.fingerprint_id, c.tenant_id))[1] AS "sampleFingerprintId"
    FROM top t
    JOIN honeypot_rollup_clusters c ON c.cluster_key = t.cluster_key AND ${tenant} AND c.${n} > 0
    LEFT JOIN honeypot_rollup_seen s ON s.tenant_id = c.tenant_id AND s.fingerprint_id = c.fingerprint_id
      AND s.ua_class = c.ua_class AND s.asn = c.asn AND s.ja4 = c.ja4
    GROUP BY t.cluster_key, t.events, t.fingerprints
    ORDER BY t.events DESC, t.cluster_key`,
  );
  return rowsOf<Record<string, unknown>>(result).map((r) => ({
    ja4: r.ja4 === NO_JA4 ? null : String(r.ja4),
    uaClass: String(r.uaClass),
    asn: toNumber(r.asn) === NO_ASN ? null : toNumber(r.asn),
    eventCount: toNumber(r.eventCount),
    fingerprintCount: toNumber(r.fingerprintCount),
    firstSeen: asDate(r.firstSeen),
    lastSeen: asDate(r.lastSeen),
    sampleUa: String(r.sampleUa),
    sampleFingerprintId: String(r.sampleFingerprintId),
  }));
}

export interface TenantActivity {
  id: string;
  slug: string;
  name: string;
  disabledAt: Date | null;
  /** Events per named hour range [from, to) of the hourly rollup. */
  sums: Record<string, number>;
  /** Latest rollup time of any of its events; null when it has none. */
  lastSeenAt: Date | null;
}

/**
 * Every tenant with its event sums over the named hour ranges and the latest rollup time of its
 * events. That is the newest event's ts when ts is not ahead of its receive time (no other event
 * can count later); otherwise the events from that receive time on are looked at.
 */
export async function tenantActivity(db: Db, ranges: Record<string, { from: Date; to: Date }>): Promise<TenantActivity[]> {
  const names = Object.keys(ranges);
  const earliest = new Date(Math.min(...names.map((k) => ranges[k]!.from.getTime())));
  const sums = names.map(
    (name, i) =>
      sql`coalesce(sum(h.events) FILTER (WHERE h.hour >= ${at(ranges[name]!.from)} AND h.hour < ${at(ranges[name]!.to)}), 0)::bigint AS ${sql.raw(`s${i}`)}`,
  );
  const result = await db.execute(sql`
    SELECT t.id, t.slug, t.name, t.disabled_at AS "disabledAt", ${sql.join(sums, sql`, `)},
      max(e.ts) AS "newestTs", max(e.received_at) AS "newestReceivedAt"
    FROM honeypot_tenants t
    LEFT JOIN LATERAL (SELECT ts, received_at FROM honeypot_events WHERE tenant_id = t.id ORDER BY ts DESC LIMIT 1) e ON TRUE
    LEFT JOIN honeypot_rollup_hourly h ON h.tenant_id = t.id AND h.hour >= ${at(earliest)}
    GROUP BY t.id, t.slug, t.name, t.disabled_at
    ORDER BY t.slug`);
  const tenants = rowsOf<Record<string, unknown>>(result).map((r) => {
    const ts = asDateOrNull(r.newestTs);
    const receivedAt = asDateOrNull(r.newestReceivedAt);
    return {
      id: String(r.id),
      slug: String(r.slug),
      name: String(r.name),
      disabledAt: asDateOrNull(r.disabledAt),
      sums: Object.fromEntries(names.map((name, i) => [name, toNumber(r[`s${i}`])])),
      lastSeenAt: ts !== null && receivedAt !== null && ts > receivedAt ? receivedAt : ts,
      ahead: ts !== null && receivedAt !== null && ts > receivedAt,
    };
  });
  for (const t of tenants.filter((x) => x.ahead)) {
    const [row] = rowsOf<{ at: unknown }>(
      await db.execute(sql`SELECT max(least(ts, received_at)) AS at FROM honeypot_events
        WHERE tenant_id = ${t.id}::uuid AND ts >= ${at(t.lastSeenAt as Date)}`),
    );
    t.lastSeenAt = asDateOrNull(row?.at);
  }
  return tenants.map(({ ahead: _, ...t }) => t);
}

// Database health

/** Events ever stored: the sum of the hourly rollup (every stored event adds one to it). */
export async function totalEvents(db: Db, from: Date | null): Promise<number> {
  const [row] = rowsOf<{ n: unknown }>(
    await db.execute(sql`SELECT coalesce(sum(events), 0)::bigint AS n FROM honeypot_rollup_hourly
      WHERE ${from === null ? sql`TRUE` : sql`hour >= ${at(from)}`}`),
  );
  return toNumber(row?.n);
}

/** Above this planner estimate a table's row count is reported as the estimate, not counted. */
export const EXACT_COUNT_LIMIT = 100_000;

/**
 * The row count of a table: exact (count(*)) unless the planner's estimate (pg_class.reltuples,
 * kept by ANALYZE and autovacuum) is at least EXACT_COUNT_LIMIT, then that estimate.
 */
export async function tableRows(db: Db, table: 'honeypot_fingerprints' | 'ingest_samples'): Promise<{ count: number; exact: boolean }> {
  const [estimate] = rowsOf<{ n: unknown }>(await db.execute(sql`SELECT reltuples::bigint AS n FROM pg_class WHERE oid = ${table}::regclass`));
  const estimated = toNumber(estimate?.n);
  if (estimated >= EXACT_COUNT_LIMIT) return { count: estimated, exact: false };
  const [row] = rowsOf<{ n: unknown }>(await db.execute(sql`SELECT count(*)::bigint AS n FROM ${sql.identifier(table)}`));
  return { count: toNumber(row?.n), exact: true };
}

/** Oldest and newest ingest sample, on the received_at index. */
export async function sampleSpan(db: Db): Promise<{ oldest: Date | null; newest: Date | null }> {
  const [row] = rowsOf<Record<string, unknown>>(
    await db.execute(sql`SELECT (SELECT min(received_at) FROM ingest_samples) AS oldest, (SELECT max(received_at) FROM ingest_samples) AS newest`),
  );
  return { oldest: asDateOrNull(row?.oldest), newest: asDateOrNull(row?.newest) };
}

