import { Type } from '@sinclair/typebox';
import { SESSION_COOKIE } from '../../../platform/http/auth.ts';
import { EmptyBody, defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, SCOPES, V1 } from '../../../platform/http/registry.ts';
import { TOOLSET_PATTERN } from '../../../platform/toolset-name.ts';
import { type IdentityService, MAX_TOKEN_TOOLSETS } from './service.ts';

const ScopeName = Type.Union(SCOPES.map((s) => Type.Literal(s)));
const ToolsetName = Type.String({ pattern: TOOLSET_PATTERN, description: 'A toolset name: a letter, then 2 to 127 letters, digits or "-".' });

const TokenFields = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  toolsets: Nullable(Type.Array(Type.String(), { description: 'The toolsets the token may write events for; null: not bound to toolsets.' })),
  prefix: Type.String({ description: 'The first characters of the token, to tell tokens apart.' }),
  userId: Type.String({ format: 'uuid' }),
  createdAt: IsoDate,
  lastUsedAt: Nullable(IsoDate),
  revokedAt: Nullable(IsoDate),
};
const Token = Type.Object(TokenFields);

const exampleToken = {
  id: '3f0c7d0e-2f43-4a53-9d55-6a4f0a0b9c11',
  name: 'grafana-reader',
  scopes: ['read:dashboard'],
  toolsets: null as string[] | null,
  prefix: 'svctok_Q2x9aB',
  userId: '0b7f9a1c-5d2e-4c6b-8e3a-1f2d3c4b5a69',
  createdAt: '2026-11-23T08:00:00.000Z',
  lastUsedAt: null,
  revokedAt: null,
};
const generatedAt = '2026-11-23T08:00:00.000Z';

const Operator = Type.Object({
  id: Type.String({ format: 'uuid' }),
  username: Type.String(),
  displayName: Type.String(),
  scopes: Type.Array(Type.String(), { description: 'What the operator holds: their tokens and sessions carry at most these.' }),
  createdAt: IsoDate,
  disabledAt: Nullable(IsoDate),
});
const exampleOperator = {
  id: '7d2c4e1a-9b3f-4c5d-8e6f-0a1b2c3d4e5f',
  username: 'alice',
  displayName: 'Alice Example',
  scopes: ['read:dashboard', 'read:events'],
  createdAt: generatedAt,
  disabledAt: null,
};
const Username = Type.String({ pattern: '^[a-z][a-z0-9._-]{1,63}$', description: '2 to 64 of a-z, 0-9, ".", "_" or "-", starting with a letter.' });
const NewTokenBody = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
  toolsets: Type.Optional(Type.Array(ToolsetName, { minItems: 1, maxItems: MAX_TOKEN_TOOLSETS, uniqueItems: true })),
};
const TokenCreateFields = { ...TokenFields, token: Type.String({ description: 'The plaintext token; shown once.' }) };

/** The principal is present on every authenticated endpoint; the server guarantees it. */
const who = (principal: Principal | null): Principal => principal as Principal;

export function identityEndpoints(identity: IdentityService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listTokens',
      title: 'List your API tokens',
      description: 'Tokens issued to the calling operator: prefix and metadata only, never the plaintext. Newest first, revoked ones included with revokedAt. A token bound to toolsets lists only the tokens bound within its own toolsets.',
      method: 'GET',
      path: `${V1}/tokens`,
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      tag: 'tokens',
      kind: 'read',
      uiPath: '/settings/tokens',
      response: { schemaId: 'svc-observatory-tokens.v1', fields: { tokens: Type.Array(Token) } },
      example: { schema: 'svc-observatory-tokens.v1', generatedAt, tokens: [exampleToken] },
      handler: async ({ principal }) => ({ tokens: await identity.listTokens(who(principal)) }),
    }),
    defineEndpoint({
      id: 'createToken',
      title: 'Create an API token',
      description: 'Issues a token `svctok_<random>` (256 bits) carrying the listed scopes. The plaintext is in this response only; a scope the caller does not hold is refused with 403. `toolsets` (optional, 1 to 50 toolset names) binds the token to those toolsets: it may then write toolset events only for them. A caller that is itself bound to toolsets can only create tokens bound to some of its own (omitting `toolsets` gives the new token the caller\'s toolsets; naming another toolset is 403). A token bound to toolsets cannot register passkeys.',
      method: 'POST',
      path: `${V1}/tokens`,
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      tag: 'tokens',
      kind: 'write',
      uiPath: '/settings/tokens',
      body: Type.Object(NewTokenBody, { examples: [{ name: 'edge-toolset-writer', scopes: ['write:events'], toolsets: ['edge-eu', 'edge-us'] }] }),
      response: { schemaId: 'svc-observatory-token-create.v1', fields: TokenCreateFields },
      example: {
        schema: 'svc-observatory-token-create.v1',
        generatedAt,
        ...exampleToken,
        name: 'edge-toolset-writer',
        scopes: ['write:events'],
        toolsets: ['edge-eu', 'edge-us'],
        token: 'svctok_Q2x9aBexampleexampleexampleexampleexam',
      },
      handler: async ({ principal, body, requestId }) =>
        identity.createToken({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'revokeToken',
      title: 'Revoke an API token',
      description: 'Revokes one of your tokens at once, on every instance. Revoking a revoked token returns it unchanged. A token bound to toolsets revokes only tokens bound within its own toolsets (404 for any other, as for a token that is not yours).',
      method: 'POST',
      path: `${V1}/tokens/{id}/revoke`,
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      tag: 'tokens',
      kind: 'write',
      uiPath: '/settings/tokens',
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: '3f0c9a52-6a47-4b8e-9a3c-2d7e5b1f8c04' }] }),
      body: EmptyBody,
      response: { schemaId: 'svc-observatory-token-revoke.v1', fields: { token: Token } },
      example: {
        schema: 'svc-observatory-token-revoke.v1',
        generatedAt,
        token: { ...exampleToken, revokedAt: '2026-11-23T09:00:00.000Z' },
      },
      handler: async ({ principal, params, requestId }) => ({
        token: await identity.revokeToken({ principal: who(principal), requestId }, params.id),
      }),
    }),
    defineEndpoint({
      id: 'listOperators',
      title: 'List operators',
      description: 'Every operator: username, display name, the scopes they hold, and whether they are disabled. A token bound to toolsets is refused (403): operators reach every toolset.',
      method: 'GET',
      path: `${V1}/operators`,
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      spansEveryToolset: 'the operator list',
      tag: 'operators',
      kind: 'read',
      uiPath: '/settings/operators',
      response: { schemaId: 'svc-observatory-operators.v1', fields: { operators: Type.Array(Operator) } },
      example: { schema: 'svc-observatory-operators.v1', generatedAt, operators: [exampleOperator] },
      handler: async () => ({ operators: await identity.listOperators() }),
    }),
    defineEndpoint({
      id: 'createOperator',
      title: 'Add an operator',
      description: 'Adds an operator holding `scopes` and issues their first token, unbound, with the same scopes (`firstToken.token` is the plaintext, shown once). The caller can give only scopes it holds itself (403 otherwise); a token bound to toolsets cannot add operators (403). 409 `conflict` when the username exists. Audited (`operator.create`).',
      method: 'POST',
      path: `${V1}/operators`,
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      spansEveryToolset: 'adding an operator',
      tag: 'operators',
      kind: 'write',
      uiPath: '/settings/operators',
      errors: [409],
      body: Type.Object({
        username: Username,
        displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        scopes: Type.Array(ScopeName, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true }),
      }, { examples: [{ username: 'alice', displayName: 'Alice Example', scopes: ['read:dashboard', 'read:events'] }] }),
      response: {
        schemaId: 'svc-observatory-operator-create.v1',
        fields: { operator: Operator, firstToken: Type.Object(TokenCreateFields) },
      },
      example: {
        schema: 'svc-observatory-operator-create.v1',
        generatedAt,
        operator: exampleOperator,
        firstToken: {
          ...exampleToken,
          name: 'alice-initial',
          scopes: ['read:dashboard', 'read:events'],
          userId: exampleOperator.id,
          token: 'svctok_Q2x9aBexampleexampleexampleexampleexam',
        },
      },
      handler: async ({ principal, body, requestId }) => {
        const created = await identity.createOperator(body, { principal: who(principal), requestId });
        return { operator: created.operator, firstToken: created.firstToken };
      },
    }),
    defineEndpoint({
      id: 'createOperatorToken',
      title: 'Issue a token for an operator',
      description: 'Issues a token for the operator `username` (yourself included), like `POST {v1}/tokens` does for the caller. The token acts as that operator, so the caller must hold every scope the operator holds (403 otherwise); it carries only scopes both hold (403 for one the caller lacks, 400 for one the operator lacks); a caller bound to toolsets issues only tokens bound within its own toolsets (omitting `toolsets` gives the caller\'s). 404 for an unknown operator, 409 for a disabled one. Audited (`token.create`, with the issuer as actor).',
      method: 'POST',
      path: `${V1}/operators/{username}/tokens`,
      auth: 'session-or-bearer',
      scope: 'write:tokens',
      tag: 'operators',
      kind: 'write',
      uiPath: '/settings/operators',
      errors: [409],
      params: Type.Object({ username: Username }, { examples: [{ username: 'alice' }] }),
      body: Type.Object(NewTokenBody, { examples: [{ name: 'alice-laptop', scopes: ['read:events'], toolsets: ['edge-eu'] }] }),
      response: { schemaId: 'svc-observatory-token-create.v1', fields: TokenCreateFields },
      example: {
        schema: 'svc-observatory-token-create.v1',
        generatedAt,
        ...exampleToken,
        name: 'alice-laptop',
        scopes: ['read:events'],
        toolsets: ['edge-eu'],
        userId: exampleOperator.id,
        token: 'svctok_Q2x9aBexampleexampleexampleexampleexam',
      },
      handler: async ({ principal, params, body, requestId }) =>
        identity.createTokenFor({ principal: who(principal), requestId }, params.username, body),
    }),
    defineEndpoint({
      id: 'getAccount',
      title: 'Who am I',
      description: 'The operator behind the calling credential, how it authenticated and the scopes it carries.',
      method: 'GET',
      path: `${V1}/account`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'account',
      kind: 'read',
      uiPath: '/settings/account',
      response: {
        schemaId: 'svc-account.v1',
        fields: {
          userId: Type.String(),
          username: Type.String(),
          via: Type.Union([Type.Literal('bearer'), Type.Literal('session')]),
          scopes: Type.Array(Type.String()),
        },
      },
      example: {
        schema: 'svc-account.v1',
        generatedAt,
        userId: exampleToken.userId,
        username: 'admin',
        via: 'bearer',
        scopes: ['read:dashboard'],
      },
      handler: async ({ principal }) => {
        const p = who(principal);
        return { userId: p.userId, username: p.username, via: p.via === 'session' ? 'session' : 'bearer', scopes: [...p.scopes].sort() } as const;
      },
    }),
    defineEndpoint({
      id: 'logout',
      title: 'End the browser session',
      description: 'Revokes the calling operator session and clears its cookie. With a bearer token it does nothing.',
      method: 'POST',
      path: `${V1}/account/logout`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'account',
      kind: 'write',
      body: EmptyBody,
      response: { schemaId: 'svc-account-logout.v1', fields: { ok: Type.Boolean(), endedSession: Type.Boolean() } },
      example: { schema: 'svc-account-logout.v1', generatedAt, ok: true, endedSession: true },
      handler: async ({ principal, reply }) => {
        const sessionId = who(principal).sessionId;
        if (sessionId === null) return { ok: true, endedSession: false };
        await identity.closeSession(sessionId);
        void reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return { ok: true, endedSession: true };
      },
    }),
  ];
}
