import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runJob, startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { onServer } from '../../../test/helpers/database.ts';
import { ManualClock } from '../../platform/clock.ts';
import { canonicalJson, sha256Hex } from '../../platform/crypto.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { tokenBoundTo } from '../../../test/helpers/empire.ts';
import type { SnapshotView } from './service.ts';
import { createBackupTurn } from './turn.ts';

/**
 * Snapshots that really restore (issue 15 items 1–3), on the driver the run uses: PGlite by
 * default, a PostgreSQL server with DATABASE_URL. One snapshot is taken and reused: the damaged,
 * truncated and drifted cases are copies of its record pointing at altered copies of its file.
 */

/** A snapshot as the API answers it (JSON). */
type Snapshot = SnapshotView;

const clock = new ManualClock('2026-11-20T02:30:00.000Z');
const backupDir = mkdtempSync(join(tmpdir(), 'observatory-backups-test-'));
const scratchPrefix = `obs_restore_t${randomBytes(4).toString('hex')}`;
let t: TestApp;
let snapshot: Snapshot;

beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { OBSERVATORY_BACKUP_DIR: backupDir, OBSERVATORY_BACKUP_RETENTION_DAYS: '7', OBSERVATORY_BACKUP_SCRATCH_PREFIX: scratchPrefix },
  });
  const res = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} });
  if (res.statusCode !== 200) throw new Error(`snapshot failed: ${res.statusCode} ${res.body}`);
  snapshot = res.json().snapshot;
}, 120_000);

afterAll(async () => {
  await t?.close();
  rmSync(backupDir, { recursive: true, force: true });
});

const verify = (snapshotId: unknown, token?: string) =>
  t.call({ method: 'POST', url: `${V1}/backups/verify`, payload: { snapshotId } as object, ...(token ? { token } : {}) });
const fileOf = (s: { providerSnapshotId: string }) => join(backupDir, s.providerSnapshotId);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function query<T>(statement: ReturnType<typeof sql>): Promise<T[]> {
  return rowsOf<T>(await t.app.database.db.execute(statement));
}

/** A copy of the shared snapshot's record with some fields changed: the file it names, its recorded hashes. */
async function recordCopy(changes: { key?: string; fileSha256?: string; byTable?: Record<string, number>; tableHashes?: Record<string, string> }): Promise<string> {
  const id = randomUUID();
  await t.app.database.db.execute(sql`
    INSERT INTO backup_snapshots (id, database, provider_snapshot_id, storage, format, taken_at, observed_at, retention_until, size_bytes,
                                  row_counts_sha256, by_table, table_hashes, file_sha256, source)
    SELECT ${id}, database, ${changes.key ?? snapshot.providerSnapshotId}, storage, format, taken_at, observed_at, retention_until, size_bytes,
           row_counts_sha256, ${JSON.stringify(changes.byTable ?? snapshot.byTable)}::jsonb, ${JSON.stringify(changes.tableHashes ?? snapshot.tableHashes)}::jsonb,
           ${changes.fileSha256 ?? snapshot.fileSha256}, source
      FROM backup_snapshots WHERE id = ${snapshot.id}`);
  return id;
}

/** Writes `bytes` as a new snapshot file beside the real one and answers its key. */
function writeAltered(name: string, bytes: Buffer): string {
  const key = `${snapshot.database}/${name}-${randomUUID()}.${snapshot.format === 'pg_dump-custom' ? 'pgdump' : 'tar.gz'}`;
  writeFileSync(join(backupDir, key), bytes);
  return key;
}

describe('POST {v1}/backups/snapshots', () => {
  it('takes a real dump, records what is in it and audits backup.snapshot', async () => {
    expect(snapshot).toMatchObject({
      database: 'observatory',
      source: 'manual',
      storage: 'local',
      format: onServer ? 'pg_dump-custom' : 'pglite-datadir-tar-gzip',
      takenAt: '2026-11-20T02:30:00.000Z',
      retentionUntil: '2026-11-27T02:30:00.000Z',
    });
    const bytes = readFileSync(fileOf(snapshot));
    expect(bytes.length).toBe(snapshot.sizeBytes);
    expect(sha256(bytes)).toBe(snapshot.fileSha256);
    // A real dump: pg_dump's custom format starts with PGDMP, PGlite's tarball is gzip.
    expect(onServer ? bytes.subarray(0, 5).toString('latin1') : bytes.subarray(0, 2).toString('hex')).toBe(onServer ? 'PGDMP' : '1f8b');
    expect(snapshot.rowCountsSha256).toBe(sha256Hex(canonicalJson(snapshot.byTable)));
    expect(Object.keys(snapshot.tableHashes).sort()).toEqual(Object.keys(snapshot.byTable).sort());
    // The counts are the database's own at the time: the admin operator, the migrations table.
    expect(snapshot.byTable.users).toBe(1);
    expect(snapshot.byTable['drizzle.__drizzle_migrations']).toBeGreaterThan(10);
    expect(snapshot.byTable.backup_snapshots).toBe(0);
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=backup.snapshot` })).json();
    expect(audit.rows.map((r: { target: string }) => r.target)).toContain(snapshot.id);
  });

  it('answers 403 to a token without write:alerts', async () => {
    const reader = await t.tokenWith(['read:empire']);
    const res = await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {}, token: reader });
    expect(res.statusCode).toBe(403);
  });
});

describe('GET {v1}/backups/snapshots', () => {
  it('lists snapshots newest first, by database, with a limit', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/backups/snapshots?database=observatory` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-backup-snapshots.v1', database: 'observatory' });
    expect(body.snapshots[0]).toEqual(snapshot);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/snapshots?database=elsewhere` })).json().snapshots).toEqual([]);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/snapshots` })).json().database).toBeNull();
    expect((await t.call({ method: 'GET', url: `${V1}/backups/snapshots?limit=0` })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/snapshots?database=Bad%20Name` })).statusCode).toBe(400);
  });

  it('answers 403 to a token without read:empire', async () => {
    const writer = await t.tokenWith(['write:alerts']);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/snapshots`, token: writer })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/ladder`, token: writer })).statusCode).toBe(403);
  });
});

describe('POST {v1}/backups/verify', () => {
  let first: { id: string; determinismDigest: string };

  it('restores the snapshot and finds exactly what it recorded, even after the database changed', async () => {
    // Changes after the snapshot are not in it; the verification compares the file with its record.
    await t.tokenWith(['read:empire']);
    clock.advance(60_000);
    const res = await verify(snapshot.id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      schema: 'svc-backup-verify.v1',
      ok: true,
      verification: {
        snapshotId: snapshot.id,
        database: 'observatory',
        providerSnapshotId: snapshot.providerSnapshotId,
        takenAt: snapshot.takenAt,
        verifiedAt: clock.now().toISOString(),
        outcome: 'ok',
        errorText: null,
        driftTables: [],
        restoredRowSha256: snapshot.rowCountsSha256,
        fileSha256: snapshot.fileSha256,
        trigger: 'manual',
      },
    });
    expect(body.verification.durationMs).toBeGreaterThan(0);
    expect(body.verification.determinismDigest).toMatch(/^[0-9a-f]{64}$/);
    first = body.verification;
  }, 120_000);

  it('gives the same determinismDigest for the same snapshot every time', async () => {
    const again = (await verify(snapshot.id)).json().verification;
    expect(again.outcome).toBe('ok');
    expect(again.id).not.toBe(first.id);
    expect(again.determinismDigest).toBe(first.determinismDigest);
  }, 120_000);

  it('names the tables whose recorded counts or hashes the restore does not reproduce (drift)', async () => {
    // As if the dump had lost a row of users, and an operator_audit row had changed.
    const id = await recordCopy({
      byTable: { ...snapshot.byTable, users: snapshot.byTable.users! + 1 },
      tableHashes: { ...snapshot.tableHashes, operator_audit: sha256Hex('another row') },
    });
    const res = await verify(id);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.ok).toBe(false);
    expect(body.verification).toMatchObject({ outcome: 'drift', driftTables: ['operator_audit', 'users'] });
    expect(body.verification.errorText).toContain('operator_audit, users');
    // The restored counts are the file's, not the altered record's.
    expect(body.verification.restoredRowSha256).toBe(snapshot.rowCountsSha256);
  }, 120_000);

  it('refuses a file whose bytes are not the recorded ones before restoring it (error)', async () => {
    const bytes = Buffer.from(readFileSync(fileOf(snapshot)));
    const middle = Math.floor(bytes.length / 2);
    for (let i = 0; i < 64; i++) bytes[middle + i]! ^= 0xff;
    const id = await recordCopy({ key: writeAltered('flipped', bytes) });
    const body = (await verify(id)).json();
    expect(body.ok).toBe(false);
    expect(body.verification).toMatchObject({ outcome: 'error', restoredRowSha256: null, fileSha256: sha256(bytes) });
    expect(body.verification.errorText).toContain('SHA-256');
  });

  it('catches a corrupted file in the restore itself when its record was rewritten to match (error)', async () => {
    const bytes = Buffer.from(readFileSync(fileOf(snapshot)));
    const middle = Math.floor(bytes.length / 2);
    for (let i = 0; i < 64; i++) bytes[middle + i]! ^= 0xff;
    const id = await recordCopy({ key: writeAltered('flipped-rehashed', bytes), fileSha256: sha256(bytes) });
    const body = (await verify(id)).json();
    expect(body.verification).toMatchObject({ outcome: 'error', restoredRowSha256: null });
    expect(body.verification.errorText).toMatch(/^restore failed: /);
  }, 120_000);

  it('catches a truncated file in the restore itself when its record was rewritten to match (error)', async () => {
    const bytes = readFileSync(fileOf(snapshot)).subarray(0, Math.floor(snapshot.sizeBytes * 0.6));
    const id = await recordCopy({ key: writeAltered('truncated', bytes), fileSha256: sha256(bytes) });
    const body = (await verify(id)).json();
    expect(body.verification).toMatchObject({ outcome: 'error', restoredRowSha256: null });
    expect(body.verification.errorText).toMatch(/^restore failed: /);
  }, 120_000);

  it('reports a missing file as an error', async () => {
    const id = await recordCopy({ key: `${snapshot.database}/gone-${randomUUID()}.bin` });
    const body = (await verify(id)).json();
    expect(body.verification).toMatchObject({ outcome: 'error', fileSha256: null });
    expect(body.verification.errorText).toContain('missing');
  });

  it('answers 400 for a bad body, 404 for an unknown snapshot, 403 without write:alerts', async () => {
    for (const payload of [{}, { snapshotId: 'not-a-uuid' }, { snapshotId: 42 }, { snapshotId: snapshot.id, extra: 1 }]) {
      const res = await t.call({ method: 'POST', url: `${V1}/backups/verify`, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().reason).toBe('invalid-body');
    }
    const unknown = await verify(randomUUID());
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().reason).toBe('not-found');
    expect((await verify(snapshot.id, await t.tokenWith(['read:empire']))).statusCode).toBe(403);
  });

  it('makes every verification an audit fact (RestoreVerification, backup) and the manual call a backup.verify row', async () => {
    const verifications = await query<{ id: string }>(sql`SELECT id FROM restore_verifications`);
    const facts = await query<{ source_id: string; kind: string; actor: string | null; payload: { outcome: string } }>(
      sql`SELECT source_id, kind, actor, payload FROM audit_facts WHERE source = 'RestoreVerification'`,
    );
    expect(facts.map((f) => f.source_id).sort()).toEqual(verifications.map((v) => v.id).sort());
    expect(facts.every((f) => f.kind === 'backup' && f.actor === 'admin')).toBe(true);
    expect(new Set(facts.map((f) => f.payload.outcome))).toEqual(new Set(['ok', 'drift', 'error']));
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=backup.verify&limit=100` })).json();
    expect(audit.rows).toHaveLength(verifications.length);
    expect(audit.rows.map((r: { target: string }) => r.target)).toContain(snapshot.id);
  });

  it.runIf(onServer)('drops every scratch database it restored into, after ok and failed restores alike', async () => {
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      const { rows } = await admin.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${scratchPrefix}%`]);
      expect(rows).toEqual([]);
    } finally {
      await admin.end();
    }
  });
});

describe('GET {v1}/backups/ladder', () => {
  it('lists the window\'s verifications and, per database, the last, the last ok and 30-day totals', async () => {
    const res = await t.call({ method: 'GET', url: `${V1}/backups/ladder` });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-backup-ladder.v1', windowDays: 30 });
    const total = (await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM restore_verifications`))[0]!.n;
    expect(body.rows).toHaveLength(total);
    expect(body.databases).toEqual([
      {
        database: 'observatory',
        last: clock.now().toISOString(),
        lastOk: clock.now().toISOString(),
        hoursSinceLastOk: 0,
        totals30d: { ok: 2, drift: 1, error: 4 },
      },
    ]);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/ladder?limit=2` })).json().rows).toHaveLength(2);

    // Ten days on: a 7-day window holds none of them, the hours count on, the 30-day totals stay.
    clock.advance(10 * 24 * 3600_000);
    const later = (await t.call({ method: 'GET', url: `${V1}/backups/ladder?days=7` })).json();
    expect(later.windowDays).toBe(7);
    expect(later.rows).toEqual([]);
    expect(later.databases[0]).toMatchObject({ hoursSinceLastOk: 240, totals30d: { ok: 2, drift: 1, error: 4 } });
    expect((await t.call({ method: 'GET', url: `${V1}/backups/ladder?days=0` })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `${V1}/backups/ladder?days=366` })).statusCode).toBe(400);
  });
});

describe('the backup jobs', () => {
  it('backup-snapshot takes a provider snapshot and deletes expired ones (file and row)', async () => {
    // The clock is 10 days past the first snapshot; its retention was 7 days.
    expect(existsSync(fileOf(snapshot))).toBe(true);
    const stats = await runJob(t, 'backup-snapshot');
    expect(stats.expired).toBeGreaterThanOrEqual(1);
    expect(existsSync(fileOf(snapshot))).toBe(false);
    const listed: Snapshot[] = (await t.call({ method: 'GET', url: `${V1}/backups/snapshots` })).json().snapshots;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ source: 'provider', takenAt: clock.now().toISOString() });
    expect(statSync(fileOf(listed[0]!)).size).toBe(listed[0]!.sizeBytes);
    // The new snapshot holds the verifications made since the first one.
    expect(listed[0]!.byTable.restore_verifications).toBeGreaterThan(0);
    const audit = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=backup.expire&limit=100` })).json();
    expect(audit.rows.map((r: { target: string }) => r.target)).toContain(snapshot.id);
    // The ladder keeps the history of a deleted snapshot.
    expect((await t.call({ method: 'GET', url: `${V1}/backups/ladder` })).json().databases[0].totals30d.ok).toBe(2);
  }, 120_000);

  it('backup-verify restores the newest snapshot through POST {v1}/ops/jobs/backup-verify/run', async () => {
    const stats = await runJob(t, 'backup-verify');
    expect(stats.verified).toBe(1);
    const ladder = (await t.call({ method: 'GET', url: `${V1}/backups/ladder?limit=1` })).json();
    expect(ladder.rows[0]).toMatchObject({ outcome: 'ok', trigger: 'job' });
    expect(ladder.databases[0]).toMatchObject({ lastOk: clock.now().toISOString(), hoursSinceLastOk: 0 });
    const fact = await query<{ actor: string | null }>(sql`SELECT actor FROM audit_facts WHERE source = 'RestoreVerification' AND source_id = ${ladder.rows[0].id}`);
    expect(fact).toEqual([{ actor: null }]);
  }, 120_000);

  it('is listed by cron health with its nightly schedule', async () => {
    const health = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/cron-health` })).json();
    const jobs = JSON.stringify(health);
    expect(jobs).toContain('backup-snapshot');
    expect(jobs).toContain('30 2 * * *');
  });
});

describe('one snapshot or verification at a time', () => {
  /**
   * Holds the deployment's backup turn from outside any request, as another instance (or a long
   * snapshot) would: on a server through a connection of its own (the advisory lock every instance
   * on the database shares), on PGlite through the process's turn.
   */
  async function holdTurn(): Promise<() => Promise<void>> {
    let release!: () => void;
    let entered!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const holding = createBackupTurn(t.app.database).run(async () => {
      entered();
      await held;
    }, { wait: false });
    await inside;
    return async () => {
      release();
      await holding;
    };
  }

  it('answers 409 conflict to a snapshot, a verification and a bridge verification while another runs, and records nothing', async () => {
    const release = await holdTurn();
    try {
      const before = (await query<{ n: number }>(sql`SELECT (SELECT count(*) FROM backup_snapshots) + (SELECT count(*) FROM restore_verifications) AS n`))[0]!.n;
      for (const res of [
        await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} }),
        await verify((await t.call({ method: 'GET', url: `${V1}/backups/snapshots?limit=1` })).json().snapshots[0].id),
        await t.call({ method: 'POST', url: `${V1}/backups/bridge/verify`, payload: {} }),
      ]) {
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
        expect(res.json().human).toMatch(/^Another backup snapshot or restore verification is running on this deployment/);
      }
      expect((await query<{ n: number }>(sql`SELECT (SELECT count(*) FROM backup_snapshots) + (SELECT count(*) FROM restore_verifications) AS n`))[0]!.n).toBe(before);
    } finally {
      await release();
    }
    expect((await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} })).statusCode).toBe(200);
  }, 120_000);

  it('lets a job wait for its turn instead', async () => {
    const release = await holdTurn();
    let settled = false;
    const job = t.call({ method: 'POST', url: `${V1}/ops/jobs/backup-verify/run` }).finally(() => {
      settled = true;
    });
    try {
      // Requests meanwhile are refused; the job, which would have been too, is still waiting.
      expect((await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} })).statusCode).toBe(409);
      expect((await t.call({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {} })).statusCode).toBe(409);
      expect(settled).toBe(false);
    } finally {
      await release();
    }
    const res = await job;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().run).toMatchObject({ outcome: 'ok', stats: { verified: 1 } });
  }, 120_000);
});

describe('a token bound to toolsets', () => {
  it('may neither read nor start backup work: it covers every toolset (403)', async () => {
    const bound = await tokenBoundTo(t, ['read:empire', 'write:alerts'], ['crawler-lab']);
    const [latest] = (await t.call({ method: 'GET', url: `${V1}/backups/snapshots?limit=1` })).json().snapshots;
    const before = (await query<{ n: number }>(sql`SELECT (SELECT count(*) FROM backup_snapshots) + (SELECT count(*) FROM restore_verifications) + (SELECT count(*) FROM region_failover_drills) AS n`))[0]!.n;
    for (const [method, url, payload, what] of [
      ['GET', `${V1}/backups/snapshots`, undefined, 'the backup snapshot list'],
      ['GET', `${V1}/backups/ladder`, undefined, 'the restore verification ladder'],
      ['GET', `${V1}/backups/drills`, undefined, 'the failover drill list'],
      ['POST', `${V1}/backups/snapshots`, {}, 'a backup snapshot'],
      ['POST', `${V1}/backups/verify`, { snapshotId: latest.id }, 'a restore verification'],
      ['POST', `${V1}/backups/drills/run`, {}, 'a failover drill'],
      ['POST', `${V1}/backups/drills/${randomUUID()}/resolve`, { note: 'not mine' }, 'a failover drill'],
      ['POST', `${V1}/backups/bridge/verify`, {}, 'a restore verification of this deployment'],
    ] as const) {
      const res = await t.call({ method, url, token: bound, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toMatchObject({ reason: 'forbidden', human: `This token is bound to toolsets; ${what} spans every toolset.` });
    }
    expect((await query<{ n: number }>(sql`SELECT (SELECT count(*) FROM backup_snapshots) + (SELECT count(*) FROM restore_verifications) + (SELECT count(*) FROM region_failover_drills) AS n`))[0]!.n).toBe(before);
  });
});

describe.runIf(onServer)('without pg_dump', () => {
  it('answers 503 backup-failed naming the missing tool, and records nothing', async () => {
    const other = await t.secondInstance({
      OBSERVATORY_BACKUP_DIR: backupDir,
      OBSERVATORY_PG_DUMP_PATH: '/nonexistent/pg_dump',
      OBSERVATORY_BACKUP_SCRATCH_PREFIX: scratchPrefix,
    });
    const before = (await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM backup_snapshots`))[0]!.n;
    const res = await other.server.inject({ method: 'POST', url: `${V1}/backups/snapshots`, payload: {}, headers: { authorization: `Bearer ${(await import('../../../test/helpers/app.ts')).ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ reason: 'backup-failed' });
    expect(res.json().human).toContain('pg_dump was not found at "/nonexistent/pg_dump"');
    expect((await query<{ n: number }>(sql`SELECT count(*)::int AS n FROM backup_snapshots`))[0]!.n).toBe(before);
  });
});
