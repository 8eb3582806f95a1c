import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../src/app.ts';
import { ManualClock } from '../src/platform/clock.ts';
import { listRecentRuns } from '../src/platform/jobs/repository.ts';
import { startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { onServer } from './helpers/database.ts';

/**
 * Instances keep no state of their own: two of them on one database behave as one service.
 * On the PostgreSQL server each instance has its own connection pool, as separate processes would.
 */
let t: TestApp;
let other: App;
const clock = new ManualClock('2026-11-23T10:16:00.000Z');
beforeAll(async () => {
  t = await startTestApp({ clock });
  other = await t.secondInstance();
});
afterAll(() => t.close());

const on = (app: App, method: 'GET' | 'POST', url: string, token: string, payload?: object) =>
  app.server.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });

describe('two instances on one database', () => {
  it.runIf(onServer)(`uses separate connection pools on the server${onServer ? '' : ' (skipped: DATABASE_URL is not set; on PGlite both instances share one embedded database)'}`, () => {
    expect(other.database === t.app.database).toBe(false);
    expect(other.database.driver).toBe('node-postgres');
  });

  it('accepts on one instance a token made on the other, and honours revocation made on either', async () => {
    const created = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'roaming', scopes: ['read:events', 'write:tokens'] } });
    const { token, id } = created.json();
    expect((await on(other, 'GET', `${V1}/account`, token)).json()).toMatchObject({ username: 'admin', scopes: ['read:events', 'write:tokens'] });
    const listed = (await on(other, 'GET', `${V1}/tokens`, token)).json().tokens.map((x: { id: string }) => x.id);
    expect(listed).toContain(id);
    expect((await on(other, 'POST', `${V1}/tokens/${id}/revoke`, token)).statusCode).toBe(200);
    expect((await t.call({ method: 'GET', url: `${V1}/account`, token })).statusCode).toBe(401);
  });

  it('runs a scheduled job once when both instances tick at its time', async () => {
    clock.set('2026-11-23T10:17:05.000Z');
    const [a, b] = await Promise.all([t.app.scheduler.tick(), other.scheduler.tick()]);
    const sweeps = [...a, ...b].filter((r) => r.job === 'session-sweep');
    expect(sweeps).toHaveLength(1);
    expect(sweeps[0]).toMatchObject({ scheduledFor: '2026-11-23T10:17:00.000Z', outcome: 'ok' });
    expect([...(await t.app.scheduler.tick()), ...(await other.scheduler.tick())]).toEqual([]);
    const stored = (await listRecentRuns(t.app.database.db, 50)).filter((r) => r.job === 'session-sweep' && r.trigger === 'schedule');
    expect(stored).toHaveLength(1);
  });

  it('keeps both instances starting together safe: migrations and bootstrap run under one lock', async () => {
    const third = await t.secondInstance();
    const fourth = await t.secondInstance();
    const admins = await Promise.all([third, fourth].map((app) => app.identity.findUserByUsername('admin')));
    expect(new Set(admins.map((u) => u?.id)).size).toBe(1);
  });
});
