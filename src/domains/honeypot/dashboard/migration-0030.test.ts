import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { MIGRATIONS, migrateFrom, migrationsBefore } from '../../../../test/helpers/migrations.ts';
import { type Database, rowsOf } from '../../../platform/db/client.ts';
import { subtractLeaving, topClusters } from './repository.ts';

/**
 * Migration 0030_clusters-seen on rollups from before it: the cluster members already stored get
 * neutral first/last seen (no row is rewritten), so reads take their history from the seen table
 * as before, the next events merge over them, and removing such a member adds nothing false to
 * seen (docs/honeypot/dashboard.md, "Rollups").
 */

const TENANT = '0b5e0b5e-0000-4000-8000-000000000030';

let testDb: TestDatabase;
let database: Database;
let before0030: ReturnType<typeof migrationsBefore>;

beforeAll(async () => {
  // The shipped migrations up to 0029: the same files, the journal cut before 0030.
  before0030 = migrationsBefore(30);
  testDb = await createTestDatabase({ empty: true });
  database = await testDb.open();
});
afterAll(async () => {
  await testDb.drop();
  before0030.remove();
});

describe('migration 0030 over earlier rollups', () => {
  it('reads the members stored before it from seen, merges new events over them, and removes them without a false time', async () => {
    await migrateFrom(database, before0030.folder);
    const db = database.db;
    // Two members of one cluster as the applier left them before 0030: counts here, history in seen.
    const member = (fingerprint: string, events30d: number) =>
      db.execute(sql`INSERT INTO honeypot_rollup_clusters (tenant_id, cluster_key, fingerprint_id, ua_class, asn, ja4, events_24h, events_7d, events_30d)
        VALUES (${TENANT}, '00000000-0000-4000-8000-0000000000aa', ${fingerprint}, 'LIAR', 3320, '', 0, 0, ${events30d})`);
    const seen = (fingerprint: string, first: string, last: string, ua: string) =>
      db.execute(sql`INSERT INTO honeypot_rollup_seen (tenant_id, fingerprint_id, ua_class, asn, ja4, first_seen, last_seen, ua_sample)
        VALUES (${TENANT}, ${fingerprint}, 'LIAR', 3320, '', ${first}::timestamptz, ${last}::timestamptz, ${ua})`);
    await member('fp-busy', 5);
    await seen('fp-busy', '2026-10-02T00:00:00Z', '2026-11-20T00:00:00Z', 'busy/1.0');
    await member('fp-gone', 0);
    await seen('fp-gone', '2026-10-05T00:00:00Z', '2026-10-06T00:00:00Z', 'gone/1.0');
    // A member whose seen row is missing (never left by the applier): it has no time to give.
    await member('fp-orphan', 0);

    await migrateFrom(database, MIGRATIONS);
    const [cluster] = await topClusters(db, TENANT, '30d', 10);
    expect(cluster).toMatchObject({
      eventCount: 5,
      fingerprintCount: 1,
      firstSeen: new Date('2026-10-02T00:00:00Z'),
      lastSeen: new Date('2026-11-20T00:00:00Z'),
      sampleUa: 'busy/1.0',
      sampleFingerprintId: 'fp-busy',
    });

    // A later event merged over the neutral row (as the applier's upsert merges) takes over last seen and the sample.
    await db.execute(sql`UPDATE honeypot_rollup_clusters SET events_30d = events_30d + 1,
        first_seen = least(first_seen, '2026-11-25T00:00:00Z'), last_seen = greatest(last_seen, '2026-11-25T00:00:00Z'), ua_sample = 'busy/2.0'
      WHERE fingerprint_id = 'fp-busy'`);
    expect((await topClusters(db, TENANT, '30d', 10))[0]).toMatchObject({
      eventCount: 6,
      firstSeen: new Date('2026-10-02T00:00:00Z'),
      lastSeen: new Date('2026-11-25T00:00:00Z'),
      sampleUa: 'busy/2.0',
    });

    // The window moves and the members with nothing left are removed: seen keeps its own times and gets no neutral ones.
    const starts = { '24h': new Date('2026-11-26T00:00:00Z'), '7d': new Date('2026-11-20T00:00:00Z'), '30d': new Date('2026-10-28T00:00:00Z') };
    await subtractLeaving(db, starts, { ...starts, '30d': new Date('2026-10-28T01:00:00Z') });
    const left = rowsOf<{ fingerprint_id: string; first_seen: unknown; last_seen: unknown; ua_sample: string }>(
      await db.execute(sql`SELECT fingerprint_id, first_seen::text, last_seen::text, ua_sample FROM honeypot_rollup_seen ORDER BY 1`),
    );
    expect(left.map((r) => r.fingerprint_id)).toEqual(['fp-busy', 'fp-gone']);
    expect(left[1]).toMatchObject({ ua_sample: 'gone/1.0' });
    expect(String(left[1]!.first_seen)).toContain('2026-10-05');
    expect(String(left[1]!.last_seen)).toContain('2026-10-06');
    const clusters = rowsOf<{ fingerprint_id: string }>(await db.execute(sql`SELECT fingerprint_id FROM honeypot_rollup_clusters`));
    expect(clusters.map((r) => r.fingerprint_id)).toEqual(['fp-busy']);
  });
});
