import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import canonicalize from 'canonicalize';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { GENESIS_HASH } from '../../platform/audit/chain.ts';
import type { FactInput } from '../../platform/audit/service.ts';
import { ManualClock } from '../../platform/clock.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { verifySavedFact } from './verify-proof.ts';

/**
 * The audit chain's endpoints through HTTP, on PGlite or on the server DATABASE_URL names. Proofs
 * are checked against an independent tree written here from RFC 9162 (MTH and PATH over the whole
 * list of leaves, recursively) and the leaves against the entry hash recomputed here from each
 * fact's fields; tampering is done with SQL straight on the tables.
 */

const clock = new ManualClock('2026-11-20T00:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
}, 120_000);
afterAll(() => t?.close());

const exec = async <T = Record<string, unknown>>(query: ReturnType<typeof sql>) => rowsOf<T>(await t.app.database.db.execute(query));
const get = (url: string, token?: string) => t.call({ method: 'GET', url, ...(token === undefined ? {} : { token }) });
const verify = async () => {
  const res = await t.call({ method: 'POST', url: `${V1}/audit/chain/verify`, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

// The independent side.
const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest();
function independentEntryHash(f: Record<string, unknown>): string {
  const { seqNo, source, sourceId, kind, actor, ts, payload, prevHash } = f;
  return sha(canonicalize({ seqNo, source, sourceId, kind, actor, ts, payload, prevHash })!).toString('hex');
}
const node = (l: string, r: string) => sha(Buffer.concat([Buffer.from(l, 'hex'), Buffer.from(r, 'hex')])).toString('hex');
const split = (n: number) => {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
};
function mth(leaves: readonly string[]): string {
  if (leaves.length === 1) return leaves[0]!;
  const k = split(leaves.length);
  return node(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
function path(m: number, leaves: readonly string[]): { hash: string; side: string }[] {
  if (leaves.length === 1) return [];
  const k = split(leaves.length);
  return m < k ? [...path(m, leaves.slice(0, k)), { hash: mth(leaves.slice(k)), side: 'right' }] : [...path(m - k, leaves.slice(k)), { hash: mth(leaves.slice(0, k)), side: 'left' }];
}

/** Empties the chain (facts, nodes, head, and the operator rows whose seqNo it frees) so a test starts from seqNo 1. */
async function emptyChain() {
  await exec(sql`DELETE FROM operator_audit`);
  await exec(sql`DELETE FROM audit_facts`);
  await exec(sql`DELETE FROM audit_merkle_nodes`);
  await exec(sql`UPDATE audit_chain_head SET seq_no = 0, head_hash = ${GENESIS_HASH}, merkle_size = 0, merkle_frontier = '[]'::jsonb`);
}

const KINDS: FactInput[] = [
  { source: 'OperatorAudit', sourceId: 'op', kind: 'operator', actor: 'alice', payload: { verb: 'thing.change', n: 0 } },
  { source: 'TrustDriftEvent', sourceId: 'drift', kind: 'drift', actor: null, payload: { toolset: 'crawler-lab', delta: [1, 2.5, 'x'] } },
  { source: 'CostAlert', sourceId: 'cost', kind: 'cost-alert-fired', actor: 'bob', payload: { pct: 80, unicode: 'é ✓ \u2028' } },
  { source: 'RestoreVerification', sourceId: 'restore', kind: 'backup', actor: null, payload: null },
];

/** Appends facts through the service's own append, one transaction each, a minute apart. */
async function append(count: number, from = 0): Promise<void> {
  for (let i = 0; i < count; i++) {
    const base = KINDS[(from + i) % KINDS.length]!;
    clock.advance(60_000);
    await withTransaction(t.app.database.db, (tx) => t.app.audit.appendFact(tx, { ...base, sourceId: `${base.sourceId}-${from + i}`, payload: base.payload === null ? null : { ...(base.payload as object), i: from + i } }));
  }
}

async function leavesNow(): Promise<string[]> {
  const rows = await exec<{ entry_hash: string }>(sql`SELECT entry_hash FROM audit_facts ORDER BY seq_no`);
  return rows.map((r) => r.entry_hash);
}

function expectProofOf(answer: Record<string, any>, leaves: readonly string[], seqNo: number) {
  const { fact, proof, head } = answer;
  expect(fact.seqNo).toBe(String(seqNo));
  expect(independentEntryHash(fact)).toBe(fact.entryHash);
  expect(proof.leafIndex).toBe(seqNo - 1);
  expect(proof.leafCount).toBe(leaves.length);
  expect(head.seqNo).toBe(String(leaves.length));
  expect(head.headHash).toBe(leaves.at(-1));
  expect(proof.leafHash).toBe(leaves[seqNo - 1]);
  expect(proof.siblings).toEqual(path(seqNo - 1, leaves));
  expect(proof.rootHash).toBe(mth(leaves));
}

describe('GET {v1}/audit/chain/{id}: inclusion proofs', () => {
  it('proves every fact of every chain of 1 to 40 facts, as an independent RFC 9162 tree does', async () => {
    await emptyChain();
    expect((await get(`${V1}/audit/chain/1`)).statusCode).toBe(404);
    for (let n = 1; n <= 40; n++) {
      await append(1, n - 1);
      const leaves = await leavesNow();
      expect(leaves).toHaveLength(n);
      for (let seqNo = 1; seqNo <= n; seqNo++) {
        const res = await get(`${V1}/audit/chain/${seqNo}`);
        expect(res.statusCode, res.body).toBe(200);
        expectProofOf(res.json(), leaves, seqNo);
      }
    }
    // By id too, and the offline verifier accepts each answer.
    const [row] = await exec<{ id: string }>(sql`SELECT id FROM audit_facts WHERE seq_no = 17`);
    const byId = await get(`${V1}/audit/chain/${row!.id.toUpperCase()}`);
    expect(byId.statusCode).toBe(200);
    expectProofOf(byId.json(), await leavesNow(), 17);
    expect(verifySavedFact(byId.json())).toMatchObject({ ok: true });
  }, 120_000);

  it('reads O(log n) stored nodes: the proof of a fact in a 40-fact chain names ≤ 2·log2 n siblings', async () => {
    const res = (await get(`${V1}/audit/chain/23`)).json();
    expect(res.proof.siblings.length).toBeLessThanOrEqual(Math.ceil(Math.log2(40)));
    const [row] = await exec<{ nodes: number }>(sql`SELECT count(*)::int AS nodes FROM audit_merkle_nodes`);
    // Every perfect subtree of 40 leaves above the leaves: 20 + 10 + 5 + 2 + 1.
    expect(Number(row!.nodes)).toBe(38);
  });

  it('builds the nodes of facts written before the tree existed, lazily and at start-up', async () => {
    await emptyChain();
    await append(12);
    const before = await exec(sql`SELECT level, idx::text AS idx, hash FROM audit_merkle_nodes ORDER BY level, idx`);
    // As a database migrated from before the tree: facts, no nodes, merkle_size 0.
    await exec(sql`DELETE FROM audit_merkle_nodes`);
    await exec(sql`UPDATE audit_chain_head SET merkle_size = 0, merkle_frontier = '[]'::jsonb`);
    // Appends do not extend a tree that lags behind the chain.
    await append(3, 12);
    expect((await exec<{ merkle_size: string }>(sql`SELECT merkle_size::text FROM audit_chain_head`))[0]!.merkle_size).toBe('0');
    const res = await get(`${V1}/audit/chain/5`);
    expect(res.statusCode, res.body).toBe(200);
    const leaves = await leavesNow();
    expectProofOf(res.json(), leaves, 5);
    const after = await exec(sql`SELECT level, idx::text AS idx, hash FROM audit_merkle_nodes WHERE idx::bigint * 2 ^ level < 12 AND (idx + 1) * 2 ^ level <= 12 ORDER BY level, idx`);
    expect(after).toEqual(before);
    // Caught up: the next append extends the tree again.
    await append(1, 15);
    expect((await exec<{ merkle_size: string }>(sql`SELECT merkle_size::text FROM audit_chain_head`))[0]!.merkle_size).toBe('16');

    // At start-up: a new instance catches up in the background.
    await exec(sql`DELETE FROM audit_merkle_nodes`);
    await exec(sql`UPDATE audit_chain_head SET merkle_size = 0, merkle_frontier = '[]'::jsonb`);
    await t.secondInstance();
    const deadline = Date.now() + 20_000;
    let size = '0';
    while (size !== '16' && Date.now() < deadline) {
      size = (await exec<{ merkle_size: string }>(sql`SELECT merkle_size::text FROM audit_chain_head`))[0]!.merkle_size;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(size).toBe('16');
    const all = await leavesNow();
    for (const seqNo of [1, 8, 16]) expectProofOf((await get(`${V1}/audit/chain/${seqNo}`)).json(), all, seqNo);
  }, 60_000);

  it('answers 400 for an id that is neither a uuid nor a decimal seqNo, and 404 for an unknown fact', async () => {
    for (const bad of ['abc', '-1', '1.5', '0x10', '12345678901234567890', '3b0d6a4e-8f21-4c3d-9a57']) {
      const res = await get(`${V1}/audit/chain/${encodeURIComponent(bad)}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json(), bad).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-params' });
    }
    for (const unknown of ['0', '999999', '3b0d6a4e-8f21-4c3d-9a57-6e1f2b3c4d5e']) {
      const res = await get(`${V1}/audit/chain/${unknown}`);
      expect(res.statusCode, unknown).toBe(404);
      expect(res.json().reason).toBe('not-found');
    }
  });
});

describe('GET {v1}/audit/chain: the list', () => {
  beforeAll(async () => {
    await emptyChain();
    clock.set('2026-11-21T00:00:00.000Z');
    await append(12); // ts 00:01 … 00:12; kinds cycle operator, drift, cost-alert-fired, backup
  });

  it('lists facts without payload, highest seqNo first, with the head', async () => {
    const body = (await get(`${V1}/audit/chain`)).json();
    expect(body.schema).toBe('svc-audit-chain-list.v1');
    expect(body.facts.map((f: { seqNo: string }) => f.seqNo)).toEqual(Array.from({ length: 12 }, (_, i) => String(12 - i)));
    expect(body.facts[0]).not.toHaveProperty('payload');
    expect(Object.keys(body.facts[0]).sort()).toEqual(['actor', 'entryHash', 'id', 'kind', 'prevHash', 'seqNo', 'source', 'sourceId', 'ts']);
    expect(body.head).toMatchObject({ seqNo: '12', headHash: body.facts[0].entryHash });
    expect(body.nextCursor).toBeNull();
  });

  it('filters by kind, source, actor, since (inclusive) and until (exclusive)', async () => {
    const seqs = async (query: string) => (await get(`${V1}/audit/chain?${query}`)).json().facts.map((f: { seqNo: string }) => Number(f.seqNo));
    expect(await seqs('kind=drift')).toEqual([10, 6, 2]);
    expect(await seqs('source=CostAlert')).toEqual([11, 7, 3]);
    expect(await seqs('actor=alice')).toEqual([9, 5, 1]);
    expect(await seqs('since=2026-11-21T00:10:00Z')).toEqual([12, 11, 10]);
    expect(await seqs('until=2026-11-21T00:03:00.000Z')).toEqual([2, 1]);
    expect(await seqs('since=2026-11-21T01:02:00%2B01:00&until=2026-11-21T00:05:00Z')).toEqual([4, 3, 2]);
    expect(await seqs('kind=operator&actor=alice&since=2026-11-21T00:02:00Z')).toEqual([9, 5]);
    expect(await seqs('kind=compliance')).toEqual([]);
  });

  it('pages with the last seqNo as cursor, without gaps or repeats', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: { facts: { seqNo: string }[]; nextCursor: string | null } = (await get(`${V1}/audit/chain?limit=5${cursor ? `&cursor=${cursor}` : ''}`)).json();
      seen.push(...body.facts.map((f) => Number(f.seqNo)));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => 12 - i));
    const filtered = (await get(`${V1}/audit/chain?kind=drift&limit=2`)).json();
    expect(filtered.nextCursor).toBe('6');
    expect((await get(`${V1}/audit/chain?kind=drift&limit=2&cursor=6`)).json().facts.map((f: { seqNo: string }) => f.seqNo)).toEqual(['2']);
  });

  it('refuses bad filter values with 400 invalid-query naming the field', async () => {
    const cases: [string, string][] = [
      ['kind=bogus', 'query.kind'],
      ['source=Nope', 'query.source'],
      ['since=yesterday', 'query.since'],
      ['until=2026-11-21', 'query.until'],
      ['since=2026-11-21T00:10:00Z&until=2026-11-21T00:10:00Z', 'query.until'],
      ['cursor=abc', 'query.cursor'],
      ['cursor=-5', 'query.cursor'],
      ['limit=0', 'query.limit'],
      ['limit=501', 'query.limit'],
      ['actor=', 'query.actor'],
      ['verb=x', 'query.verb'],
    ];
    for (const [query, field] of cases) {
      const res = await get(`${V1}/audit/chain?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', field });
    }
    expect((await get(`${V1}/audit/chain?limit=500`)).statusCode).toBe(200);
  });

  it('answers head null for an empty chain', async () => {
    await emptyChain();
    const body = (await get(`${V1}/audit/chain`)).json();
    expect(body).toMatchObject({ facts: [], head: null, nextCursor: null });
  });
});

describe('scopes', () => {
  it('needs read:empire to read and write:alerts to verify', async () => {
    const dashboardOnly = await t.tokenWith(['read:dashboard']);
    const reader = await t.tokenWith(['read:empire']);
    for (const url of [`${V1}/audit/chain`, `${V1}/audit/chain/1`]) {
      const res = await get(url, dashboardOnly);
      expect(res.statusCode, url).toBe(403);
      expect(res.json().reason).toBe('forbidden');
    }
    expect((await get(`${V1}/audit/chain`, reader)).statusCode).toBe(200);
    expect((await get(`${V1}/audit/chain`, null as unknown as string)).statusCode).toBe(401);
    const res = await t.call({ method: 'POST', url: `${V1}/audit/chain/verify`, payload: {}, token: reader });
    expect(res.statusCode).toBe(403);
  });
});

describe('POST {v1}/audit/chain/verify', () => {
  type Row = { seq_no: string; payload: unknown; prev_hash: string; entry_hash: string };
  const factRow = async (seqNo: number) => (await exec<Row>(sql`SELECT seq_no::text, payload, prev_hash, entry_hash FROM audit_facts WHERE seq_no = ${seqNo}`))[0]!;

  beforeAll(async () => {
    await emptyChain();
    await append(30);
  });

  it('reports an intact chain, walks every fact and records audit.verify-chain after the walk', async () => {
    const body = await verify();
    expect(body).toMatchObject({ schema: 'svc-audit-chain-verify.v1', intact: true, walkedCount: 30, divergence: null, merkle: { intact: true, checkedLeaves: 30, divergence: null } });
    expect(body.head.seqNo).toBe('30');
    const last = (await get(`${V1}/audit/chain/31`)).json().fact;
    expect(last.payload).toMatchObject({ verb: 'audit.verify-chain', target: 'audit-chain', after: { intact: true, walkedCount: 30, headSeqNo: '30' } });
    const rows = (await get(`${V1}/honeypot/ops/audit?verb=audit.verify-chain`)).json().rows;
    expect(rows[0].seqNo).toBe('31');
    // The chain that includes the verify's own fact is intact too.
    expect(await verify()).toMatchObject({ intact: true, walkedCount: 31 });
  });

  it('names the fact whose payload was edited: entry-mismatch (the nodes still match the stored hashes)', async () => {
    const original = await factRow(7);
    await exec(sql`UPDATE audit_facts SET payload = jsonb_set(payload, '{i}', '999') WHERE seq_no = 7`);
    try {
      const body = await verify();
      expect(body).toMatchObject({ intact: false, divergence: { seqNo: '7', reason: 'entry-mismatch' }, merkle: { intact: true } });
      expect(body.walkedCount).toBe(Number(body.head.seqNo));
      // The saved answer no longer verifies offline.
      expect(verifySavedFact((await get(`${V1}/audit/chain/7`)).json())).toMatchObject({ ok: false, reason: expect.stringContaining('entryHash mismatch') });
    } finally {
      await exec(sql`UPDATE audit_facts SET payload = ${JSON.stringify(original.payload)}::jsonb WHERE seq_no = 7`);
    }
    expect((await verify()).intact).toBe(true);
  });

  it('names the fact whose entryHash was edited: entry-mismatch, and the node above it no longer matches', async () => {
    const original = await factRow(12);
    await exec(sql`UPDATE audit_facts SET entry_hash = ${'a'.repeat(64)} WHERE seq_no = 12`);
    try {
      const body = await verify();
      expect(body).toMatchObject({ intact: false, divergence: { seqNo: '12', reason: 'entry-mismatch' }, merkle: { intact: false, divergence: { level: 1, index: 5, reason: 'node-mismatch' } } });
    } finally {
      await exec(sql`UPDATE audit_facts SET entry_hash = ${original.entry_hash} WHERE seq_no = 12`);
    }
  });

  it('names the fact whose prevHash was edited: prev-mismatch', async () => {
    const original = await factRow(3);
    await exec(sql`UPDATE audit_facts SET prev_hash = ${'b'.repeat(64)} WHERE seq_no = 3`);
    try {
      expect(await verify()).toMatchObject({ intact: false, divergence: { seqNo: '3', reason: 'prev-mismatch' } });
    } finally {
      await exec(sql`UPDATE audit_facts SET prev_hash = ${original.prev_hash} WHERE seq_no = 3`);
    }
  });

  it('names fact 1 when its prevHash is not the genesis hash', async () => {
    const original = await factRow(1);
    await exec(sql`UPDATE audit_facts SET prev_hash = ${'1'.repeat(64)} WHERE seq_no = 1`);
    try {
      expect(await verify()).toMatchObject({ intact: false, divergence: { seqNo: '1', reason: 'prev-mismatch' } });
    } finally {
      await exec(sql`UPDATE audit_facts SET prev_hash = ${original.prev_hash} WHERE seq_no = 1`);
    }
  });

  it('names the next fact when an edit recomputed the edited fact\'s own hash: prev-mismatch', async () => {
    const original = await factRow(9);
    const [fact] = await exec<Record<string, unknown>>(sql`SELECT seq_no::text AS "seqNo", source, source_id AS "sourceId", kind, actor, ts, payload, prev_hash AS "prevHash" FROM audit_facts WHERE seq_no = 9`);
    const forged = { ...fact!, payload: { forged: true } };
    await exec(sql`UPDATE audit_facts SET payload = '{"forged":true}'::jsonb, entry_hash = ${independentEntryHash(forged)} WHERE seq_no = 9`);
    try {
      expect(await verify()).toMatchObject({ intact: false, divergence: { seqNo: '10', reason: 'prev-mismatch' } });
    } finally {
      await exec(sql`UPDATE audit_facts SET payload = ${JSON.stringify(original.payload)}::jsonb, entry_hash = ${original.entry_hash} WHERE seq_no = 9`);
    }
  });

  it('names the fact after a deleted one, and the missing tail when the last facts are deleted', async () => {
    const saved = await exec(sql`SELECT * FROM audit_facts WHERE seq_no = 15`);
    await exec(sql`DELETE FROM audit_facts WHERE seq_no = 15`);
    try {
      expect(await verify()).toMatchObject({ intact: false, divergence: { seqNo: '16', reason: 'prev-mismatch' } });
    } finally {
      await exec(sql`INSERT INTO audit_facts SELECT * FROM jsonb_populate_record(NULL::audit_facts, ${JSON.stringify(saved[0])}::jsonb)`);
    }
    expect((await verify()).intact).toBe(true);

    const head = (await exec<{ seq_no: string }>(sql`SELECT seq_no::text FROM audit_chain_head`))[0]!.seq_no;
    const tail = await exec(sql`SELECT * FROM audit_facts WHERE seq_no = ${Number(head)}`);
    await exec(sql`DELETE FROM audit_facts WHERE seq_no = ${Number(head)}`);
    try {
      const body = await verify();
      expect(body).toMatchObject({ intact: false, divergence: { seqNo: head, reason: 'prev-mismatch' }, walkedCount: Number(head) - 1 });
    } finally {
      await exec(sql`INSERT INTO audit_facts SELECT * FROM jsonb_populate_record(NULL::audit_facts, ${JSON.stringify(tail[0])}::jsonb)`);
    }
  });

  it('reports a changed Merkle node, and a proof through it no longer verifies', async () => {
    const [original] = await exec<{ hash: string }>(sql`SELECT hash FROM audit_merkle_nodes WHERE level = 2 AND idx = 1`);
    await exec(sql`UPDATE audit_merkle_nodes SET hash = ${'c'.repeat(64)} WHERE level = 2 AND idx = 1`);
    try {
      const body = await verify();
      expect(body).toMatchObject({ intact: true, merkle: { intact: false, divergence: { level: 2, index: 1, reason: 'node-mismatch' } } });
      // Fact 1's path passes the subtree of facts 5..8 as a sibling.
      const answer = (await get(`${V1}/audit/chain/1`)).json();
      expect(verifySavedFact(answer)).toMatchObject({ ok: false, reason: expect.stringContaining('root mismatch') });
    } finally {
      await exec(sql`UPDATE audit_merkle_nodes SET hash = ${original!.hash} WHERE level = 2 AND idx = 1`);
    }
    expect(await verify()).toMatchObject({ intact: true, merkle: { intact: true } });
  });

  it('reports a head row whose frontier was changed, and appends go on meanwhile', async () => {
    const [saved] = await exec<{ frontier: unknown }>(sql`SELECT merkle_frontier AS frontier FROM audit_chain_head`);
    await exec(sql`UPDATE audit_chain_head SET merkle_frontier = '{"x":1}'::jsonb`);
    try {
      const body = await verify();
      expect(body).toMatchObject({ intact: true, merkle: { intact: false, divergence: { level: 0, reason: 'frontier-mismatch' } } });
      // The verify's own fact was appended although the tree could not be extended.
      expect((await verify()).intact).toBe(true);
    } finally {
      await exec(sql`UPDATE audit_chain_head SET merkle_frontier = ${JSON.stringify(saved!.frontier)}::jsonb`);
    }
    // The facts appended meanwhile are folded in by the catch-up.
    const body = await verify();
    expect(body).toMatchObject({ intact: true, merkle: { intact: true } });
    expect(body.merkle.checkedLeaves).toBe(Number(body.head.seqNo));
  });

  it('walks in batches: a chain longer than one batch is verified whole', async () => {
    const head = Number((await exec<{ seq_no: string }>(sql`SELECT seq_no::text FROM audit_chain_head`))[0]!.seq_no);
    // Bulk-append past 2,000 facts through the append itself, in large transactions.
    for (let done = 0; done < 2100; done += 700) {
      await withTransaction(t.app.database.db, async (tx) => {
        for (let i = 0; i < 700; i++) await t.app.audit.appendFact(tx, { source: 'ComplianceEvaluation', sourceId: `bulk-${done + i}`, kind: 'compliance', actor: null, payload: { i: done + i } });
      });
    }
    const body = await verify();
    expect(body).toMatchObject({ intact: true, walkedCount: head + 2100, merkle: { intact: true, checkedLeaves: head + 2100 } });
    const original = await factRow(2050);
    await exec(sql`UPDATE audit_facts SET payload = '{"i":-1}'::jsonb WHERE seq_no = 2050`);
    try {
      expect(await verify()).toMatchObject({ intact: false, divergence: { seqNo: '2050', reason: 'entry-mismatch' } });
    } finally {
      await exec(sql`UPDATE audit_facts SET payload = ${JSON.stringify(original.payload)}::jsonb WHERE seq_no = 2050`);
    }
    const leaves = await leavesNow();
    for (const seqNo of [1, 1024, 2048, 2050, leaves.length]) expectProofOf((await get(`${V1}/audit/chain/${seqNo}`)).json(), leaves, seqNo);
  }, 120_000);
});

describe('npm run cli -- audit:verify-proof', () => {
  const run = promisify(execFile);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'audit-proof-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function cli(answer: unknown): Promise<{ code: number; stdout: string; stderr: string }> {
    const file = join(dir, `answer-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, typeof answer === 'string' ? answer : JSON.stringify(answer, null, 2));
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'audit:verify-proof', file], { env: { PATH: process.env.PATH ?? '' } });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it('verifies a saved answer offline and refuses a tampered one with the reason', async () => {
    await emptyChain();
    await append(11);
    const saved = (await get(`${V1}/audit/chain/6`)).json();
    const ok = await cli(saved);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^verified: fact 6 .* leaf 5 of 11/);

    const tampered = structuredClone(saved);
    tampered.fact.payload = { forged: true };
    const bad = await cli(tampered);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('not verified: entryHash mismatch');
    expect((await cli('{ not json')).code).toBe(1);
  }, 60_000);

  it('checks every step: leaf hash, sibling hashes, sides, path length and position', async () => {
    const saved = (await get(`${V1}/audit/chain/6`)).json();
    expect(verifySavedFact(saved)).toMatchObject({ ok: true });
    const variants: [string, (a: any) => void, string][] = [
      ['sibling hash', (a) => (a.proof.siblings[1].hash = 'd'.repeat(64)), 'root mismatch'],
      ['side', (a) => (a.proof.siblings[0].side = a.proof.siblings[0].side === 'left' ? 'right' : 'left'), 'side must be'],
      ['one sibling too few', (a) => a.proof.siblings.pop(), 'too few'],
      ['one sibling too many', (a) => a.proof.siblings.push({ hash: 'e'.repeat(64), side: 'left' }), 'entries'],
      ['leaf index', (a) => (a.proof.leafIndex = 4), 'not fact.seqNo'],
      ['leaf count beyond the head', (a) => (a.proof.leafCount = 12), 'beyond the head'],
      ['leaf hash', (a) => (a.proof.leafHash = 'f'.repeat(64)), 'leafHash'],
      ['root', (a) => (a.proof.rootHash = '0'.repeat(64)), 'root mismatch'],
      ['seqNo', (a) => (a.fact.seqNo = '7'), 'entryHash mismatch'],
    ];
    for (const [name, change, reason] of variants) {
      const copy = structuredClone(saved);
      change(copy);
      const check = verifySavedFact(copy);
      expect(check.ok, name).toBe(false);
      expect((check as { reason: string }).reason, name).toContain(reason);
    }
  });
});
