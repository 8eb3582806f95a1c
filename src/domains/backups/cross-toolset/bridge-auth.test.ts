import { Type } from '@sinclair/typebox';
import { afterAll, describe, expect, it } from 'vitest';
import { buildBareServer } from '../../../../test/helpers/bare-server.ts';
import { createBridgeTokens } from '../../../platform/faults/bridge-tokens.ts';
import { assertRegistryConsistent, defineEndpoint, type Endpoint, V1 } from '../../../platform/http/registry.ts';

/**
 * The bridge credential (spec D7) at the HTTP layer: `X-Observatory-Bridge` is a credential only on
 * endpoints that opt in (registry `bridge: true`), compared in constant time with
 * OBSERVATORY_BRIDGE_TOKEN (and the staged OBSERVATORY_BRIDGE_TOKEN_NEXT when one is set), and makes the caller the operator `bridge` with only that endpoint's scope.
 */

const TOKEN = 'bridge-token-for-tests-0123456789abcdef';
const NEXT = 'bridge-token-next-for-tests-0123456789abcdef';

const whoami = (id: string, path: string, bridge: boolean): Endpoint =>
  defineEndpoint({
    id,
    title: id,
    description: id,
    method: 'POST',
    path,
    auth: 'session-or-bearer',
    scope: 'write:alerts',
    bridge,
    tag: 'test',
    kind: 'write',
    body: Type.Object({}),
    response: { schemaId: 'test.v1', fields: { username: Type.String(), via: Type.String(), scopes: Type.Array(Type.String()) } },
    example: {},
    handler: async ({ principal }) => ({ username: principal!.username, via: principal!.via, scopes: [...principal!.scopes] }),
  });

const endpoints = [whoami('optedIn', `${V1}/test/bridge`, true), whoami('notOptedIn', `${V1}/test/plain`, false)];
const withToken = buildBareServer(endpoints, { bridgeTokens: createBridgeTokens(TOKEN, null) });
const withoutToken = buildBareServer(endpoints, { bridgeTokens: createBridgeTokens(null, null) });
const withStaged = buildBareServer(endpoints, { bridgeTokens: createBridgeTokens(TOKEN, NEXT) });
const onlyStaged = buildBareServer(endpoints, { bridgeTokens: createBridgeTokens(null, NEXT) });
afterAll(async () => {
  await withToken.close();
  await withoutToken.close();
  await withStaged.close();
  await onlyStaged.close();
});

const post = (server: typeof withToken, url: string, headers: Record<string, string | string[]>) =>
  server.inject({ method: 'POST', url, headers, payload: {} });

describe('the bridge credential', () => {
  it('admits the configured token on an endpoint that opted in, as operator bridge with only its scope', async () => {
    const res = await post(withToken, `${V1}/test/bridge`, { 'x-observatory-bridge': TOKEN });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ username: 'bridge', via: 'bridge', scopes: ['write:alerts'] });
  });

  it('refuses a wrong token, a token of another length, and a repeated header with 401', async () => {
    for (const value of [`${TOKEN.slice(0, -1)}x`, 'short', `${TOKEN}${TOKEN}`, '']) {
      const res = await post(withToken, `${V1}/test/bridge`, { 'x-observatory-bridge': value });
      expect(res.statusCode, value).toBe(401);
      expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unauthorized', human: 'The bridge token is not valid.' });
    }
    const repeated = await post(withToken, `${V1}/test/bridge`, { 'x-observatory-bridge': [TOKEN, TOKEN] });
    expect(repeated.statusCode).toBe(401);
  });

  it('refuses every bridge call when no token is configured', async () => {
    const res = await post(withoutToken, `${V1}/test/bridge`, { 'x-observatory-bridge': TOKEN });
    expect(res.statusCode).toBe(401);
    expect(res.json().human).toMatch(/no OBSERVATORY_BRIDGE_TOKEN/);
    // Not even the staged one: without a current token there is nothing to rotate from.
    const staged = await post(onlyStaged, `${V1}/test/bridge`, { 'x-observatory-bridge': NEXT });
    expect(staged.statusCode).toBe(401);
    expect(staged.json().human).toMatch(/no OBSERVATORY_BRIDGE_TOKEN/);
  });

  it('admits the staged next token beside the current one, and nothing else', async () => {
    for (const value of [TOKEN, NEXT]) {
      const res = await post(withStaged, `${V1}/test/bridge`, { 'x-observatory-bridge': value });
      expect(res.statusCode, value).toBe(200);
      expect(res.json()).toMatchObject({ username: 'bridge', via: 'bridge', scopes: ['write:alerts'] });
    }
    for (const value of [`${NEXT.slice(0, -1)}x`, `${TOKEN}${NEXT}`, '']) {
      const res = await post(withStaged, `${V1}/test/bridge`, { 'x-observatory-bridge': value });
      expect(res.statusCode, value).toBe(401);
      expect(res.json().human).toBe('The bridge token is not valid.');
    }
    const staged = await post(withToken, `${V1}/test/bridge`, { 'x-observatory-bridge': NEXT });
    expect(staged.statusCode).toBe(401);
  });

  it('is no credential on an endpoint that did not opt in', async () => {
    const res = await post(withToken, `${V1}/test/plain`, { 'x-observatory-bridge': TOKEN });
    expect(res.statusCode).toBe(401);
    expect(res.json().reason).toBe('unauthorized');
  });

  it('without the header, the opted-in endpoint wants an ordinary credential (401 here: the bare server knows none)', async () => {
    const res = await post(withToken, `${V1}/test/bridge`, {});
    expect(res.statusCode).toBe(401);
  });

  it('may only be declared on a session-or-bearer endpoint with a scope', () => {
    const open = defineEndpoint({
      id: 'openBridge',
      title: 'x',
      description: 'x',
      method: 'GET',
      path: `${V1}/test/open`,
      auth: 'session-or-bearer',
      scope: null,
      bridge: true,
      tag: 'test',
      kind: 'read',
      response: { schemaId: 'test.v1', fields: {} },
      example: {},
      handler: async () => ({}),
    });
    expect(() => assertRegistryConsistent([open])).toThrow(/bridge credential/);
  });
});
