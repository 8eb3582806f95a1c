import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import type { Principal } from '../../../platform/http/registry.ts';
import { createFreezeService, freezeAbortReason } from './service.ts';

/**
 * The chaos freeze switch over HTTP on a real database (docs/chaos/README.md, "Freeze"): the seeded
 * switch, freezing and thawing with their audit verbs, the limits of the body; and, through the
 * service with a stand-in runner, that freezing aborts the open run before the switch is written.
 */

const clock = new ManualClock('2026-11-28T08:00:00.000Z');
let t: TestApp;

const read = () => t.call({ method: 'GET', url: `${V1}/chaos/freeze` });
const set = (payload: Record<string, unknown>) => t.call({ method: 'POST', url: `${V1}/chaos/freeze`, payload });
const auditRows = async () =>
  rowsOf<{ verb: string; actor: string | null; before: Record<string, unknown>; after: Record<string, unknown> }>(
    await t.app.database.db.execute(sql`SELECT verb, actor, before, after FROM operator_audit WHERE target = 'chaos-freeze:global' ORDER BY seq_no`),
  );

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

describe('the freeze switch over HTTP', () => {
  it('starts off, as the migration seeded it', async () => {
    const res = await read();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ schema: 'svc-chaos-freeze.v1', freeze: { scope: 'global', frozen: false, reason: '', updatedBy: null } });
  });

  it('freezes with a reason (chaos.freeze), reads back so, and audits the switch before and after', async () => {
    clock.set(new Date('2026-11-28T08:10:00.000Z'));
    const res = await set({ frozen: true, reason: 'Release week.' });
    expect(res.statusCode, res.body).toBe(200);
    const frozen = { scope: 'global', frozen: true, reason: 'Release week.', updatedBy: 'admin', updatedAt: '2026-11-28T08:10:00.000Z' };
    expect(res.json()).toMatchObject({ schema: 'svc-chaos-freeze.v1', freeze: frozen });
    expect((await read()).json().freeze).toEqual(frozen);
    expect(await t.app.chaos.freeze.isFrozen()).toBe(true);
    expect(await t.app.chaos.freeze.current()).toEqual(frozen);
    const audit = await auditRows();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ verb: 'chaos.freeze', actor: 'admin', before: { frozen: false, reason: '' }, after: frozen });
  });

  it('changes and audits nothing when set to the state and reason it has; a new reason is a change', async () => {
    clock.set(new Date('2026-11-28T08:20:00.000Z'));
    expect((await set({ frozen: true, reason: 'Release week.' })).json().freeze.updatedAt).toBe('2026-11-28T08:10:00.000Z');
    expect(await auditRows()).toHaveLength(1);
    const renamed = await set({ frozen: true, reason: 'Release week, extended.' });
    expect(renamed.json().freeze).toMatchObject({ frozen: true, reason: 'Release week, extended.', updatedAt: '2026-11-28T08:20:00.000Z' });
    expect((await auditRows()).map((r) => r.verb)).toEqual(['chaos.freeze', 'chaos.freeze']);
  });

  it('thaws (chaos.thaw), the reason optional', async () => {
    clock.set(new Date('2026-11-28T08:30:00.000Z'));
    const res = await set({ frozen: false });
    expect(res.statusCode).toBe(200);
    expect(res.json().freeze).toEqual({ scope: 'global', frozen: false, reason: '', updatedBy: 'admin', updatedAt: '2026-11-28T08:30:00.000Z' });
    const audit = await auditRows();
    expect(audit.map((r) => r.verb)).toEqual(['chaos.freeze', 'chaos.freeze', 'chaos.thaw']);
    expect(audit[2]).toMatchObject({ before: { frozen: true, reason: 'Release week, extended.' }, after: { frozen: false, reason: '' } });
    expect(await t.app.chaos.freeze.isFrozen()).toBe(false);
  });

  it('refuses a body without frozen, of the wrong type, with a reason over 500 characters or an unknown field (svc-error), writing nothing', async () => {
    for (const payload of [{}, { reason: 'why' }, { frozen: 'true' }, { frozen: true, reason: 'r'.repeat(501) }, { frozen: true, scope: 'global' }]) {
      const res = await set(payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body' });
    }
    expect((await read()).json().freeze.frozen).toBe(false);
    expect(await auditRows()).toHaveLength(3);
    // 500 characters are accepted.
    expect((await set({ frozen: false, reason: 'r'.repeat(500) })).statusCode).toBe(200);
  });

  it('is read with read:empire and set only with write:alerts', async () => {
    const reader = await t.tokenWith(['read:empire']);
    expect((await t.call({ method: 'GET', url: `${V1}/chaos/freeze`, token: reader })).statusCode).toBe(200);
    expect((await t.call({ method: 'POST', url: `${V1}/chaos/freeze`, payload: { frozen: true }, token: reader })).statusCode).toBe(403);
  });
});

describe('freezing aborts the open run first', () => {
  const principal: Principal = {
    userId: 'op-1',
    username: 'oncall',
    scopes: new Set(['write:alerts']),
    toolsets: null,
    via: 'bearer',
    tokenId: null,
    sessionId: null,
  };
  const ctx = { principal, requestId: 'req-freeze-test' };

  it('calls abortOpenRun with the freeze and its reason before the switch is written; thawing aborts nothing', async () => {
    const calls: { reason: string; frozenWhenCalled: boolean }[] = [];
    const freeze = createFreezeService({
      db: t.app.database.db,
      clock,
      audit: t.app.audit,
      async abortOpenRun(reason) {
        // The switch as it stands when the run is aborted: not yet written.
        calls.push({ reason, frozenWhenCalled: (await read()).json().freeze.frozen });
      },
    });
    clock.set(new Date('2026-11-28T09:00:00.000Z'));
    const frozen = await freeze.set(ctx, { frozen: true, reason: 'Incident 42 in progress' });
    expect(frozen).toMatchObject({ frozen: true, reason: 'Incident 42 in progress', updatedBy: 'oncall' });
    expect(calls).toEqual([{ reason: 'chaos was frozen by oncall: Incident 42 in progress', frozenWhenCalled: false }]);
    expect(freezeAbortReason('oncall', '')).toBe('chaos was frozen by oncall');
    await freeze.set(ctx, { frozen: false });
    expect(calls).toHaveLength(1);
    expect((await auditRows()).at(-1)).toMatchObject({ verb: 'chaos.thaw', actor: 'oncall' });
  });

  it('writes nothing when the run cannot be aborted: the error is the answer', async () => {
    const before = (await auditRows()).length;
    const freeze = createFreezeService({
      db: t.app.database.db,
      clock,
      audit: t.app.audit,
      abortOpenRun: async () => {
        throw new Error('the run could not be undone');
      },
    });
    await expect(freeze.set(ctx, { frozen: true, reason: 'try' })).rejects.toThrow('the run could not be undone');
    expect((await read()).json().freeze.frozen).toBe(false);
    expect(await auditRows()).toHaveLength(before);
  });
});
