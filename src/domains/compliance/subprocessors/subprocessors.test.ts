import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { runJob, startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';

/**
 * The subprocessor registry through the HTTP API of the real app (docs/compliance/README.md,
 * "Subprocessors"), on whichever driver the run uses: upsert by name, review and archive, the
 * list and its filter, the audit rows, refusals and scopes. Time is the injected clock.
 */

const T0 = new Date('2026-11-20T10:00:00.000Z');
const clock = new ManualClock(T0);
const URL_BASE = `${V1}/compliance/subprocessors`;

let t: TestApp;
let adminUserId = '';

interface Row {
  id: string;
  name: string;
  role: string;
  dataAccess: string;
  region: string;
  notes: string;
  websiteUrl: string | null;
  contractUrl: string | null;
  lastReviewedAt: string | null;
  reviewerOperatorId: string | null;
  archivedAt: string | null;
  createdAt: string;
  updatedAt: string;
}
interface AuditRow {
  verb: string;
  target: string;
  actor: string;
  actorUserId: string;
  before: Row | null;
  after: Row;
}

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_AUTH_FAILURES_PER_MINUTE: '0' } });
  adminUserId = (await t.call({ method: 'GET', url: `${V1}/account` })).json().userId;
}, 180_000);
afterAll(() => t?.close());

async function upsert(payload: Record<string, unknown>, token?: string): Promise<Row> {
  const res = await t.call({ method: 'POST', url: URL_BASE, payload, ...(token === undefined ? {} : { token }) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ schema: 'svc-compliance-subprocessor.v1', ok: true });
  return res.json().row;
}

async function act(id: string, action: string): Promise<Row> {
  const res = await t.call({ method: 'POST', url: `${URL_BASE}/${id}`, payload: { action } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().row;
}

async function list(query: Record<string, string> = {}, token?: string): Promise<Row[]> {
  const res = await t.call({ method: 'GET', url: URL_BASE, query, ...(token === undefined ? {} : { token }) });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().schema).toBe('svc-compliance-subprocessors.v1');
  return res.json().rows;
}

/** The operator audit rows of one verb about one subprocessor, oldest first. */
async function audits(verb: string, id: string): Promise<AuditRow[]> {
  const res = await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit`, query: { verb, limit: '500' } });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().rows as AuditRow[]).filter((r) => r.target === `compliance-subprocessor:${id}`).reverse();
}

function expectRefused(res: { statusCode: number; json(): any; body: string }, status: number, reason: string, field?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason, ...(field === undefined ? {} : { field }) });
}

describe('upsert by name', () => {
  it('creates, then changes the same row by its name (trimmed, ignoring case): one row, updatedAt moves, each change audited with before and after', async () => {
    clock.set(T0);
    const created = await upsert({ name: 'Acme Mail', role: 'email', region: 'EU', dataAccess: 'operator addresses', websiteUrl: 'https://acme.example' });
    expect(created).toMatchObject({
      name: 'Acme Mail',
      role: 'email',
      region: 'EU',
      dataAccess: 'operator addresses',
      notes: '',
      websiteUrl: 'https://acme.example',
      contractUrl: null,
      lastReviewedAt: null,
      reviewerOperatorId: null,
      archivedAt: null,
      createdAt: T0.toISOString(),
      updatedAt: T0.toISOString(),
    });

    clock.advance(60_000);
    const changed = await upsert({ name: '  acme mail ', role: 'email', contractUrl: 'https://acme.example/dpa', notes: 'Alert emails.' });
    expect(changed).toEqual({
      ...created,
      name: 'acme mail',
      contractUrl: 'https://acme.example/dpa',
      notes: 'Alert emails.',
      updatedAt: new Date(T0.getTime() + 60_000).toISOString(),
    });
    expect((await list()).filter((r) => r.name.toLowerCase() === 'acme mail')).toEqual([changed]);

    // The same call again changes nothing: no write, no audit row, updatedAt stays.
    clock.advance(60_000);
    expect(await upsert({ name: 'ACME MAIL', role: 'email', notes: 'Alert emails.' })).toEqual({ ...changed, name: 'ACME MAIL', updatedAt: new Date(T0.getTime() + 120_000).toISOString() });
    expect(await upsert({ name: 'ACME MAIL', role: 'email' })).toMatchObject({ name: 'ACME MAIL', updatedAt: new Date(T0.getTime() + 120_000).toISOString() });

    const rows = await audits('compliance.subprocessor.upsert', created.id);
    expect(rows.map((r) => [r.before?.name ?? null, r.after.name])).toEqual([
      [null, 'Acme Mail'],
      ['Acme Mail', 'acme mail'],
      ['acme mail', 'ACME MAIL'],
    ]);
    expect(rows[0]).toMatchObject({ actor: 'admin', actorUserId: adminUserId, before: null, after: created });
    expect(rows[1]).toMatchObject({ before: created, after: changed });
  });

  it('markReviewed stamps lastReviewedAt now and the caller as reviewer; left out, the review stays as it was', async () => {
    clock.set(T0);
    const created = await upsert({ name: 'Bucket Store', role: 'storage', markReviewed: true });
    expect(created).toMatchObject({ lastReviewedAt: T0.toISOString(), reviewerOperatorId: adminUserId });

    // Another operator (a token of their own) reviews it later.
    const operator = await t.call({ method: 'POST', url: `${V1}/operators`, payload: { username: 'reviewer', scopes: ['read:empire', 'write:alerts'] } });
    expect(operator.statusCode, operator.body).toBe(200);
    const issued = await t.call({ method: 'POST', url: `${V1}/operators/reviewer/tokens`, payload: { name: 'reviewer', scopes: ['write:alerts'] } });
    expect(issued.statusCode, issued.body).toBe(200);
    const reviewerId = (await t.call({ method: 'GET', url: `${V1}/account`, token: issued.json().token })).json().userId as string;
    expect(reviewerId).not.toBe(adminUserId);

    clock.advance(86_400_000);
    const reviewed = await upsert({ name: 'bucket store', role: 'storage', markReviewed: true }, issued.json().token);
    expect(reviewed).toMatchObject({ lastReviewedAt: clock.now().toISOString(), reviewerOperatorId: reviewerId, updatedAt: clock.now().toISOString() });

    clock.advance(86_400_000);
    const kept = await upsert({ name: 'Bucket Store', role: 'storage', region: 'US', markReviewed: false });
    expect(kept).toMatchObject({ region: 'US', lastReviewedAt: reviewed.lastReviewedAt, reviewerOperatorId: reviewerId });
    const rows = await audits('compliance.subprocessor.upsert', created.id);
    expect(rows.map((r) => r.actor)).toEqual(['admin', 'reviewer', 'admin']);
  });

  it('two upserts of one name at once both answer 200 and leave one row', async () => {
    const answers = await Promise.all(
      ['Race Co', 'race co', 'RACE CO '].map((name) => t.call({ method: 'POST', url: URL_BASE, payload: { name, role: 'infra', notes: name } })),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.json().row.id)).size).toBe(1);
    expect((await list()).filter((r) => r.name.toLowerCase().trim() === 'race co')).toHaveLength(1);
  });
});

describe('review and archive', () => {
  it('review stamps the review; archive hides the row from the default list, once; upserting or reviewing it brings it back; every change audited', async () => {
    clock.set(T0);
    const row = await upsert({ name: 'Cloud Edge', role: 'cdn' });

    clock.advance(1000);
    const reviewed = await act(row.id, 'review');
    expect(reviewed).toEqual({ ...row, lastReviewedAt: clock.now().toISOString(), reviewerOperatorId: adminUserId, updatedAt: clock.now().toISOString() });

    clock.advance(1000);
    const archivedAt = clock.now().toISOString();
    const archived = await act(row.id, 'archive');
    expect(archived).toEqual({ ...reviewed, archivedAt, updatedAt: archivedAt });
    expect((await list()).map((r) => r.id)).not.toContain(row.id);
    expect((await list({ includeArchived: '0' })).map((r) => r.id)).not.toContain(row.id);
    expect((await list({ includeArchived: '1' })).find((r) => r.id === row.id)).toEqual(archived);

    // Archiving again: idempotent, the first archivedAt kept, nothing audited.
    clock.advance(1000);
    expect(await act(row.id, 'archive')).toEqual(archived);
    expect(await audits('compliance.subprocessor.archive', row.id)).toHaveLength(1);

    // An upsert of the archived name brings it back into use (its review kept).
    clock.advance(1000);
    const back = await upsert({ name: 'Cloud Edge', role: 'cdn' });
    expect(back).toEqual({ ...archived, archivedAt: null, updatedAt: clock.now().toISOString() });
    expect((await list()).map((r) => r.id)).toContain(row.id);

    // Reviewing an archived one brings it back too.
    await act(row.id, 'archive');
    clock.advance(1000);
    expect(await act(row.id, 'review')).toMatchObject({ archivedAt: null, lastReviewedAt: clock.now().toISOString() });

    const reviews = await audits('compliance.subprocessor.review', row.id);
    expect(reviews).toHaveLength(2);
    expect(reviews[0]).toMatchObject({ actor: 'admin', before: row, after: reviewed });
    const archives = await audits('compliance.subprocessor.archive', row.id);
    expect(archives).toHaveLength(2);
    expect(archives[0]).toMatchObject({ before: reviewed, after: archived });
    expect((await audits('compliance.subprocessor.upsert', row.id)).map((r) => [r.before?.archivedAt ?? null, r.after.archivedAt])).toEqual([
      [null, null],
      [archivedAt, null],
    ]);
  });

  it('answers 404 for an unknown id and 400 for a malformed id or action', async () => {
    expectRefused(await t.call({ method: 'POST', url: `${URL_BASE}/${randomUUID()}`, payload: { action: 'review' } }), 404, 'not-found');
    expectRefused(await t.call({ method: 'POST', url: `${URL_BASE}/not-a-uuid`, payload: { action: 'review' } }), 400, 'invalid-params');
    const row = await upsert({ name: 'Action Target', role: 'other' });
    for (const payload of [{ action: 'delete' }, {}, { action: 'review', extra: 1 }, { action: ['review'] }]) {
      expectRefused(await t.call({ method: 'POST', url: `${URL_BASE}/${row.id}`, payload }), 400, 'invalid-body');
    }
  });
});

describe('the list', () => {
  it('orders by name ignoring case, and takes includeArchived only as 0 or 1', async () => {
    // In byte order (the embedded database's collation) `Gamma` would come first: the list compares names ignoring case.
    await upsert({ name: 'delta Analytics', role: 'observability' });
    await upsert({ name: 'Gamma Mail', role: 'email' });
    await upsert({ name: 'beta Billing', role: 'billing' });
    const names = (await list()).map((r) => r.name).filter((n) => ['beta Billing', 'delta Analytics', 'Gamma Mail'].includes(n));
    expect(names).toEqual(['beta Billing', 'delta Analytics', 'Gamma Mail']);
    for (const includeArchived of ['true', 'yes', '2', '']) {
      expectRefused(await t.call({ method: 'GET', url: URL_BASE, query: { includeArchived } }), 400, 'invalid-query', 'query.includeArchived');
    }
    expectRefused(await t.call({ method: 'GET', url: URL_BASE, query: { archived: '1' } }), 400, 'invalid-query');
  });
});

describe('refusals', () => {
  it('answers 400 svc-error for a bad role, link, name or field, and writes nothing', async () => {
    const before = await list({ includeArchived: '1' });
    const bad: [Record<string, unknown>, string][] = [
      [{ name: 'X', role: 'database' }, 'body.role'],
      [{ name: 'X' }, 'body.role'],
      [{ role: 'ai' }, 'body.name'],
      [{ name: '   ', role: 'ai' }, 'body.name'],
      [{ name: 'a'.repeat(201), role: 'ai' }, 'body.name'],
      [{ name: 'Two\nLines', role: 'ai' }, 'body.name'],
      [{ name: 'X', role: 'ai', websiteUrl: 'javascript:alert(1)' }, 'body.websiteUrl'],
      [{ name: 'X', role: 'ai', websiteUrl: 'ftp://files.example.com' }, 'body.websiteUrl'],
      [{ name: 'X', role: 'ai', contractUrl: 'not a url' }, 'body.contractUrl'],
      [{ name: 'X', role: 'ai', contractUrl: 'https://user:secret@dpa.example.com/' }, 'body.contractUrl'],
      [{ name: 'X', role: 'ai', contractUrl: `https://dpa.example.com/${'a'.repeat(2048)}` }, 'body.contractUrl'],
      [{ name: 'X', role: 'ai', notes: 'n'.repeat(4001) }, 'body.notes'],
      [{ name: 'X', role: 'ai', dataAccess: 'd'.repeat(2001) }, 'body.dataAccess'],
      [{ name: 'X', role: 'ai', region: 'r'.repeat(201) }, 'body.region'],
      [{ name: 'X', role: 'ai', markReviewed: 'true' }, 'body.markReviewed'],
      [{ name: 'X', role: 'ai', colour: 'red' }, 'body.colour'],
    ];
    for (const [payload, field] of bad) {
      const res = await t.call({ method: 'POST', url: URL_BASE, payload });
      expect(res.statusCode, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'invalid-body' });
      expect(res.json().field ?? res.json().human, JSON.stringify(payload).slice(0, 80)).toContain(field);
    }
    expect(await list({ includeArchived: '1' })).toEqual(before);
  });

  it('asks for a credential (401) and the scope of each call (403); a token bound to toolsets is not refused for it', async () => {
    const row = await upsert({ name: 'Scope Check', role: 'auth' });
    for (const [method, url, payload] of [
      ['GET', URL_BASE, undefined],
      ['POST', URL_BASE, { name: 'Scope Check', role: 'auth' }],
      ['POST', `${URL_BASE}/${row.id}`, { action: 'review' }],
    ] as const) {
      expectRefused(await t.call({ method, url, ...(payload ? { payload } : {}), token: null }), 401, 'unauthorized');
    }
    const reader = await t.tokenWith(['read:empire']);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await list({}, reader)).map((r) => r.id)).toContain(row.id);
    expectRefused(await t.call({ method: 'GET', url: URL_BASE, token: writer }), 403, 'forbidden');
    expectRefused(await t.call({ method: 'POST', url: URL_BASE, payload: { name: 'Scope Check', role: 'ai' }, token: reader }), 403, 'forbidden');
    expectRefused(await t.call({ method: 'POST', url: `${URL_BASE}/${row.id}`, payload: { action: 'archive' }, token: reader }), 403, 'forbidden');
    expect(await upsert({ name: 'Scope Check', role: 'ai' }, writer)).toMatchObject({ id: row.id, role: 'ai' });

    // Subprocessors belong to no toolset: a bound token with the scopes reads and changes them.
    const bound = await t.call({ method: 'POST', url: `${V1}/tokens`, payload: { name: 'bound', scopes: ['read:empire', 'write:alerts'], toolsets: ['crawler-lab'] } });
    expect(bound.statusCode, bound.body).toBe(200);
    expect((await list({}, bound.json().token)).map((r) => r.id)).toContain(row.id);
    const res = await t.call({ method: 'POST', url: `${URL_BASE}/${row.id}`, payload: { action: 'review' }, token: bound.json().token });
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('the compliance check subprocessors-reviewed', () => {
  /** The control of the registry in a framework, after an evaluation at the clock's time. */
  async function evaluated(framework: 'soc2' | 'iso27001' = 'soc2'): Promise<{ latestOutcome: string; latestSummary: string }> {
    // Evaluated a minute after the changes before it, as time moves between calls.
    clock.advance(60_000);
    await runJob(t, 'compliance-evaluate');
    const res = await t.call({ method: 'GET', url: `${V1}/compliance/frameworks/${framework}` });
    expect(res.statusCode, res.body).toBe(200);
    const control = (res.json().controls as { predicateKey: string; latestOutcome: string; latestSummary: string }[]).find((c) => c.predicateKey === 'subprocessors-reviewed');
    expect(control, `${framework} has a subprocessors-reviewed control`).toBeDefined();
    return control!;
  }

  it('reads the registry through the evaluation job: none in use, all reviewed, one past 365 days, reviewed again', async () => {
    clock.set(new Date('2027-06-01T00:00:00.000Z'));
    for (const row of await list()) await act(row.id, 'archive');
    expect((await evaluated()).latestOutcome).toBe('manual-review');

    const vendor = await upsert({ name: 'Yearly Vendor', role: 'infra', markReviewed: true });
    await upsert({ name: 'Retired Vendor', role: 'infra' }).then((r) => act(r.id, 'archive'));
    let control = await evaluated();
    expect(control).toMatchObject({ latestOutcome: 'pass' });
    expect(control.latestSummary).toMatch(/reviewed in the last 365 days/);

    clock.advance(366 * 86_400_000);
    control = await evaluated();
    expect(control.latestOutcome).toBe('fail');
    expect(control.latestSummary).toContain('Yearly Vendor (2027-06-01)');
    expect(control.latestSummary).not.toContain('Retired Vendor');

    await act(vendor.id, 'review');
    expect((await evaluated('iso27001')).latestOutcome).toBe('pass');
  });
});
