import { createHmac, randomUUID } from 'node:crypto';
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
import type { AuditLog, CallContext } from '../../../platform/audit/service.ts';
import { isUniqueViolation } from '../../../platform/db/transaction.ts';
import { addressKey } from '../../../platform/client-address.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, forbidden, notFound, ServiceError } from '../../../platform/errors.ts';
import { isScope, type Principal } from '../../../platform/http/registry.ts';
import type { IdentityService } from '../tokens/service.ts';
import * as repo from './repository.ts';
import type { UserRow } from './repository.ts';

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
/**
 * Outstanding (unused, unexpired) login challenges one address may hold: a person logging in
 * needs one or two; anyone holding more is writing rows, not logging in. IPv6 counts by /64.
 */
export const MAX_LOGIN_CHALLENGES_PER_ADDRESS = 10;
/** Outstanding login challenges across all addresses, so rotating addresses cannot write unbounded rows. */
export const MAX_LOGIN_CHALLENGES_TOTAL = 10_000;
/** The transports a decoy credential claims: those of a synced platform passkey, the commonest kind. */
const DECOY_TRANSPORTS = ['hybrid', 'internal'];

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

/**
 * Passkeys may be added or revoked only by a credential that could not gain anything by it: a
 * session (whose scopes are already a passkey's), or a bearer token that holds every scope its
 * operator holds and is not bound to toolsets. Anything less could register a passkey whose
 * sessions carry more than the token itself does.
 */
function assertMayManagePasskeys(principal: Principal, user: UserRow): void {
  if (principal.via === 'session') return;
  const missing = user.scopes.filter((s) => isScope(s) && !principal.scopes.has(s));
  if (principal.via === 'bearer' && principal.toolsets === null && missing.length === 0) return;
  throw forbidden(
    'Passkeys can be registered or revoked only from an operator session or with a token that carries every scope of its operator and is not bound to toolsets' +
      (principal.toolsets !== null ? '; this token is bound to toolsets.' : missing.length > 0 ? `; this token lacks ${missing.sort().join(', ')}.` : '.'),
  );
}

/** The scopes a new passkey records: those of the credential registering it, as they are now. */
const scopesOfRegistrar = (principal: Principal): string[] => [...principal.scopes].sort();

const challengeInvalid = () =>
  badRequest('challenge-invalid', 'The challenge is unknown, expired, already used or not yours. Start the registration again.');

/** Whole seconds (at least 1) until `at`; 1 when unknown. */
function secondsUntil(at: Date | null, now: Date): number {
  return at === null ? 1 : Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000));
}


export interface PasskeyServiceDeps {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  identity: Pick<IdentityService, 'openSession' | 'closeSessionsOfPasskey' | 'findUser' | 'findUserByUsername' | 'derivedSecret'>;
  webauthn: WebAuthnSettings;
}

export function createPasskeyService(deps: PasskeyServiceDeps) {
  const { db, clock, audit, identity, webauthn } = deps;

  function challengeRow(
    purpose: repo.ChallengePurpose,
    challenge: string,
    fields: { userId: string | null; deviceLabel?: string | null; clientIp?: string | null },
  ): repo.ChallengeRow {
    const now = clock.now();
    return {
      id: randomUUID(),
      purpose,
      userId: fields.userId,
      challenge,
      deviceLabel: fields.deviceLabel ?? null,
      clientIp: fields.clientIp ?? null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + CHALLENGE_TTL_MS),
      consumedAt: null,
    };
  }

  /** The calling operator, and a 403 unless the credential may add or revoke passkeys. */
  async function managingOperator(principal: Principal): Promise<UserRow> {
    const user = await identity.findUser(principal.userId);
    assertThat(user, notFound('The calling operator no longer exists.'));
    assertMayManagePasskeys(principal, user);
    return user;
  }

  /**
   * Stores a login challenge for an address group unless that group, or everyone together, already
   * holds too many outstanding ones (429 with the seconds until the first of them expires). The
   * group's lock makes its count exact; the total may overshoot by the starts running at once.
   */
  async function storeLoginChallenge(row: repo.ChallengeRow, clientIp: string): Promise<void> {
    await withTransaction(db, async (tx) => {
      const now = clock.now();
      await repo.lockLoginAddress(tx, clientIp);
      // The group's dead rows go now, on the index the count uses anyway; the hourly sweep takes the rest.
      await repo.deleteExpiredChallengesOf(tx, clientIp, now);
      const mine = await repo.outstandingLoginChallenges(tx, now, clientIp);
      if (mine.count >= MAX_LOGIN_CHALLENGES_PER_ADDRESS) {
        const wait = secondsUntil(mine.firstExpiresAt, now);
        throw new ServiceError(
          429,
          'rate-limited',
          `This address has ${mine.count} passkey logins started and not finished; finish one or start again in ${wait} s.`,
          { retryAfterSec: wait },
        );
      }
      const all = await repo.outstandingLoginChallenges(tx, now);
      if (all.count >= MAX_LOGIN_CHALLENGES_TOTAL) {
        const wait = secondsUntil(all.firstExpiresAt, now);
        throw new ServiceError(429, 'rate-limited', `Too many passkey logins are in progress; start again in ${wait} s.`, { retryAfterSec: wait });
      }
      await repo.insertChallenge(tx, row);
    });
  }

  /**
   * What an unknown username (or one without passkeys, or a disabled operator) is answered with:
   * one credential descriptor shaped like a real one, whose id is HMAC-SHA256 of the username (32
   * bytes, the length of common authenticators' ids) under a key all instances share, so the same
   * username gets the same answer on every call and every instance, and no caller can tell it from
   * a real passkey before the finish fails with the usual 401.
   */
  async function decoyCredentials(username: string): Promise<{ id: string; transports: string[] }[]> {
    const key = await identity.derivedSecret('login-decoy-credentials');
    const id = createHmac('sha256', key).update(username, 'utf8').digest().toString('base64url');
    return [{ id, transports: [...DECOY_TRANSPORTS] }];
  }

  return {
    /** Deletes the WebAuthn challenges that can no longer be used; returns how many. */
    sweepExpiredChallenges: (now: Date) => repo.deleteExpiredChallenges(db, now),

    async listPasskeys(userId: string): Promise<PasskeyView[]> {
      return (await repo.listPasskeysOfUser(db, userId)).map(toPasskeyView);
    },

    async startRegistration(
      ctx: CallContext,
      input: { deviceLabel?: string | undefined },
    ): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
      const user = await managingOperator(ctx.principal);
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
      const stored = challengeRow('registration', options.challenge, { userId: user.id, deviceLabel: input.deviceLabel ?? null });
      await repo.insertChallenge(db, stored);
      return { challengeId: stored.id, options };
    },

    async finishRegistration(
      ctx: CallContext,
      input: { challengeId: string; response: RegistrationResponseJSON; deviceLabel?: string | undefined },
    ): Promise<PasskeyView> {
      // Checked again at finish: the credential that finishes is the one whose scopes are recorded.
      await managingOperator(ctx.principal);
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
        scopes: scopesOfRegistrar(ctx.principal),
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
            // The scopes are audited, not listed: they are the ceiling of the passkey's sessions.
            after: { ...toPasskeyView(row), scopes: row.scopes, registeredVia: ctx.principal.via },
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
      await managingOperator(ctx.principal);
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
     * without one, the list is empty and the browser offers its discoverable credentials. A
     * username that cannot log in gets decoy credentials instead, so the answer never tells
     * whether an operator exists. Unauthenticated, so it is capped per address (`clientIp`).
     */
    async startLogin(input: {
      username?: string | undefined;
      clientIp: string;
    }): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
      let userId: string | null = null;
      let allowCredentials: { id: string; transports: string[] }[] = [];
      if (input.username !== undefined) {
        const user = await identity.findUserByUsername(input.username);
        if (user && user.disabledAt === null) {
          userId = user.id;
          allowCredentials = (await repo.listActivePasskeysOfUser(db, user.id)).map((p) => ({ id: p.credentialId, transports: p.transports }));
        }
        if (allowCredentials.length === 0) allowCredentials = await decoyCredentials(input.username);
      }
      const options = await generateAuthenticationOptions({
        rpID: webauthn.rpId,
        allowCredentials,
        timeout: CHALLENGE_TTL_MS,
        userVerification: 'required',
      });
      // An unknown username still gets a challenge; it binds to a user id no passkey has, so the
      // finish fails the same way a wrong passkey does.
      // Stored as its rate group (the IPv4 address, or the IPv6 /64), the key the cap counts by.
      const clientIp = addressKey(input.clientIp);
      const stored = challengeRow('authentication', options.challenge, {
        userId: userId ?? (input.username !== undefined ? randomUUID() : null),
        clientIp,
      });
      await storeLoginChallenge(stored, clientIp);
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
        // The session can never carry more than the credential that registered the passkey.
        const session = await identity.openSession(tx, user.id, passkey.id, passkey.scopes);
        await audit.record(tx, {
          verb: 'session.login',
          target: `session:${session.id}`,
          surface: 'api',
          actor: { userId: user.id, username: user.username },
          after: {
            sessionId: session.id,
            userId: user.id,
            passkeyId: passkey.id,
            via: 'passkey',
            scopes: session.scopes,
            expiresAt: session.expiresAt.toISOString(),
          },
          requestId,
        });
        return { userId: user.id, username: user.username, sessionId: session.id, secret: session.secret, expiresAt: session.expiresAt };
      });
    },
  };
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;
