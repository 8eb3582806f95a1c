import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { ManualClock } from '../../../platform/clock.ts';
import { rowsOf } from '../../../platform/db/client.ts';

/**
 * The chaos experiment registry over HTTP on a real database (docs/chaos/README.md, "Experiments"):
 * every registration rule and its refusal, the defaults and the cap of the recovery objective,
 * newest-first paging through rows that share a creation time, the filters, and the pause, resume
 * and retire transitions with their audit rows. Targets are checked against this deployment's own
 * registry and scheduler (targets.rules.test.ts has the rules over a catalogue of its own).
 */

const clock = new ManualClock('2026-11-28T08:00:00.000Z');
let t: TestApp;
let adminUserId = '';

type Experiment = {
  id: string;
  slug: string;
  kind: string;
  target: string;
  description: string;
  blastRadius: string;
  recoverySloSec: number;
  cooldownMinutes: number;
  severity: string;
  status: string;
  ownerUserId: string | null;
  createdAt: string;
  updatedAt: string;
};

const register = (payload: Record<string, unknown>) => t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload });
const list = (query: Record<string, string> = {}) => t.call({ method: 'GET', url: `${V1}/chaos/experiments`, query });
const act = (id: string, action: 'pause' | 'resume' | 'retire') => t.call({ method: 'POST', url: `${V1}/chaos/experiments/${id}/${action}`, payload: {} });

async function registered(payload: Record<string, unknown>): Promise<Experiment> {
  const res = await register(payload);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ schema: 'svc-chaos-experiment.v1', ok: true });
  return res.json().experiment;
}

async function refusal(payload: Record<string, unknown>): Promise<{ reason: string; human: string }> {
  const res = await register(payload);
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(body).toMatchObject({ schema: 'svc-chaos-experiment.v1', ok: false });
  expect(body.experiment).toBeUndefined();
  return body;
}

const auditRows = async (id: string) =>
  rowsOf<{ verb: string; actor_user_id: string | null; before: Experiment | null; after: Experiment | null }>(
    await t.app.database.db.execute(sql`SELECT verb, actor_user_id, before, after FROM operator_audit WHERE target = ${`chaos-experiment:${id}`} ORDER BY seq_no`),
  );

const valid = { slug: 'search-latency', kind: 'synthetic-latency', target: 'searchTopics' };

beforeAll(async () => {
  t = await startTestApp({ clock });
  adminUserId = (await t.call({ method: 'GET', url: `${V1}/account` })).json().userId;
});
afterAll(async () => t?.close());

describe('registering', () => {
  it('registers with the defaults of the kind: its category as blast radius, its recovery objective, 60 minutes, minor, active, owned by the caller', async () => {
    const experiment = await registered(valid);
    expect(experiment).toMatchObject({
      slug: 'search-latency',
      kind: 'synthetic-latency',
      target: 'searchTopics',
      description: '',
      blastRadius: 'http',
      recoverySloSec: 30,
      cooldownMinutes: 60,
      severity: 'minor',
      status: 'active',
      ownerUserId: adminUserId,
      createdAt: clock.now().toISOString(),
      updatedAt: clock.now().toISOString(),
    });
    const audit = await auditRows(experiment.id);
    expect(audit).toEqual([{ verb: 'chaos.register', actor_user_id: adminUserId, before: null, after: experiment }]);
  });

  it('takes what it is given, and caps the recovery objective at the category\'s maximum window rather than refusing it', async () => {
    const given = await registered({
      slug: 'nightly-sweep-skip',
      kind: 'cron-skip-one',
      target: 'session-sweep',
      description: 'Skip one sweep; the next one catches up.',
      recoverySloSec: 1200,
      cooldownMinutes: 1440,
      severity: 'major',
    });
    expect(given).toMatchObject({ blastRadius: 'scheduler', recoverySloSec: 1200, cooldownMinutes: 1440, severity: 'major', description: 'Skip one sweep; the next one catches up.' });
    const capped = await registered({ slug: 'readonly-long', kind: 'prisma-readonly-window', target: 'primary', recoverySloSec: 100_000, cooldownMinutes: 1 });
    expect(capped).toMatchObject({ blastRadius: 'database', recoverySloSec: 120, cooldownMinutes: 1 });
    expect((await registered({ slug: 'skip-capped', kind: 'cron-skip-one', target: 'session-sweep', recoverySloSec: 3601 })).recoverySloSec).toBe(3600);
    expect((await registered({ slug: 'rotate-all', kind: 'bridge-token-rotate-rehearsal', target: '*' })).blastRadius).toBe('bridge');
  });

  it('refuses each broken rule with 400, ok false, its reason and a sentence', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ ...valid, slug: undefined }, 'invalid-slug', /1 to 128 characters of a-z, 0-9 and -/],
      [{ ...valid, slug: '' }, 'invalid-slug', /slug/],
      [{ ...valid, slug: 'Search-Latency' }, 'invalid-slug', /slug/],
      [{ ...valid, slug: 'search_latency' }, 'invalid-slug', /slug/],
      [{ ...valid, slug: 'a'.repeat(129) }, 'invalid-slug', /slug/],
      [{ ...valid, slug: 'search-latency' }, 'slug-taken', /already a chaos experiment with the slug search-latency/],
      [{ ...valid, slug: 'x1', kind: undefined }, 'invalid-kind', /kind must be one of synthetic-latency, bridge-token-rotate-rehearsal/],
      [{ ...valid, slug: 'x1', kind: 'disk-fill' }, 'invalid-kind', /kind/],
      [{ ...valid, slug: 'x1', target: undefined }, 'invalid-target', /1 to 256 characters/],
      [{ ...valid, slug: 'x1', target: '' }, 'invalid-target', /target/],
      [{ ...valid, slug: 'x1', target: `/${'a'.repeat(256)}` }, 'invalid-target', /target/],
      [{ ...valid, slug: 'x1', target: 'noSuchEndpoint' }, 'unknown-target', /neither an endpoint id of the registry nor a path prefix/],
      [{ ...valid, slug: 'x1', kind: 'cron-skip-one', target: 'no-such-job' }, 'unknown-target', /There is no job named no-such-job/],
      [{ ...valid, slug: 'x1', kind: 'cron-skip-one', target: 'honeypot-rollup-rebuild' }, 'unknown-target', /runs only on demand/],
      [{ ...valid, slug: 'x1', kind: 'cron-skip-one', target: 'chaos-schedule' }, 'unknown-target', /cannot skip its own run/],
      [{ ...valid, slug: 'x1', kind: 'feature-flag-flip', target: 'no-such-flag' }, 'unknown-target', /no runtime flag named no-such-flag/],
      [{ ...valid, slug: 'x1', kind: 'prisma-readonly-window', target: 'replica' }, 'unknown-target', /must be primary/],
      [{ ...valid, slug: 'x1', kind: 'bridge-token-rotate-rehearsal', target: 'EU West' }, 'unknown-target', /not a region key/],
      [{ ...valid, slug: 'x1', recoverySloSec: 0 }, 'invalid-recovery-slo', /whole number of seconds, at least 1/],
      [{ ...valid, slug: 'x1', recoverySloSec: -5 }, 'invalid-recovery-slo', /recoverySloSec/],
      [{ ...valid, slug: 'x1', recoverySloSec: 1.5 }, 'invalid-recovery-slo', /recoverySloSec/],
      [{ ...valid, slug: 'x1', cooldownMinutes: 0 }, 'invalid-cooldown', /whole number from 1 to 1440/],
      [{ ...valid, slug: 'x1', cooldownMinutes: 1441 }, 'invalid-cooldown', /cooldownMinutes/],
      [{ ...valid, slug: 'x1', cooldownMinutes: 2.5 }, 'invalid-cooldown', /cooldownMinutes/],
      [{ ...valid, slug: 'x1', severity: 'critical' }, 'invalid-severity', /severity must be one of major, minor/],
      [{ ...valid, slug: 'x1', description: 'd'.repeat(2001) }, 'invalid-description', /at most 2000 characters/],
    ];
    for (const [payload, reason, human] of cases) {
      const body = await refusal(Object.fromEntries(Object.entries(payload).filter(([, v]) => v !== undefined)));
      expect(body.reason, JSON.stringify(payload).slice(0, 120)).toBe(reason);
      expect(body.human).toMatch(human);
    }
    // The limits themselves are accepted: 128 characters of slug, 256 of target, 2000 of description.
    await registered({ ...valid, slug: 's'.repeat(128), target: `/${'t'.repeat(255)}`, description: 'd'.repeat(2000) });
    // Nothing refused was stored or audited.
    const stored = rowsOf<{ n: number }>(await t.app.database.db.execute(sql`SELECT count(*)::int AS n FROM chaos_experiments WHERE slug = 'x1'`));
    expect(stored[0]!.n).toBe(0);
  });

  it('refuses a body of the wrong JSON type or with an unknown field as any invalid body (svc-error)', async () => {
    for (const payload of [{ ...valid, slug: 'typed', recoverySloSec: '30' }, { ...valid, slug: 42 }, { ...valid, slug: 'extra', owner: 'me' }]) {
      const res = await register(payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body' });
    }
  });

  it('is refused to a token without write:alerts', async () => {
    const reader = await t.tokenWith(['read:empire']);
    const res = await t.call({ method: 'POST', url: `${V1}/chaos/experiments`, payload: { ...valid, slug: 'not-mine' }, token: reader });
    expect(res.statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `${V1}/chaos/experiments`, token: reader })).statusCode).toBe(200);
  });
});

describe('listing', () => {
  const slugsOf = (experiments: Experiment[]) => experiments.map((e) => e.slug);
  const made: string[] = [];

  beforeAll(async () => {
    // Three created in one clock tick, then two later: ties in createdAt page in insertion order.
    clock.set(new Date('2026-11-28T09:00:00.000Z'));
    for (const slug of ['tie-a', 'tie-b', 'tie-c']) made.push((await registered({ ...valid, slug })).slug);
    clock.set(new Date('2026-11-28T09:00:01.000Z'));
    made.push((await registered({ slug: 'later-readonly', kind: 'prisma-readonly-window', target: 'primary' })).slug);
    clock.set(new Date('2026-11-28T09:00:02.000Z'));
    made.push((await registered({ ...valid, slug: 'latest' })).slug);
  });

  it('answers newest first, insertion order breaking ties', async () => {
    const res = await list({ limit: '5' });
    expect(res.statusCode).toBe(200);
    expect(res.json().schema).toBe('svc-chaos-experiments.v1');
    expect(slugsOf(res.json().experiments)).toEqual(['latest', 'later-readonly', 'tie-c', 'tie-b', 'tie-a']);
  });

  it('pages with the cursor through rows that share a creation time, losing and repeating none', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list({ limit: '2', ...(cursor === null ? {} : { cursor }) });
      expect(res.statusCode, res.body).toBe(200);
      seen.push(...slugsOf(res.json().experiments));
      cursor = res.json().nextCursor;
      pages += 1;
    } while (cursor !== null && pages < 20);
    const all = slugsOf((await list({ limit: '200' })).json().experiments);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    expect(all.slice(0, 5)).toEqual(['latest', 'later-readonly', 'tie-c', 'tie-b', 'tie-a']);
  });

  it('takes a bare createdAt as cursor (rows strictly older), and refuses a cursor that is neither', async () => {
    expect(slugsOf((await list({ cursor: '2026-11-28T09:00:01.000Z', limit: '3' })).json().experiments)).toEqual(['tie-c', 'tie-b', 'tie-a']);
    for (const cursor of ['yesterday', '2026-11-28T09:00:00.000Z|not-a-seq', '2026-11-28T09:00:00.000Z|1|2']) {
      const res = await list({ cursor });
      expect(res.statusCode, cursor).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query' });
    }
  });

  it('filters by kind and status, and refuses values that are none (svc-error)', async () => {
    const database = (await list({ kind: 'prisma-readonly-window', limit: '200' })).json().experiments as Experiment[];
    expect(slugsOf(database).sort()).toEqual(['later-readonly', 'readonly-long']);
    const latest = (await list({ limit: '1' })).json().experiments[0] as Experiment;
    expect((await act(latest.id, 'pause')).statusCode).toBe(200);
    expect(slugsOf((await list({ status: 'paused' })).json().experiments)).toEqual(['latest']);
    expect(slugsOf((await list({ status: 'paused', kind: 'prisma-readonly-window' })).json().experiments)).toEqual([]);
    expect((await list({ status: 'active', limit: '200' })).json().experiments.every((e: Experiment) => e.status === 'active')).toBe(true);
    for (const query of [{ kind: 'disk-fill' }, { status: 'deleted' }, { limit: '0' }, { limit: '201' }] as Record<string, string>[]) {
      const res = await list(query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-query' });
    }
  });

  it('answers 50 rows by default', async () => {
    clock.set(new Date('2026-11-28T10:00:00.000Z'));
    for (let i = 0; i < 45; i += 1) await registered({ ...valid, slug: `bulk-${i}` });
    const page = (await list()).json();
    expect(page.experiments).toHaveLength(50);
    expect(page.nextCursor).not.toBeNull();
  });
});

describe('pausing, resuming and retiring', () => {
  let experiment: Experiment;

  beforeAll(async () => {
    clock.set(new Date('2026-11-28T11:00:00.000Z'));
    experiment = await registered({ slug: 'lifecycle', kind: 'prisma-readonly-window', target: 'primary' });
  });

  it('pauses and resumes, auditing each change with the experiment before and after', async () => {
    clock.set(new Date('2026-11-28T11:05:00.000Z'));
    const paused = await act(experiment.id, 'pause');
    expect(paused.statusCode).toBe(200);
    expect(paused.json()).toMatchObject({ schema: 'svc-chaos-experiment.v1', ok: true, experiment: { id: experiment.id, status: 'paused', updatedAt: '2026-11-28T11:05:00.000Z', createdAt: experiment.createdAt } });
    // Pausing a paused one answers it unchanged and audits nothing.
    clock.set(new Date('2026-11-28T11:06:00.000Z'));
    expect((await act(experiment.id, 'pause')).json().experiment).toEqual(paused.json().experiment);
    const resumed = await act(experiment.id, 'resume');
    expect(resumed.json().experiment).toMatchObject({ status: 'active', updatedAt: '2026-11-28T11:06:00.000Z' });
    // Resuming an active one: unchanged, nothing audited.
    expect((await act(experiment.id, 'resume')).json().experiment).toEqual(resumed.json().experiment);
    const audit = await auditRows(experiment.id);
    expect(audit.map((r) => r.verb)).toEqual(['chaos.register', 'chaos.pause', 'chaos.resume']);
    expect(audit[1]).toMatchObject({ actor_user_id: adminUserId, before: { status: 'active' }, after: { status: 'paused' } });
    expect(audit[2]).toMatchObject({ before: { status: 'paused' }, after: { status: 'active' } });
  });

  it('retires for good: retiring again answers it unchanged, pausing or resuming it is 409', async () => {
    clock.set(new Date('2026-11-28T11:10:00.000Z'));
    const retired = await act(experiment.id, 'retire');
    expect(retired.statusCode).toBe(200);
    expect(retired.json().experiment).toMatchObject({ status: 'retired', updatedAt: '2026-11-28T11:10:00.000Z' });
    clock.set(new Date('2026-11-28T11:11:00.000Z'));
    const again = await act(experiment.id, 'retire');
    expect(again.statusCode).toBe(200);
    expect(again.json().experiment).toEqual(retired.json().experiment);
    for (const action of ['pause', 'resume'] as const) {
      const res = await act(experiment.id, action);
      expect(res.statusCode, action).toBe(409);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
      expect(res.json().human).toMatch(/lifecycle is retired/);
    }
    const audit = await auditRows(experiment.id);
    expect(audit.map((r) => r.verb)).toEqual(['chaos.register', 'chaos.pause', 'chaos.resume', 'chaos.retire']);
    expect(audit[3]).toMatchObject({ before: { status: 'active' }, after: { status: 'retired' } });
    // A paused one retires too.
    const other = await registered({ ...valid, slug: 'paused-then-retired' });
    await act(other.id, 'pause');
    expect((await act(other.id, 'retire')).json().experiment.status).toBe('retired');
  });

  it('answers 404 for an id nothing has, 400 for one that is no id, never 500', async () => {
    for (const action of ['pause', 'resume', 'retire'] as const) {
      const unknown = await act('0b7a3c52-1111-4d2e-9f3a-5c6d7e8f9a0b', action);
      expect(unknown.statusCode, action).toBe(404);
      expect(unknown.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
      const malformed = await act('not-a-uuid', action);
      expect(malformed.statusCode, action).toBe(400);
      expect(malformed.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-params' });
    }
  });

  it('gives the runner an experiment by id, and null for one nothing has', async () => {
    const found = await t.app.chaos.experiments.get(experiment.id);
    expect(found).toMatchObject({ id: experiment.id, slug: 'lifecycle', status: 'retired' });
    expect((await t.app.chaos.experiments.row(experiment.id))?.createdAt).toBeInstanceOf(Date);
    expect(await t.app.chaos.experiments.get('not-a-uuid')).toBeNull();
    expect(await t.app.chaos.experiments.get('0b7a3c52-1111-4d2e-9f3a-5c6d7e8f9a0b')).toBeNull();
  });
});
