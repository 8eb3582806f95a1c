import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { nodeKeyPair, registerKey } from '../../../test/helpers/empire.ts';
import { ManualClock } from '../../platform/clock.ts';
import { canonicalBase64Bytes, parsePublicKey } from './ed25519.ts';

const clock = new ManualClock('2026-11-24T09:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(() => t?.close());

const register = (payload: unknown, token?: string) => t.call({ method: 'POST', url: `${V1}/provenance/keys`, payload: payload as object, ...(token ? { token } : {}) });
const retire = (id: string, token?: string) => t.call({ method: 'POST', url: `${V1}/provenance/keys/${id}/retire`, payload: {}, ...(token ? { token } : {}) });
const auditBody = async () => (await t.call({ method: 'GET', url: `${V1}/honeypot/ops/audit?limit=50` })).body;

describe('canonical base64 of a public key', () => {
  it('accepts only the spelling that re-encodes to itself, and exactly 32 bytes', () => {
    const { publicKeyB64 } = nodeKeyPair();
    expect(canonicalBase64Bytes(publicKeyB64)?.length).toBe(32);
    expect('key' in parsePublicKey(publicKeyB64)).toBe(true);
    expect(parsePublicKey(publicKeyB64.replace('=', ''))).toEqual({ problem: 'invalid-public-key-encoding' });
    expect(parsePublicKey(` ${publicKeyB64}`)).toEqual({ problem: 'invalid-public-key-encoding' });
    expect(parsePublicKey(Buffer.from(publicKeyB64, 'base64').toString('base64url'))).toMatchObject({ problem: expect.any(String) });
    // The last character carries 2 unused bits: a non-zero one decodes to the same bytes but is not canonical.
    const last = publicKeyB64.at(-2)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const sibling = alphabet[(alphabet.indexOf(last) & ~3) | ((alphabet.indexOf(last) + 1) & 3)]!;
    expect(parsePublicKey(`${publicKeyB64.slice(0, -2)}${sibling}=`)).toEqual({ problem: 'invalid-public-key-encoding' });
    expect(parsePublicKey(Buffer.alloc(31, 7).toString('base64'))).toEqual({ problem: 'invalid-public-key-length' });
    expect(parsePublicKey(Buffer.alloc(33, 7).toString('base64'))).toEqual({ problem: 'invalid-public-key-length' });
  });
});

describe('POST {v1}/provenance/keys', () => {
  it('registers a key, shows it in the listing and audits provenance.register', async () => {
    const { publicKeyB64 } = nodeKeyPair();
    const res = await register({ toolset: 'crawler-lab', publicKeyB64 });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ schema: 'svc-provenance-key.v1', ok: true, key: { toolset: 'crawler-lab', publicKeyB64, status: 'active', retiredAt: null, createdAt: clock.now().toISOString() } });
    expect(body.key.ownerUserId).toEqual(expect.any(String));
    const listed = (await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=crawler-lab` })).json();
    expect(listed.keys.map((k: { id: string }) => k.id)).toContain(body.key.id);
    expect(await auditBody()).toContain('provenance.register');
  });

  it('answers 400 with ok false, reason and human for a bad toolset or key, and stores nothing', async () => {
    const { publicKeyB64 } = nodeKeyPair();
    const cases: [unknown, string][] = [
      [{ toolset: 'ab', publicKeyB64 }, 'invalid-toolset'],
      [{ toolset: '1abc', publicKeyB64 }, 'invalid-toolset'],
      [{ toolset: 'has space', publicKeyB64 }, 'invalid-toolset'],
      [{ toolset: `a${'b'.repeat(128)}`, publicKeyB64 }, 'invalid-toolset'],
      [{ publicKeyB64 }, 'invalid-toolset'],
      [{ toolset: 'refused-lab' }, 'invalid-public-key-encoding'],
      [{ toolset: 'refused-lab', publicKeyB64: 'not base64!' }, 'invalid-public-key-encoding'],
      [{ toolset: 'refused-lab', publicKeyB64: Buffer.alloc(16, 1).toString('base64') }, 'invalid-public-key-length'],
    ];
    for (const [payload, reason] of cases) {
      const res = await register(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toMatchObject({ schema: 'svc-provenance-key.v1', ok: false, reason, human: expect.any(String) });
    }
    const listed = (await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=refused-lab` })).json();
    expect(listed.keys).toEqual([]);
  });

  it('refuses the same key twice for one toolset, but lets two keys of a toolset be active together', async () => {
    const first = nodeKeyPair();
    const second = nodeKeyPair();
    await registerKey(t, 'rotating-lab', first.publicKeyB64);
    const again = await register({ toolset: 'rotating-lab', publicKeyB64: first.publicKeyB64 });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ ok: false, reason: 'key-already-registered' });
    clock.advance(1000);
    await registerKey(t, 'rotating-lab', second.publicKeyB64);
    const active = (await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=rotating-lab&status=active` })).json();
    expect(active.keys.map((k: { publicKeyB64: string }) => k.publicKeyB64)).toEqual([second.publicKeyB64, first.publicKeyB64]);
  });

  it('takes toolsets of exactly 3 and 128 characters (spec C limits)', async () => {
    for (const toolset of ['abc', `a${'b-9'.repeat(42)}c`]) {
      expect(toolset.length === 3 || toolset.length === 128).toBe(true);
      const res = await register({ toolset, publicKeyB64: nodeKeyPair().publicKeyB64 });
      expect(res.statusCode, toolset).toBe(200);
      expect(res.json().key.toolset).toBe(toolset);
    }
  });

  it('needs write:alerts; a token without it gets 403 and no credential 401', async () => {
    const reader = await t.tokenWith(['read:empire']);
    expect((await register({ toolset: 'scoped-lab', publicKeyB64: nodeKeyPair().publicKeyB64 }, reader)).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: `${V1}/provenance/keys`, payload: {}, token: null })).statusCode).toBe(401);
    const writer = await t.tokenWith(['write:alerts']);
    expect((await register({ toolset: 'scoped-lab', publicKeyB64: nodeKeyPair().publicKeyB64 }, writer)).statusCode).toBe(200);
  });
});

describe('POST {v1}/provenance/keys/{id}/retire', () => {
  it('retires a key once: a second retire answers it unchanged, and only the first is audited', async () => {
    const id = await registerKey(t, 'retiring-lab', nodeKeyPair().publicKeyB64);
    clock.advance(60_000);
    const first = await retire(id);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ ok: true, key: { id, status: 'retired', retiredAt: clock.now().toISOString() } });
    clock.advance(60_000);
    const second = await retire(id);
    expect(second.json().key).toEqual(first.json().key);
    const audit = await auditBody();
    expect(audit.split('provenance.retire').length - 1).toBe(1);
  });

  it('answers 404 for an unknown key and 400 ok false for an id that is not a UUID', async () => {
    const unknown = await retire('6a0f0a7e-0000-4000-8000-000000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'not-found' });
    const malformed = await retire('not-a-uuid');
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ ok: false, reason: 'invalid-key-id' });
  });
});

describe('GET {v1}/provenance/keys', () => {
  it('pages newest first with a cursor, every key exactly once, and filters by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      ids.push(await registerKey(t, 'paging-lab', nodeKeyPair().publicKeyB64));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { keys: { id: string }[]; nextCursor: string | null } = (await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=paging-lab&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` })).json();
      seen.push(...page.keys.map((k: { id: string }) => k.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([...ids].reverse());
    await retire(ids[0]!);
    const retired = (await t.call({ method: 'GET', url: `${V1}/provenance/keys?toolset=paging-lab&status=retired` })).json();
    expect(retired.keys.map((k: { id: string }) => k.id)).toEqual([ids[0]]);
  });

  it('refuses a bad cursor, status or limit with 400 naming the parameter, and needs read:empire', async () => {
    for (const [query, field] of [
      ['cursor=yesterday', 'query.cursor'],
      ['status=lost', 'query.status'],
      ['limit=0', 'query.limit'],
      ['limit=201', 'query.limit'],
    ]) {
      const res = await t.call({ method: 'GET', url: `${V1}/provenance/keys?${query}` });
      expect(res.statusCode, query).toBe(400);
      expect(res.json().field, query).toBe(field);
    }
    const other = await t.tokenWith(['read:events']);
    expect((await t.call({ method: 'GET', url: `${V1}/provenance/keys`, token: other })).statusCode).toBe(403);
  });
});
