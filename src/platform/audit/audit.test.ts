import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.ts';
import type { Database } from '../db/client.ts';
import { withTransaction } from '../db/transaction.ts';
import { openTestDatabase, type TestDatabase } from '../../../test/helpers/database.ts';
import { startTestApp, V1 } from '../../../test/helpers/app.ts';
import { entryHashOf, GENESIS_HASH } from './chain.ts';
import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../db/client.ts';
import { listFactsAscending } from './repository.ts';
import { createAuditLog } from './service.ts';

let testDb: TestDatabase;
let first: Database;
let second: Database;

beforeAll(async () => {
  ({ testDb, database: first } = await openTestDatabase());
  second = await testDb.open();
});
afterAll(() => testDb.drop());

async function expectIntactChain(database: Database) {
  const facts = await listFactsAscending(database.db);
  facts.forEach((fact, index) => {
    expect(fact.seqNo).toBe(index + 1);
    expect(fact.prevHash).toBe(index === 0 ? GENESIS_HASH : facts[index - 1]!.entryHash);
    expect(fact.entryHash).toBe(entryHashOf(fact as Parameters<typeof entryHashOf>[0]));
    expect(fact.entryHash).toMatch(/^[0-9a-f]{64}$/);
  });
  await expectMerkleNodesOf(database, facts.map((f) => f.entryHash));
  return facts;
}

/** The stored Merkle nodes are exactly the perfect subtrees of the leaves, hashed independently here. */
async function expectMerkleNodesOf(database: Database, leaves: string[]) {
  const hash = (l: string, r: string) => createHash('sha256').update(Buffer.from(l, 'hex')).update(Buffer.from(r, 'hex')).digest('hex');
  const want = new Map<string, string>();
  let level = leaves;
  for (let l = 1; level.length >= 2; l++) {
    const up: string[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) up.push(hash(level[i]!, level[i + 1]!));
    up.forEach((h, i) => want.set(`${l}:${i}`, h));
    level = up;
  }
  const rows = rowsOf<{ level: number; idx: string; hash: string }>(await database.db.execute(sql`SELECT level, idx::text AS idx, hash FROM audit_merkle_nodes`));
  expect(new Map(rows.map((r) => [`${r.level}:${r.idx}`, r.hash]))).toEqual(want);
  const [head] = rowsOf<{ merkle_size: string; seq_no: string }>(await database.db.execute(sql`SELECT merkle_size::text, seq_no::text FROM audit_chain_head`));
  expect(head!.merkle_size).toBe(head!.seq_no);
}

describe('audit chain append', () => {
  it('hashes a fact over its canonical JSON, so a changed field changes the hash', () => {
    const body = { seqNo: 1, source: 'OperatorAudit' as const, sourceId: 'a', kind: 'operator' as const, actor: 'admin', ts: '2026-01-01T00:00:00.000Z', payload: { b: 1, a: [1, 2] }, prevHash: GENESIS_HASH };
    const hash = entryHashOf(body);
    expect(entryHashOf({ ...body, payload: { a: [1, 2], b: 1 } })).toBe(hash);
    expect(entryHashOf({ ...body, actor: 'mallory' })).not.toBe(hash);
    expect(entryHashOf({ ...body, seqNo: 2 })).not.toBe(hash);
  });

  it('stays gapless and linked under concurrent appends from two instances', async () => {
    const clock = new ManualClock();
    const logs = [createAuditLog({ clock }), createAuditLog({ clock })];
    const databases = [first, second];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        withTransaction(databases[i % 2]!.db, (tx) =>
          logs[i % 2]!.record(tx, {
            verb: 'test.race',
            target: `thing:${i}`,
            surface: 'api',
            actor: { userId: null, username: `racer-${i % 2}` },
            after: { i },
          }),
        ),
      ),
    );
    const facts = await expectIntactChain(first);
    expect(facts.filter((f) => f.kind === 'operator')).toHaveLength(60);
    expect(new Set(facts.map((f) => (f.payload as { target: string }).target)).size).toBe(60);
  });

  it('rolls the fact back with the change when the transaction fails', async () => {
    const log = createAuditLog({ clock: new ManualClock() });
    const before = (await listFactsAscending(first.db)).length;
    await expect(
      withTransaction(first.db, async (tx) => {
        await log.record(tx, { verb: 'test.fail', target: 'x', surface: 'api', actor: null });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    expect(await listFactsAscending(first.db)).toHaveLength(before);
    await withTransaction(first.db, (tx) => log.record(tx, { verb: 'test.after', target: 'y', surface: 'api', actor: null }));
    await expectIntactChain(first);
  });
});

describe('audit through the API', () => {
  it('writes one row and one fact per state change, even with racing requests on two instances', async () => {
    const t = await startTestApp();
    try {
      const other = await t.secondInstance();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? other.server : t.app.server).inject({
            method: 'POST',
            url: `${V1}/tokens`,
            headers: { authorization: `Bearer ${'svctok_testadmintokentestadmintokentestadmin00'}` },
            payload: { name: `racer-${i}`, scopes: ['read:events'] },
          }),
        ),
      );
      expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      const rows = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=token.create&limit=500` })).json().rows;
      const racers = rows.filter((r: { after: { name: string } }) => r.after.name.startsWith('racer-'));
      expect(racers).toHaveLength(20);
      const seqs = rows.map((r: { seqNo: string }) => Number(r.seqNo));
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
      const facts = await expectIntactChain(t.app.database);
      const factIds = new Set(facts.map((f) => f.sourceId));
      for (const row of racers) expect(factIds.has(row.id)).toBe(true);
    } finally {
      await t.close();
    }
  });

  it('pages newest first with a cursor', async () => {
    const t = await startTestApp();
    try {
      for (let i = 0; i < 5; i++) await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: `p${i}`, scopes: ['read:events'] } });
      const page1 = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=token.create&limit=3` })).json();
      expect(page1.rows.map((r: { after: { name: string } }) => r.after.name)).toEqual(['p4', 'p3', 'p2']);
      const page2 = (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=token.create&limit=3&cursor=${page1.nextCursor}` })).json();
      expect(page2.rows.map((r: { after: { name: string } }) => r.after.name)).toEqual(['p1', 'p0']);
      expect(page2.nextCursor).toBeNull();
    } finally {
      await t.close();
    }
  });
});
