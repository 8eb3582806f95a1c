import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';

/**
 * The token activity the cohort developer-token-7d reads (api_token_activity): the first request a
 * token authenticates on a UTC day notes that day once; later requests of the day write nothing
 * (not even lastUsedAt within its minute); `tokensCreatedWithActivity` reads the days back.
 */
const clock = new ManualClock('2026-11-01T08:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const at = (iso: string) => clock.set(iso);
const create = async (name: string) => {
  const res = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name, scopes: ['read:events'] } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ id: string; token: string }>();
};
const use = async (token: string) => {
  const res = await t.call({ method: 'GET', url: `${V1}/account`, token });
  expect(res.statusCode, res.body).toBe(200);
};
async function activity(tokenId: string): Promise<string[]> {
  const rows = rowsOf<{ day: string }>(
    await t.app.database.db.execute(sql`SELECT to_char(day, 'YYYY-MM-DD') AS day FROM api_token_activity WHERE token_id = ${tokenId} ORDER BY day`),
  );
  return rows.map((r) => r.day);
}
async function lastUsedAt(tokenId: string): Promise<string | null> {
  const [row] = rowsOf<{ at: string | null }>(
    await t.app.database.db.execute(sql`SELECT to_char(last_used_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') AS at FROM api_tokens WHERE id = ${tokenId}`),
  );
  return row!.at;
}

describe('api_token_activity', () => {
  let first = { id: '', token: '' };

  it('notes a day once: repeated requests the same day write nothing new', async () => {
    at('2026-11-02T09:00:00.000Z');
    first = await create('activity-a');
    expect(await activity(first.id)).toEqual([]);
    await use(first.token);
    expect(await activity(first.id)).toEqual(['2026-11-02']);
    expect(await lastUsedAt(first.id)).toBe('2026-11-02T09:00:00');
    for (const time of ['09:00:10', '09:00:59', '12:00:00', '23:59:50']) {
      at(`2026-11-02T${time}.000Z`);
      await use(first.token);
    }
    expect(await activity(first.id)).toEqual(['2026-11-02']);
    expect(await lastUsedAt(first.id)).toBe('2026-11-02T23:59:50');
  });

  it('notes the next UTC day at its first request, even within a minute of the last stamp', async () => {
    at('2026-11-03T00:00:05.000Z');
    await use(first.token);
    expect(await activity(first.id)).toEqual(['2026-11-02', '2026-11-03']);
    // The stamp moves to the new day at once, so later requests of the day see it noted.
    expect(await lastUsedAt(first.id)).toBe('2026-11-03T00:00:05');
    at('2026-11-03T00:00:20.000Z');
    await use(first.token);
    expect(await lastUsedAt(first.id)).toBe('2026-11-03T00:00:05');
    expect(await activity(first.id)).toEqual(['2026-11-02', '2026-11-03']);
  });

  it('writes one row when the first requests of a day arrive together', async () => {
    at('2026-11-05T10:00:00.000Z');
    await Promise.all(Array.from({ length: 5 }, () => use(first.token)));
    expect(await activity(first.id)).toEqual(['2026-11-02', '2026-11-03', '2026-11-05']);
    const [row] = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM api_token_activity WHERE token_id = ${first.id} AND day = '2026-11-05'`));
    expect(Number(row!.n)).toBe(1);
  });

  it('reads tokens created in a range with their activity of days 0 to followDays only; revoked tokens stay', async () => {
    at('2026-11-02T20:00:00.000Z');
    const second = await create('activity-b');
    at('2026-11-10T10:00:00.000Z');
    await use(first.token); // day 8 of first: outside its window
    await use(second.token); // day 8 of second: outside too
    at('2026-11-09T10:00:00.000Z');
    await use(second.token); // day 7 of second (the clock went back: a day before is still noted)
    const revoked = await t.call({ method: 'POST', url: `${V1}/tokens/${second.id}/revoke` });
    expect(revoked.statusCode).toBe(200);

    const found = await t.app.identity.tokensCreatedWithActivity({ from: new Date('2026-11-02T00:00:00.000Z'), to: new Date('2026-11-03T00:00:00.000Z'), followDays: 7 });
    expect(found.map((x) => [x.id, x.createdAt.toISOString(), x.activeDays])).toEqual([
      [first.id, '2026-11-02T09:00:00.000Z', ['2026-11-02', '2026-11-03', '2026-11-05']],
      [second.id, '2026-11-02T20:00:00.000Z', ['2026-11-09']],
    ]);
    // `to` is exclusive; an empty range reads nothing.
    expect(await t.app.identity.tokensCreatedWithActivity({ from: new Date('2026-11-02T09:00:00.001Z'), to: new Date('2026-11-02T20:00:00.000Z'), followDays: 7 })).toEqual([]);
    expect(await t.app.identity.tokensCreatedWithActivity({ from: new Date('2026-11-03T00:00:00.000Z'), to: new Date('2026-11-02T00:00:00.000Z'), followDays: 7 })).toEqual([]);
  });
});
