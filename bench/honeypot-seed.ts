import { sql } from 'drizzle-orm';
import type { App } from '../src/app.ts';
import { rowsOf } from '../src/platform/db/client.ts';

/**
 * Seeds honeypot events for the read scenarios straight into the database (bulk SQL on the
 * server, generate_series), then rebuilds the rollups from them with the service's own rebuild,
 * so the rollups are exactly what ingest would have made of the same events.
 *
 * The events are spread uniformly over the 30 days before now and drawn, with skew, from fixed
 * populations, as a honeypot sees a bounded set of clients and bait pages:
 *   2,000 fingerprints  f = floor(2000·x²); each has one user agent (of 300) and one JA4 (of 40,
 *                       or none), and comes from 2 of 300 ASNs (10% of ASNs unattributed)
 *   3,000 paths         p = floor(3000·x³) under /honeypot/topics/, /q/, /agents/, /docs/
 *   classes             bot UAs (30 of 300): KNOWN_LLM_AGENT or VERIFIED_CRAWLER, 25% LIAR;
 *                       browsers 70; tools 150 UNKNOWN_BOT; 50 UNKNOWN
 *   40 countries        one per ASN
 * (x uniform in [0, 1).) With 10,000 events nearly every fingerprint and two thirds of the paths
 * already occur; see docs/performance.md for what that means for the figures.
 */

const COUNTRIES = [
  'US', 'DE', 'FR', 'GB', 'NL', 'CN', 'RU', 'JP', 'SG', 'IN', 'BR', 'CA', 'AU', 'SE', 'PL', 'IT', 'ES', 'KR', 'HK', 'IE',
  'FI', 'NO', 'DK', 'CH', 'AT', 'BE', 'CZ', 'RO', 'UA', 'TR', 'ZA', 'MX', 'AR', 'CL', 'ID', 'VN', 'TH', 'MY', 'IL', 'AE',
];

const CHUNK = 100_000;

export async function seedHoneypotEvents(app: App, tenantId: string, count: number): Promise<void> {
  const db = app.database.db;
  const countries = sql.raw(`ARRAY[${COUNTRIES.map((c) => `'${c}'`).join(',')}]`);
  for (let done = 0; done < count; done += CHUNK) {
    const n = Math.min(CHUNK, count - done);
    await db.execute(sql`
      INSERT INTO honeypot_events (id, tenant_id, sender_id, ts, received_at, method, path, query, ua_raw, ip_hash, ja4, asn, country,
        attribution_source, referer, headers, ua_class, vendor_id, proof, evidence, fingerprint_id, schema_version, body_bytes)
      SELECT gen_random_uuid(), ${tenantId}::uuid, NULL, ts, ts, 'GET',
        (ARRAY['/honeypot/topics/', '/q/', '/agents/', '/docs/'])[1 + p % 4] || 'bait-' || p, NULL,
        CASE WHEN u < 30 THEN 'Mozilla/5.0 (compatible; AgentBot' || u || '/1.' || (f % 5) || '; +https://bots.example/' || u || ')'
             WHEN u < 100 THEN 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/' || (120 + u % 12) || '.0.' || u || '.0 Safari/537.36'
             ELSE 'tool-' || u || '/2.' || (f % 3) END,
        md5(random()::text) || md5(random()::text), ja4,
        CASE WHEN a % 10 = 0 THEN NULL ELSE 1000 + a END,
        CASE WHEN a % 10 = 0 THEN NULL ELSE (${countries})[1 + a % 40] END,
        CASE WHEN a % 10 = 0 THEN NULL ELSE 'geoip' END,
        NULL, '{}'::jsonb,
        CASE WHEN u < 20 THEN CASE WHEN liar THEN 'LIAR' ELSE 'KNOWN_LLM_AGENT' END
             WHEN u < 30 THEN CASE WHEN liar THEN 'LIAR' ELSE 'VERIFIED_CRAWLER' END
             WHEN u < 100 THEN 'BROWSER' WHEN u < 250 THEN 'UNKNOWN_BOT' ELSE 'UNKNOWN' END,
        CASE WHEN u < 30 THEN 'vendor-' || u ELSE NULL END, NULL, '{}'::jsonb,
        left(md5('fp-' || f), 16), 1, 200
      FROM (
        SELECT ts, f, p, (f * 7) % 300 AS u,
          CASE WHEN f % 41 = 40 THEN NULL ELSE 't13d' || lpad((f % 41)::text, 4, '0') || '_8daaf6152771_02713d6af862' END AS ja4,
          (f * 13 + floor(r1 * 2)::int) % 300 AS a, r2 < 0.25 AS liar
        FROM (
          SELECT now() - random() * interval '30 days' AS ts, floor(2000 * power(random(), 2))::int AS f,
            floor(3000 * power(random(), 3))::int AS p, random() AS r1, random() AS r2
          FROM generate_series(1, ${n})
        ) g
      ) e`);
  }
  await db.execute(sql`
    INSERT INTO honeypot_fingerprints (tenant_id, fingerprint_id, ja4, ua_normalized, ua_sample, last_ua_class, asn, first_seen, last_seen,
      event_count, liar_count)
    SELECT tenant_id, fingerprint_id, min(ja4), min(ua_raw), min(ua_raw), min(ua_class), min(asn), min(ts), max(ts), count(*),
      count(*) FILTER (WHERE ua_class = 'LIAR')
    FROM honeypot_events WHERE tenant_id = ${tenantId}::uuid GROUP BY 1, 2
    ON CONFLICT (tenant_id, fingerprint_id) DO NOTHING`);
  // As autovacuum would, but now: otherwise its pass over a million fresh rows lands in the middle
  // of the next measurement.
  await db.execute(sql`VACUUM (ANALYZE) honeypot_events`);
  await db.execute(sql`VACUUM (ANALYZE) honeypot_fingerprints`);
}

export async function eventCount(app: App, tenantId: string): Promise<number> {
  const [row] = rowsOf<{ n: unknown }>(await app.database.db.execute(sql`SELECT count(*) AS n FROM honeypot_events WHERE tenant_id = ${tenantId}::uuid`));
  return Number(row?.n ?? 0);
}

/** Rebuilds the rollups from the events, then vacuums and analyzes the rollup tables. */
export async function rebuildRollups(app: App): Promise<number> {
  const { events } = await app.honeypot.dashboard.rebuild();
  for (const table of ['honeypot_rollup_hourly', 'honeypot_rollup_dims', 'honeypot_rollup_clusters', 'honeypot_rollup_seen']) {
    await app.database.db.execute(sql`VACUUM (ANALYZE) ${sql.identifier(table)}`);
  }
  return events;
}
