import { Type } from '@sinclair/typebox';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { SESSION_COOKIE } from '../../../platform/http/auth.ts';
import { EmptyBody, defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, V1 } from '../../../platform/http/registry.ts';
import type { PasskeyService } from './service.ts';

/** base64url, as browsers serialise WebAuthn binary fields (padding tolerated). */
const Base64Url = (maxLength: number, description?: string) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]*={0,2}$', maxLength, ...(description ? { description } : {}) });

const DeviceLabel = Type.String({ minLength: 1, maxLength: 100, description: 'A name that helps you recognise the authenticator.' });

const Passkey = Type.Object({
  id: Type.String({ format: 'uuid' }),
  credentialIdPrefix: Type.String({ description: 'The first 8 characters of the base64url credential id.' }),
  deviceLabel: Type.String(),
  transports: Type.Array(Type.String(), { description: 'Transport hints the authenticator reported: usb, nfc, ble, hybrid, internal, …' }),
  deviceType: Type.String({ description: '`singleDevice` or `multiDevice` (synced).' }),
  backedUp: Type.Boolean(),
  createdAt: IsoDate,
  lastUsedAt: Nullable(IsoDate),
  revokedAt: Nullable(IsoDate),
});

const CredentialDescriptor = Type.Object(
  { id: Type.String(), type: Type.String(), transports: Type.Optional(Type.Array(Type.String())) },
  { additionalProperties: true },
);
const Extensions = Type.Object({}, { additionalProperties: true });

/** PublicKeyCredentialCreationOptionsJSON: pass it to `navigator.credentials.create` (after decoding). */
const CreationOptions = Type.Object(
  {
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }, { additionalProperties: true }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }, { additionalProperties: true }),
    challenge: Type.String(),
    pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.String() }, { additionalProperties: true })),
    timeout: Type.Optional(Type.Integer()),
    excludeCredentials: Type.Optional(Type.Array(CredentialDescriptor)),
    authenticatorSelection: Type.Optional(
      Type.Object(
        {
          authenticatorAttachment: Type.Optional(Type.String()),
          requireResidentKey: Type.Optional(Type.Boolean()),
          residentKey: Type.Optional(Type.String()),
          userVerification: Type.Optional(Type.String()),
        },
        { additionalProperties: true },
      ),
    ),
    hints: Type.Optional(Type.Array(Type.String())),
    attestation: Type.Optional(Type.String()),
    attestationFormats: Type.Optional(Type.Array(Type.String())),
    extensions: Type.Optional(Extensions),
  },
  { additionalProperties: true, description: 'PublicKeyCredentialCreationOptionsJSON (WebAuthn Level 3).' },
);

/** PublicKeyCredentialRequestOptionsJSON: pass it to `navigator.credentials.get` (after decoding). */
const RequestOptions = Type.Object(
  {
    challenge: Type.String(),
    timeout: Type.Optional(Type.Integer()),
    rpId: Type.Optional(Type.String()),
    allowCredentials: Type.Optional(Type.Array(CredentialDescriptor)),
    userVerification: Type.Optional(Type.String()),
    hints: Type.Optional(Type.Array(Type.String())),
    extensions: Type.Optional(Extensions),
  },
  { additionalProperties: true, description: 'PublicKeyCredentialRequestOptionsJSON (WebAuthn Level 3).' },
);

/** The fields every PublicKeyCredential JSON carries; the inner `response` differs by ceremony. */
const credentialFields = {
  id: Base64Url(2048, 'The credential id (base64url).'),
  rawId: Base64Url(2048),
  type: Type.Literal('public-key'),
  clientExtensionResults: Type.Optional(Type.Object({}, { additionalProperties: true })),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
};

/** RegistrationResponseJSON, as `PublicKeyCredential.toJSON()` gives it after `create`. */
const RegistrationResponse = Type.Object(
  {
    ...credentialFields,
    response: Type.Object(
      {
        clientDataJSON: Base64Url(65_536),
        attestationObject: Base64Url(262_144),
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true, description: 'The RegistrationResponseJSON from `navigator.credentials.create`.' },
);

/** AuthenticationResponseJSON, as `PublicKeyCredential.toJSON()` gives it after `get`. */
const AuthenticationResponse = Type.Object(
  {
    ...credentialFields,
    response: Type.Object(
      {
        clientDataJSON: Base64Url(65_536),
        authenticatorData: Base64Url(65_536),
        signature: Base64Url(4_096),
        userHandle: Type.Optional(Nullable(Base64Url(256))),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true, description: 'The AuthenticationResponseJSON from `navigator.credentials.get`.' },
);

const generatedAt = '2026-11-23T08:00:00.000Z';
const exampleUserId = '0b7f9a1c-5d2e-4c6b-8e3a-1f2d3c4b5a69';
const examplePasskey = {
  id: '5d3e8b1a-7c2f-4e9d-a6b0-3c1f2e4d5a6b',
  credentialIdPrefix: 'q3Xv9LmT',
  deviceLabel: 'Work laptop (Touch ID)',
  transports: ['hybrid', 'internal'],
  deviceType: 'multiDevice',
  backedUp: true,
  createdAt: '2026-11-20T14:02:11.000Z',
  lastUsedAt: '2026-11-23T07:58:40.000Z',
  revokedAt: null,
};
const exampleCreationOptions = {
  rp: { name: 'Observatory', id: 'observatory.example.com' },
  user: { id: 'C3-aHF0uTGuOOh8tPCtaaQ', name: 'admin', displayName: 'Administrator' },
  challenge: 'mB3yq0tHk1_4yCqGZ3lRpmt7kQz2v0uJrFj2b3mVdXc',
  pubKeyCredParams: [
    { alg: -8, type: 'public-key' },
    { alg: -7, type: 'public-key' },
    { alg: -257, type: 'public-key' },
  ],
  timeout: 300000,
  attestation: 'none',
  excludeCredentials: [{ id: 'q3Xv9LmT0c5bYw2hN8pR4sKfJ1eD6uGz', type: 'public-key', transports: ['hybrid', 'internal'] }],
  authenticatorSelection: { residentKey: 'preferred', userVerification: 'required', requireResidentKey: false },
  extensions: { credProps: true },
  hints: [],
};
/** The members every example PublicKeyCredential JSON shares (the registration and login finish examples). */
const exampleCredential = {
  id: 'q2Zx3Tn4y5Vb6Nc7Md8Le9Kf0Jg',
  rawId: 'q2Zx3Tn4y5Vb6Nc7Md8Le9Kf0Jg',
  type: 'public-key',
  clientExtensionResults: {},
  authenticatorAttachment: 'cross-platform',
};
const exampleRequestOptions = {
  rpId: 'observatory.example.com',
  challenge: 'Zr8c1xK2mPq9sT4vW7yA0bD3fG6hJ9kL2nQ5rU8xZ1c',
  allowCredentials: [{ id: 'q3Xv9LmT0c5bYw2hN8pR4sKfJ1eD6uGz', type: 'public-key', transports: ['hybrid', 'internal'] }],
  timeout: 300000,
  userVerification: 'required',
};

/** The principal is present on every authenticated endpoint; the server guarantees it. */
const who = (principal: Principal | null): Principal => principal as Principal;

export interface PasskeyEndpointOptions {
  /** Whether the session cookie carries `Secure` (config.cookieSecure). */
  cookieSecure: boolean;
}

export function passkeyEndpoints(passkeys: PasskeyService, options: PasskeyEndpointOptions): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listPasskeys',
      title: 'List your passkeys',
      description: 'The calling operator\'s WebAuthn passkeys, newest first, revoked ones included with revokedAt. Only a credential id prefix, the device label, transports and lifecycle timestamps; never public key material.',
      method: 'GET',
      path: `${V1}/account/passkeys`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'account',
      kind: 'read',
      uiPath: '/settings/account',
      response: { schemaId: 'svc-passkeys-list.v1', fields: { passkeys: Type.Array(Passkey) } },
      example: { schema: 'svc-passkeys-list.v1', generatedAt, passkeys: [examplePasskey] },
      handler: async ({ principal }) => ({ passkeys: await passkeys.listPasskeys(who(principal).userId) }),
    }),
    defineEndpoint({
      id: 'startPasskeyRegistration',
      title: 'Start registering a passkey',
      description: 'Returns a WebAuthn registration challenge: pass `options` to `navigator.credentials.create`, then post the result with `challengeId` to the finish call within 5 minutes. Your active passkeys are excluded so an authenticator is not registered twice. Call it from an operator session, or with a token that carries every scope of its operator and is not bound to toolsets; any other token gets 403 `forbidden`.',
      method: 'POST',
      path: `${V1}/account/passkeys/register/start`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'account',
      kind: 'write',
      uiPath: '/settings/account',
      body: Type.Object({ deviceLabel: Type.Optional(DeviceLabel) }, { examples: [{ deviceLabel: 'YubiKey 5C (desk)' }] }),
      response: {
        schemaId: 'svc-passkey-registration-start.v1',
        fields: { challengeId: Type.String({ format: 'uuid' }), options: CreationOptions },
      },
      example: {
        schema: 'svc-passkey-registration-start.v1',
        generatedAt,
        challengeId: '8e2f4a6c-1b3d-4f5e-9a7b-c0d1e2f3a4b5',
        options: exampleCreationOptions,
      },
      errors: [403],
      handler: async ({ principal, body, requestId }) =>
        passkeys.startRegistration({ principal: who(principal), requestId }, { deviceLabel: body.deviceLabel }),
    }),
    defineEndpoint({
      id: 'finishPasskeyRegistration',
      title: 'Finish registering a passkey',
      description: 'Verifies the authenticator\'s attestation against the challenge and stores the passkey. The passkey records the scopes of the credential that finishes the registration: a session it opens never carries more (nor more than the operator holds at the time). Needs the same credential as the start (a session, or a token with every scope of its operator and no toolset binding; else 403). A challenge is good for one attempt: unknown, expired, used or someone else\'s gives 400 `challenge-invalid`; a response that does not verify gives 400 `passkey-verification-failed`; an already registered authenticator gives 409.',
      method: 'POST',
      path: `${V1}/account/passkeys/register/finish`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'account',
      kind: 'write',
      uiPath: '/settings/account',
      body: Type.Object({
        challengeId: Type.String({ format: 'uuid' }),
        response: RegistrationResponse,
        deviceLabel: Type.Optional(DeviceLabel),
      }, {
        // Illustrative only: a real response is made by the authenticator over the challenge just issued.
        examples: [
          {
            challengeId: '8e2f4a6c-1b3d-4f5e-9a7b-c0d1e2f3a4b5',
            response: {
              ...exampleCredential,
              response: {
                clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiZXhhbXBsZSJ9',
                attestationObject: 'o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVhE',
                transports: ['usb', 'nfc'],
              },
            },
            deviceLabel: 'YubiKey 5C (desk)',
          },
        ],
      }),
      response: { schemaId: 'svc-passkey-registration-finish.v1', fields: { ok: Type.Literal(true), passkey: Passkey } },
      example: {
        schema: 'svc-passkey-registration-finish.v1',
        generatedAt,
        ok: true,
        passkey: { ...examplePasskey, lastUsedAt: null },
      },
      errors: [403, 409],
      handler: async ({ principal, body, requestId }) => ({
        ok: true as const,
        passkey: await passkeys.finishRegistration(
          { principal: who(principal), requestId },
          {
            challengeId: body.challengeId,
            // Shape-checked by the body schema; the WebAuthn library checks everything else.
            response: body.response as unknown as RegistrationResponseJSON,
            deviceLabel: body.deviceLabel,
          },
        ),
      }),
    }),
    defineEndpoint({
      id: 'revokePasskey',
      title: 'Revoke a passkey',
      description: 'Revokes one of your passkeys: it can no longer log in, on any instance, and the sessions it opened end. Revoking a revoked passkey returns it unchanged. Like registration, it needs an operator session or a token with every scope of its operator and no toolset binding (else 403).',
      method: 'POST',
      path: `${V1}/account/passkeys/{id}/revoke`,
      auth: 'session-or-bearer',
      scope: null,
      tag: 'account',
      kind: 'write',
      uiPath: '/settings/account',
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: '5a7c9e1b-3d5f-4a2c-8e4b-6d8f0a2c4e6a' }] }),
      body: EmptyBody,
      response: { schemaId: 'svc-passkey-revoke.v1', fields: { passkey: Passkey } },
      example: {
        schema: 'svc-passkey-revoke.v1',
        generatedAt,
        passkey: { ...examplePasskey, revokedAt: '2026-11-23T08:00:00.000Z' },
      },
      errors: [403],
      handler: async ({ principal, params, requestId }) => ({
        passkey: await passkeys.revokePasskey({ principal: who(principal), requestId }, params.id),
      }),
    }),
    defineEndpoint({
      id: 'startPasskeyLogin',
      title: 'Start a passkey login',
      description: 'Returns a WebAuthn authentication challenge: pass `options` to `navigator.credentials.get`, then post the result with `challengeId` to the login finish call within 5 minutes. With `username` the challenge lists that operator\'s passkeys (a username that cannot log in gets credentials that look alike and fail at the finish); without it the browser offers its discoverable passkeys. One address (an IPv6 /64) may hold 10 unfinished login challenges at a time, and everyone together 10,000: beyond that 429 `rate-limited` with `Retry-After`, the seconds until the oldest one expires.',
      method: 'POST',
      path: `${V1}/account/login/start`,
      auth: 'none',
      scope: null,
      tag: 'account',
      kind: 'write',
      uiPath: '/login',
      body: Type.Object({ username: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, { examples: [{ username: 'admin' }] }),
      response: {
        schemaId: 'svc-passkey-login-start.v1',
        fields: { challengeId: Type.String({ format: 'uuid' }), options: RequestOptions },
      },
      example: {
        schema: 'svc-passkey-login-start.v1',
        generatedAt,
        challengeId: '2c4e6a8b-0d1f-4a3c-8e5b-7d9f1a3c5e7b',
        options: exampleRequestOptions,
      },
      errors: [429],
      handler: async ({ body, request }) => passkeys.startLogin({ username: body.username, clientIp: request.ip }),
    }),
    defineEndpoint({
      id: 'finishPasskeyLogin',
      title: 'Finish a passkey login',
      description: 'Verifies the passkey assertion and opens an operator session: the session secret is set as the HttpOnly, SameSite=Strict cookie `obs_session` and is never in the body. Every failure (challenge, passkey, signature, revoked passkey, disabled operator) answers the same 401 `login-failed`.',
      method: 'POST',
      path: `${V1}/account/login/finish`,
      auth: 'none',
      scope: null,
      tag: 'account',
      kind: 'write',
      uiPath: '/login',
      body: Type.Object(
        { challengeId: Type.String({ format: 'uuid' }), response: AuthenticationResponse },
        {
          // Illustrative only: a real assertion is signed by the authenticator over the challenge just issued.
          examples: [
            {
              challengeId: '2c4e6a8b-0d1f-4a3c-8e5b-7d9f1a3c5e7b',
              response: {
                ...exampleCredential,
                response: {
                  clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiZXhhbXBsZSJ9',
                  authenticatorData: 'SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ',
                  signature: 'MEUCIQDexampleexampleexampleexampleexampleAiAexampleexampleexample',
                  userHandle: 'YjZhMGMxZDItM2U0Zi00YTViLThjNmQtN2U4ZjlhMGIxYzJk',
                },
              },
            },
          ],
        },
      ),
      response: {
        schemaId: 'svc-passkey-login.v1',
        fields: {
          ok: Type.Literal(true),
          userId: Type.String({ format: 'uuid' }),
          username: Type.String(),
          expiresAt: IsoDate,
        },
      },
      example: {
        schema: 'svc-passkey-login.v1',
        generatedAt,
        ok: true,
        userId: exampleUserId,
        username: 'admin',
        expiresAt: '2026-11-23T20:00:00.000Z',
      },
      errors: [401],
      handler: async ({ body, requestId, reply }) => {
        const session = await passkeys.finishLogin(
          { challengeId: body.challengeId, response: body.response as unknown as AuthenticationResponseJSON },
          requestId,
        );
        void reply.setCookie(SESSION_COOKIE, session.secret, {
          httpOnly: true,
          sameSite: 'strict',
          path: '/',
          secure: options.cookieSecure,
          expires: session.expiresAt,
        });
        return { ok: true as const, userId: session.userId, username: session.username, expiresAt: session.expiresAt.toISOString() };
      },
    }),
  ];
}
