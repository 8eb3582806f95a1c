import { randomUUID } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { AuditLog, CallContext } from '../../platform/audit/service.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Db } from '../../platform/db/client.ts';
import { withTransaction } from '../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, notFound, ServiceError } from '../../platform/errors.ts';
import * as repo from './passkeys.repository.ts';
import type { IdentityService } from './service.ts';

/**
 * Operator passkeys (spec C6) and the passkey login that opens an operator session (C9).
 *
 * Challenges live in `webauthn_challenges`, not in memory, so a ceremony may start on one instance
 * and finish on another. A challenge is taken (marked consumed) before its response is verified,
 * so every challenge is good for exactly one attempt, successful or not.
 */

/** How long a started ceremony may take; also the `timeout` the browser is told. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** How many characters of the credential id the list shows. */
export const CREDENTIAL_ID_PREFIX_LENGTH = 8;
/** Ed25519, ES256 (P-256) and RS256: what authenticators in the wild produce. Fixed, not runtime-dependent. */
const SUPPORTED_ALGORITHMS = [-8, -7, -257];
/** Transport hints the WebAuthn spec defines; anything else a client sends is dropped. */
const KNOWN_TRANSPORTS: readonly string[] = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'];

export interface WebAuthnSettings {
  rpId: string;
  rpName: string;
  /** Every origin a ceremony may come from (the public URL's origin unless configured). */
  origins: string[];
}

export interface PasskeyView {
  id: string;
  credentialIdPrefix: string;
  deviceLabel: string;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The only shape a passkey leaves the service in: never the public key, never the full credential id. */
export function toPasskeyView(row: repo.PasskeyRow): PasskeyView {
  return {
    id: row.id,
    credentialIdPrefix: row.credentialId.slice(0, CREDENTIAL_ID_PREFIX_LENGTH),
    deviceLabel: row.deviceLabel,
    transports: row.transports,
    deviceType: row.deviceType,
    backedUp: row.backedUp,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/** The WebAuthn user handle of an operator: the 16 bytes of their uuid. */
function userHandleOf(userId: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));
}

function knownTransports(values: readonly string[] | undefined): string[] {
  return [...new Set((values ?? []).filter((t) => KNOWN_TRANSPORTS.includes(t)))].sort();
}

/** One answer for every login failure, so a caller never learns which check refused them. */
export const loginFailed = () =>
  new ServiceError(401, 'login-failed', 'The passkey login could not be completed. Start again from the login page.');

const challengeInvalid = () =>
  badRequest('challenge-invalid', 'The challenge is unknown, expired, already used or not yours. Start the registration again.');

function isUniqueViolation(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    if ((e as { code?: unknown }).code === '23505') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

export interface PasskeyServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  identity: Pick<IdentityService, 'openSession' | 'closeSessionsOfPasskey' | 'findUser' | 'findUserByUsername'>;
  webauthn: WebAuthnSettings;
}

export function createPasskeyService(deps: PasskeyServiceDeps) {
  const { db, clock, audit, identity, webauthn } = deps;

  async function storeChallenge(purpose: repo.ChallengePurpose, challenge: string, userId: string | null, deviceLabel: string | null) {
    const now = clock.now();
    const row: repo.ChallengeRow = {
      id: randomUUID(),
      purpose,
      userId,
      challenge,
      deviceLabel,
      clientIp: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
      consumedAt: null,
    };
    await repo.insertChallenge(db, row);
    return row;
  }

  return {
    async listPasskeys(userId: string): Promise<PasskeyView[]> {
      return (await repo.listPasskeysOfUser(db, userId)).map(toPasskeyView);
    },

    async startRegistration(
      ctx: CallContext,
      input: { deviceLabel?: string | undefined },
    ): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
      const user = await identity.findUser(ctx.principal.userId);
      assertThat(user, notFound('The calling operator no longer exists.'));
      const active = await repo.listActivePasskeysOfUser(db, user.id);
      const options = await generateRegistrationOptions({
        rpName: webauthn.rpName,
        rpID: webauthn.rpId,
        userName: user.username,
        userID: userHandleOf(user.id),
        userDisplayName: user.displayName,
        timeout: CHALLENGE_TTL_MS,
        attestationType: 'none',
        excludeCredentials: active.map((p) => ({ id: p.credentialId, transports: p.transports })),
        // A resident key lets the operator log in without typing a username; user verification
        // (PIN, biometrics) is required because the passkey is the whole login, not a second factor.
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
        supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
      });
      const stored = await storeChallenge('registration', options.challenge, user.id, input.deviceLabel ?? null);
      return { challengeId: stored.id, options };
    },

    async finishRegistration(
      ctx: CallContext,
      input: { challengeId: string; response: RegistrationResponseJSON; deviceLabel?: string | undefined },
    ): Promise<PasskeyView> {
      const challenge = await repo.consumeChallenge(
        db,
        { id: input.challengeId, purpose: 'registration', userId: ctx.principal.userId },
        clock.now(),
      );
      assertThat(challenge, challengeInvalid());

      const failed = badRequest('passkey-verification-failed', 'The authenticator response could not be verified against the challenge. Start the registration again.');
      let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
      try {
        verification = await verifyRegistrationResponse({
          response: input.response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: webauthn.origins,
          expectedRPID: webauthn.rpId,
          requireUserVerification: true,
          supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
        });
      } catch {
        throw failed;
      }
      if (!verification.verified) throw failed;
      const info = verification.registrationInfo;

      const now = clock.now();
      const row: repo.PasskeyRow = {
        id: randomUUID(),
        userId: ctx.principal.userId,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
        counter: info.credential.counter,
        transports: knownTransports(info.credential.transports),
        scopes: [],
        deviceLabel: input.deviceLabel ?? challenge.deviceLabel ?? `Passkey added ${now.toISOString().slice(0, 10)}`,
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        createdAt: now,
        lastUsedAt: null,
        revokedAt: null,
      };
      const duplicate = conflict('This passkey is already registered.');
      try {
        await withTransaction(db, async (tx) => {
          if (await repo.findPasskeyByCredentialId(tx, row.credentialId)) throw duplicate;
          await repo.insertPasskey(tx, row);
          await audit.record(tx, {
            verb: 'passkey.register',
            target: `passkey:${row.id}`,
            surface: 'api',
            actor: { userId: ctx.principal.userId, username: ctx.principal.username },
            after: toPasskeyView(row),
            requestId: ctx.requestId,
          });
        });
      } catch (error) {
        // Two finishes racing with the same authenticator: the unique index decides.
        if (isUniqueViolation(error)) throw duplicate;
        throw error;
      }
      return toPasskeyView(row);
    },

    /** Idempotent: revoking a revoked passkey returns it unchanged and writes nothing. */
    async revokePasskey(ctx: CallContext, id: string): Promise<PasskeyView> {
      return withTransaction(db, async (tx) => {
        const found = await repo.findPasskey(tx, id);
        const owned = found !== null && found.userId === ctx.principal.userId ? found : null;
        assertThat(owned, notFound(`No passkey ${id} belongs to you.`));
        if (owned.revokedAt !== null) return toPasskeyView(owned);
        const revoked = { ...owned, revokedAt: clock.now() };
        // A concurrent revoke got there first: answer with its result, audit nothing twice.
        if (!(await repo.revokePasskey(tx, id, revoked.revokedAt))) {
          const current = await repo.findPasskey(tx, id);
          return toPasskeyView(current ?? revoked);
        }
        const endedSessions = await identity.closeSessionsOfPasskey(tx, id);
        await audit.record(tx, {
          verb: 'passkey.revoke',
          target: `passkey:${id}`,
          surface: 'api',
          actor: { userId: ctx.principal.userId, username: ctx.principal.username },
          before: toPasskeyView(owned),
          after: { ...toPasskeyView(revoked), endedSessions },
          requestId: ctx.requestId,
        });
        return toPasskeyView(revoked);
      });
    },

    /**
     * With a username, the challenge is bound to that operator and lists their active passkeys;
     * without one, the list is empty and the browser offers its discoverable credentials.
     */
    async startLogin(input: { username?: string | undefined }): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
      let userId: string | null = null;
      let allowCredentials: { id: string; transports: string[] }[] = [];
      if (input.username !== undefined) {
        const user = await identity.findUserByUsername(input.username);
        if (user && user.disabledAt === null) {
          userId = user.id;
          allowCredentials = (await repo.listActivePasskeysOfUser(db, user.id)).map((p) => ({ id: p.credentialId, transports: p.transports }));
        }
      }
      const options = await generateAuthenticationOptions({
        rpID: webauthn.rpId,
        allowCredentials,
        timeout: CHALLENGE_TTL_MS,
        userVerification: 'required',
      });
      // An unknown username still gets a challenge; it binds to a user id no passkey has, so the
      // finish fails the same way a wrong passkey does.
      const stored = await storeChallenge('authentication', options.challenge, userId ?? (input.username !== undefined ? randomUUID() : null), null);
      return { challengeId: stored.id, options };
    },

    /**
     * Verifies an assertion and opens an operator session. Every failure is the same 401
     * `login-failed`; the returned secret goes into the session cookie and nowhere else.
     */
    async finishLogin(
      input: { challengeId: string; response: AuthenticationResponseJSON },
      requestId: string,
    ): Promise<{ userId: string; username: string; sessionId: string; secret: string; expiresAt: Date }> {
      const challenge = await repo.consumeChallenge(db, { id: input.challengeId, purpose: 'authentication' }, clock.now());
      if (!challenge) throw loginFailed();
      const found = await repo.findPasskeyWithUser(db, input.response.id);
      if (!found) throw loginFailed();
      const { passkey, user } = found;
      if (passkey.revokedAt !== null || user.disabledAt !== null) throw loginFailed();
      if (challenge.userId !== null && challenge.userId !== passkey.userId) throw loginFailed();
      // A discoverable credential names its user; it must be the passkey's owner.
      const handle = input.response.response.userHandle;
      if (typeof handle === 'string' && Buffer.from(handle, 'base64url').toString('hex') !== passkey.userId.replace(/-/g, '')) {
        throw loginFailed();
      }

      let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
      try {
        verification = await verifyAuthenticationResponse({
          response: input.response,
          expectedChallenge: challenge.challenge,
          expectedOrigin: webauthn.origins,
          expectedRPID: webauthn.rpId,
          credential: {
            id: passkey.credentialId,
            publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
            counter: passkey.counter,
            transports: passkey.transports,
          },
          requireUserVerification: true,
        });
      } catch {
        throw loginFailed();
      }
      if (!verification.verified) throw loginFailed();

      return withTransaction(db, async (tx) => {
        const now = clock.now();
        const used = await repo.recordPasskeyUse(tx, passkey.id, {
          counter: verification.authenticationInfo.newCounter,
          backedUp: verification.authenticationInfo.credentialBackedUp,
          at: now,
        });
        // Revoked between the read above and now.
        if (!used) throw loginFailed();
        const session = await identity.openSession(tx, user.id, passkey.id);
        await audit.record(tx, {
          verb: 'session.login',
          target: `session:${session.id}`,
          surface: 'api',
          actor: { userId: user.id, username: user.username },
          after: { sessionId: session.id, userId: user.id, passkeyId: passkey.id, via: 'passkey', expiresAt: session.expiresAt.toISOString() },
          requestId,
        });
        return { userId: user.id, username: user.username, sessionId: session.id, secret: session.secret, expiresAt: session.expiresAt };
      });
    },
  };
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;
