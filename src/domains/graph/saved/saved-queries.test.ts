import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../../platform/db/client.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { SAVED_QUERIES_PER_OWNER_MAX } from './service.ts';

const SAVED = `${V1}/empire/graph/saved-queries`;
const QUERY = `${V1}/empire/graph/query`;
const TEXT = 'MATCH (t:Toolset) RETURN t.key AS toolset ORDER BY toolset';

describe('saved graph queries', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2026-11-26T10:00:00Z'));
  let alice: { userId: string; token: string };
  let bob: { userId: string; token: string };

  beforeAll(async () => {
    t = await startTestApp({ clock });
    alice = await t.app.identity.createOperator({ username: 'alice', scopes: ['read:empire'] });
    bob = await t.app.identity.createOperator({ username: 'bob', scopes: ['read:empire'] });
  });
  afterAll(async () => t.close());

  const save = (token: string, body: Record<string, unknown>) => t.call({ method: 'POST', url: SAVED, token, payload: body });
  const list = async (token: string) => {
    const res = await t.call({ method: 'GET', url: SAVED, token });
    expect(res.statusCode).toBe(200);
    return res.json().rows as { name: string; ownerUserId: string; visibility: string; runCount: number; lastRunAt: string | null; query: string; description: string }[];
  };

  it('creates a private query by default and shows it to its owner only', async () => {
    const res = await save(alice.token, { name: 'toolsets', query: TEXT });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-empire-graph-saved-queries.v1', ok: true, created: true, row: { name: 'toolsets', visibility: 'private', runCount: 0, lastRunAt: null, ownerUserId: alice.userId, description: '' } });
    expect((await list(alice.token)).map((r) => r.name)).toContain('toolsets');
    expect((await list(bob.token)).map((r) => r.name)).not.toContain('toolsets');
  });

  it('upserts by (owner, name): a second save replaces the text and keeps what it was not sent', async () => {
    await save(alice.token, { name: 'shared', query: TEXT, description: 'first', visibility: 'workspace' });
    clock.advance(60_000);
    const res = await save(alice.token, { name: 'shared', query: 'MATCH (k:Key) RETURN k.key' });
    expect(res.json()).toMatchObject({ created: false, row: { query: 'MATCH (k:Key) RETURN k.key', description: 'first', visibility: 'workspace', updatedAt: clock.now().toISOString() } });
    const counted = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM graph_saved_queries WHERE name = 'shared'`));
    expect(counted).toEqual([{ n: 1 }]);
    // Another owner may use the same name for a private query of their own.
    expect((await save(bob.token, { name: 'shared', query: TEXT })).json()).toMatchObject({ created: true, row: { visibility: 'private' } });
  });

  it('lists workspace and public queries of everyone plus the caller\'s private ones, sorted by name', async () => {
    await save(bob.token, { name: 'a-bob-private', query: TEXT });
    await save(bob.token, { name: 'b-bob-workspace', query: TEXT, visibility: 'workspace' });
    const forAlice = await list(alice.token);
    const names = forAlice.map((r) => r.name);
    expect(names).toContain('b-bob-workspace');
    expect(names).not.toContain('a-bob-private');
    expect(names).toEqual([...names].sort());
    expect(forAlice.filter((r) => r.ownerUserId === bob.userId).every((r) => r.visibility !== 'private')).toBe(true);
  });

  it('refuses an invalid query with the parser\'s reason and position, storing nothing', async () => {
    const res = await save(alice.token, { name: 'broken', query: 'MATCH (n:Toolset RETURN n' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query', line: 1 });
    expect(typeof res.json().column).toBe('number');
    expect((await list(alice.token)).map((r) => r.name)).not.toContain('broken');
    const writes = await save(alice.token, { name: 'writes', query: "CREATE (n:Toolset {key: 'x'})" });
    expect(writes.statusCode).toBe(400);
    expect(writes.json().reason).toBe('invalid-query');
  });

  it('refuses bad bodies with 400 naming the field', async () => {
    expect((await save(alice.token, { name: 'x', query: TEXT, visibility: 'everyone' })).json()).toMatchObject({ reason: 'invalid-body' });
    expect((await save(alice.token, { name: '', query: TEXT })).statusCode).toBe(400);
    expect((await save(alice.token, { name: '   ', query: TEXT })).statusCode).toBe(400);
    expect((await save(alice.token, { query: TEXT })).statusCode).toBe(400);
    expect((await save(alice.token, { name: 'x', query: TEXT, extra: 1 })).statusCode).toBe(400);
  });

  it('runs a saved query by savedName, counting runs and stamping lastRunAt', async () => {
    await save(alice.token, { name: 'run-me', query: TEXT, visibility: 'workspace' });
    clock.advance(5_000);
    const res = await t.call({ method: 'POST', url: QUERY, token: bob.token, payload: { savedName: 'run-me' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-empire-graph-query.v1', query: TEXT });
    const row = (await list(alice.token)).find((r) => r.name === 'run-me')!;
    expect(row).toMatchObject({ runCount: 1, lastRunAt: clock.now().toISOString() });
  });

  it('runs the caller\'s own query before another operator\'s of the same name, and never another\'s private one', async () => {
    await save(bob.token, { name: 'mine-first', query: 'MATCH (k:Key) RETURN k.key AS key', visibility: 'workspace' });
    await save(alice.token, { name: 'mine-first', query: TEXT });
    const res = await t.call({ method: 'POST', url: QUERY, token: alice.token, payload: { savedName: 'mine-first' } });
    expect(res.json().query).toBe(TEXT);
    const hidden = await t.call({ method: 'POST', url: QUERY, token: bob.token, payload: { savedName: 'toolsets' } });
    expect(hidden.statusCode).toBe(404);
  });

  it('keeps a shared name to the operator who shared it first: nobody can squat it with their own text', async () => {
    const carol = await t.app.identity.createOperator({ username: 'carol', scopes: ['read:empire'] });
    await save(alice.token, { name: 'twice', query: TEXT, visibility: 'workspace' });
    const squat = await save(bob.token, { name: 'twice', query: 'MATCH (k:Key) RETURN k.key AS key', visibility: 'public' });
    expect(squat.statusCode).toBe(409);
    expect(squat.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict', human: expect.stringContaining('Another operator already shares') });
    // Kept private, bob's query of that name is his alone; making it shared later is refused the same way.
    expect((await save(bob.token, { name: 'twice', query: 'MATCH (k:Key) RETURN k.key AS key' })).json()).toMatchObject({ created: true, row: { visibility: 'private' } });
    expect((await save(bob.token, { name: 'twice', query: 'MATCH (k:Key) RETURN k.key AS key', visibility: 'workspace' })).statusCode).toBe(409);
    // Carol runs alice's text; bob runs his own.
    expect((await t.call({ method: 'POST', url: QUERY, token: carol.token, payload: { savedName: 'twice' } })).json().query).toBe(TEXT);
    expect((await t.call({ method: 'POST', url: QUERY, token: bob.token, payload: { savedName: 'twice' } })).json().query).toBe('MATCH (k:Key) RETURN k.key AS key');
    // Once alice stops sharing it, the name is free to share.
    await save(alice.token, { name: 'twice', query: TEXT, visibility: 'private' });
    expect((await save(bob.token, { name: 'twice', query: 'MATCH (k:Key) RETURN k.key AS key', visibility: 'workspace' })).statusCode).toBe(200);
  });

  it('lets one of two operators sharing one name at the same moment through (the database decides)', async () => {
    const erin = await t.app.identity.createOperator({ username: 'erin', scopes: ['read:empire'] });
    const answers = await Promise.all([alice, bob, erin].map((who) => save(who.token, { name: 'race', query: TEXT, visibility: 'workspace' })));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409, 409]);
    const shared = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM graph_saved_queries WHERE name = 'race' AND visibility <> 'private'`));
    expect(shared).toEqual([{ n: 1 }]);
  });

  it('wants exactly one of query and savedName', async () => {
    expect((await t.call({ method: 'POST', url: QUERY, payload: {} })).statusCode).toBe(400);
    expect((await t.call({ method: 'POST', url: QUERY, payload: { query: TEXT, savedName: 'run-me' } })).statusCode).toBe(400);
  });

  it('audits every save in the hash chain', async () => {
    const rows = rowsOf<{ verb: string }>(await t.app.database.db.execute(sql`SELECT verb FROM operator_audit WHERE verb = 'graph.saved-query-upsert'`));
    expect(rows.length).toBeGreaterThanOrEqual(5);
  });

  it('bounds how many queries one operator keeps', async () => {
    const dave = await t.app.identity.createOperator({ username: 'dave', scopes: ['read:empire'] });
    const now = new Date();
    await t.app.database.db.execute(sql`
      INSERT INTO graph_saved_queries (id, owner_user_id, name, description, query, visibility, run_count, created_at, updated_at)
      SELECT gen_random_uuid(), ${dave.userId}, 'q' || i, '', ${TEXT}, 'private', 0, ${now.toISOString()}::timestamptz, ${now.toISOString()}::timestamptz
      FROM generate_series(1, ${SAVED_QUERIES_PER_OWNER_MAX}) AS i`);
    const over = await save(dave.token, { name: 'one-more', query: TEXT });
    expect(over.statusCode).toBe(409);
    expect(over.json().reason).toBe('limit-reached');
    // Replacing an existing one is still allowed at the cap.
    expect((await save(dave.token, { name: 'q1', query: TEXT })).statusCode).toBe(200);
  });
});
