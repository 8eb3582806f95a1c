import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../platform/clock.ts';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';

const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t.close());

const create = (payload: object, token?: string) => t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload, token });
const auditOf = async (verb: string) => (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?verb=${verb}` })).json().rows;

describe('tenants', () => {
  it('creates a tenant with a secret shown once, and lists it without any secret', async () => {
    const res = await create({ slug: 'blog-trap', name: 'Blog trap', notes: 'Sits under /blog' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.schema).toBe('svc-observatory-tenant-create.v1');
    expect(body.signingSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(body.tenant).toMatchObject({ slug: 'blog-trap', name: 'Blog trap', notes: 'Sits under /blog', disabledAt: null, createdAt: '2026-11-23T10:00:00.000Z' });

    const list = await t.call({ method: 'GET', url: `${V1}/honeypot/tenants` });
    expect(list.json().tenants.map((x: { slug: string }) => x.slug)).toContain('blog-trap');
    expect(list.body).not.toContain(body.signingSecret);
    expect(list.body).not.toContain('whsec_');
    const [row] = await auditOf('tenant.create');
    expect(row).toMatchObject({ target: 'tenant:blog-trap', after: { slug: 'blog-trap' } });
    expect(JSON.stringify(row)).not.toContain('whsec_');
  });

  it('answers 409 conflict for a slug that exists', async () => {
    await create({ slug: 'dup', name: 'one' });
    const again = await create({ slug: 'dup', name: 'two' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'conflict' });
  });

  it('validates slug and name', async () => {
    for (const payload of [{ slug: 'Bad_Slug', name: 'x' }, { slug: '', name: 'x' }, { slug: 'a'.repeat(65), name: 'x' }, { slug: 'ok', name: '' }, { slug: 'ok' }]) {
      const res = await create(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().reason).toBe('invalid-body');
    }
  });

  it('disables and enables idempotently, lists disabled tenants, audits each change once', async () => {
    await create({ slug: 'flaky', name: 'Flaky' });
    const off = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/flaky/disable` });
    expect(off.json().tenant.disabledAt).toBe('2026-11-23T10:00:00.000Z');
    clock.advance(1000);
    const offAgain = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/flaky/disable` });
    expect(offAgain.json().tenant.disabledAt).toBe('2026-11-23T10:00:00.000Z');
    const listed = (await t.call({ method: 'GET', url: `${V1}/honeypot/tenants` })).json().tenants.find((x: { slug: string }) => x.slug === 'flaky');
    expect(listed.disabledAt).not.toBeNull();
    expect((await auditOf('tenant.disable')).filter((r: { target: string }) => r.target === 'tenant:flaky')).toHaveLength(1);
    const on = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/flaky/enable` });
    expect(on.json().tenant.disabledAt).toBeNull();
    expect((await auditOf('tenant.enable'))[0]).toMatchObject({ before: { disabledAt: '2026-11-23T10:00:00.000Z' }, after: { disabledAt: null } });
  });

  it('rotates a secret and audits it without the secret', async () => {
    await create({ slug: 'rot', name: 'Rot' });
    const res = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/rot/rotate-secret` });
    expect(res.statusCode).toBe(200);
    expect(res.json().signingSecret).toMatch(/^whsec_/);
    const [row] = await auditOf('tenant.rotate-secret');
    expect(JSON.stringify(row)).not.toContain('whsec_');
  });

  it('answers 404 for an unknown tenant', async () => {
    for (const action of ['disable', 'enable', 'rotate-secret']) {
      const res = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants/ghost/${action}` });
      expect(res.statusCode).toBe(404);
    }
  });

  it('needs write:tenants to change and read:tenants to list', async () => {
    const reader = await t.tokenWith(['read:tenants']);
    expect((await t.call({ method: 'GET', url: `${V1}/honeypot/tenants`, token: reader })).statusCode).toBe(200);
    expect((await create({ slug: 'nope', name: 'x' }, reader)).statusCode).toBe(403);
  });
});
