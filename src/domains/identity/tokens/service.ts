import { createHmac, randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import { randomToken, sha256Hex } from '../../../platform/crypto.ts';
import { dayOf, dayText } from '../../../platform/days.ts';
import type { Db } from '../../../platform/db/client.ts';
import { isReadOnlyRefusal, isUniqueViolation, withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, forbidden, notFound } from '../../../platform/errors.ts';
import type { CredentialResolver } from '../../../platform/http/auth.ts';
import { isScope, type Principal, SCOPES, type Scope } from '../../../platform/http/registry.ts';
import { isToolsetName } from '../../../platform/toolset-name.ts';
import * as repo from './repository.ts';

export const ADMIN_USERNAME = 'admin';
/** `svctok_` + 32 random bytes (256 bits) in base64url. */
const TOKEN_RANDOM_BYTES = 32;
/** `svctok_` and the first six random characters: enough to tell tokens apart, too few to guess. */
const PREFIX_LENGTH = 'svctok_'.length + 6;

export interface TokenView {
  id: string;
  name: string;
  scopes: string[];
  /** The toolsets the token may write events for; null when it is not bound to toolsets. */
  toolsets: string[] | null;
  prefix: string;
  userId: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export function toTokenView(row: repo.TokenRow): TokenView {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    toolsets: row.toolsets ?? null,
    prefix: row.prefix,
    userId: row.userId,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

/** An operator's name: 2 to 64 of a-z, 0-9, ".", "_", "-", starting with a letter. */
export const USERNAME_PATTERN = /^[a-z][a-z0-9._-]{1,63}$/;

export interface OperatorView {
  id: string;
  username: string;
  displayName: string;
  scopes: string[];
  createdAt: string;
  disabledAt: string | null;
}

export function toOperatorView(row: repo.UserRow): OperatorView {
  return {
    id: row.id,
    username: row.username,
    displayName: row.displayName,
    scopes: [...row.scopes].sort(),
    createdAt: row.createdAt.toISOString(),
    disabledAt: row.disabledAt?.toISOString() ?? null,
  };
}

/** The operator console (`npm run cli` on the database itself): bound to no toolset. */
const CONSOLE: Pick<Principal, 'toolsets'> = { toolsets: null };

/** 403 unless the caller holds every one of `scopes`: no credential hands on more than it holds. */
function assertCallerHolds(principal: Principal, scopes: readonly Scope[], what: string): void {
  const missing = scopes.filter((s) => !principal.scopes.has(s));
  if (missing.length > 0) throw forbidden(`${what} scopes their creator does not hold: ${missing.join(', ')}.`);
}

/** 400 for a scope name the registry does not know. */
function assertKnownScopes(scopes: readonly string[]): void {
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw badRequest('invalid-body', `Unknown scopes: ${unknown.join(', ')}.`, { field: 'body.scopes' });
}

export function generateTokenPlaintext(): string {
  return `svctok_${randomToken(TOKEN_RANDOM_BYTES)}`;
}

export const hashToken = (plaintext: string) => sha256Hex(plaintext);

function scopesOf(stored: readonly string[]): Set<Scope> {
  return new Set(stored.filter(isScope));
}

/** The scopes in `ceiling` that the operator still holds: no credential ever outranks its operator. */
function withinOperator(ceiling: readonly string[], user: repo.UserRow): Set<Scope> {
  const userScopes = scopesOf(user.scopes);
  return new Set([...scopesOf(ceiling)].filter((s) => userScopes.has(s)));
}

/** At most this many toolsets on one token (the endpoint schema says the same). */
export const MAX_TOKEN_TOOLSETS = 50;

/**
 * Whether a credential may see and revoke a token of its operator: any, unless it is bound to
 * toolsets; then only the tokens bound within its own toolsets (those it could have created). An
 * unbound token reaches every toolset and one bound elsewhere names the others, so a bound token
 * neither lists nor revokes them (docs/operations.md, "Toolset binding").
 */
function tokenInReach(principal: Pick<Principal, 'toolsets'>, token: { toolsets: string[] | null }): boolean {
  const own = principal.toolsets;
  if (own === null) return true;
  return token.toolsets !== null && token.toolsets.every((t) => own.has(t));
}

/**
 * The toolsets a new token is bound to. A caller bound to toolsets can only hand on a subset of
 * its own, and asking for none hands on all of its own; an unbound caller (a session, an unbound
 * token) may bind a token to any toolsets or leave it unbound.
 */
function toolsetsForNewToken(principal: Pick<Principal, 'toolsets'>, requested: readonly string[] | undefined): string[] | null {
  const own = principal.toolsets;
  if (requested === undefined) return own === null ? null : [...own].sort();
  const wanted = [...new Set(requested)].sort();
  if (wanted.length === 0 || wanted.length > MAX_TOKEN_TOOLSETS || !wanted.every(isToolsetName)) {
    // The endpoint schema refuses these first; this guards callers that are not HTTP.
    throw badRequest('invalid-body', `toolsets is a list of 1 to ${MAX_TOKEN_TOOLSETS} toolset names (a letter, then 2 to 127 letters, digits or "-").`, {
      field: 'body.toolsets',
    });
  }
  if (own !== null) {
    const outside = wanted.filter((t) => !own.has(t));
    if (outside.length > 0) {
      throw forbidden(`A token bound to toolsets can only create tokens bound to some of its own toolsets; it is not bound to: ${outside.join(', ')}.`);
    }
  }
  return wanted;
}

export function createIdentityService(deps: { db: Db; clock: Clock; audit: AuditLog; sessionTtlHours: number }) {
  const { db, clock, audit } = deps;
  /** The base of derivedSecret, read once. */
  let derivedBase: Promise<string> | null = null;


  async function ensureAdminUser(tx: Db): Promise<repo.UserRow> {
    const existing = await repo.findUserByUsername(tx, ADMIN_USERNAME);
    const allScopes = [...SCOPES];
    if (existing) {
      // New releases add scopes; the admin operator always holds every one.
      if (existing.scopes.length !== allScopes.length || !allScopes.every((s) => existing.scopes.includes(s))) {
        await repo.setUserScopes(tx, existing.id, allScopes);
        return { ...existing, scopes: allScopes };
      }
      return existing;
    }
    const user: repo.UserRow = {
      id: randomUUID(),
      username: ADMIN_USERNAME,
      displayName: 'Administrator',
      scopes: allScopes,
      createdAt: clock.now(),
      disabledAt: null,
    };
    await repo.insertUser(tx, user);
    return user;
  }

  /**
   * A credential's use stamps (last used, the day's activity), skipped while the database is in a
   * read-only window (docs/chaos/README.md) so reads keep answering; the first request after the window
   * stamps them, since the last stamp is still old.
   */
  async function unlessReadOnly(stamp: () => Promise<void>): Promise<void> {
    try {
      await stamp();
    } catch (error) {
      if (!isReadOnlyRefusal(error)) throw error;
    }
  }

  const credentials: CredentialResolver = {
    async fromBearer(token) {
      if (!token.startsWith('svctok_')) return null;
      const found = await repo.findTokenWithUser(db, hashToken(token));
      if (!found || found.token.revokedAt !== null || found.user.disabledAt !== null) return null;
      const now = clock.now();
      const lastUsedAt = found.token.lastUsedAt;
      // The first use of a UTC day is noted once (api_token_activity, cohort developer-token-7d),
      // before the stamp that tells later requests of the day it is noted already.
      const newDay = lastUsedAt === null || dayOf(lastUsedAt) !== dayOf(now);
      await unlessReadOnly(async () => {
        if (newDay) await repo.recordTokenActivity(db, found.token.id, dayText(dayOf(now)));
        if (newDay || now.getTime() - lastUsedAt.getTime() > 60_000) {
          await repo.touchToken(db, found.token.id, now);
        }
      });
      // A token never holds more than its operator does now: taking a scope from an operator
      // takes it from their tokens too.
      return {
        userId: found.user.id,
        username: found.user.username,
        scopes: withinOperator(found.token.scopes, found.user),
        toolsets: found.token.toolsets ? new Set(found.token.toolsets) : null,
        via: 'bearer',
        tokenId: found.token.id,
        sessionId: null,
      };
    },
    async fromSession(secret) {
      const found = await repo.findSessionWithUser(db, sha256Hex(secret));
      const now = clock.now();
      if (!found || found.session.revokedAt !== null || found.session.expiresAt <= now || found.user.disabledAt !== null) {
        return null;
      }
      if (now.getTime() - found.session.lastSeenAt.getTime() > 60_000) await unlessReadOnly(() => repo.touchSession(db, found.session.id, now));
      // A session carries what the passkey that opened it carries (the scopes of the credential
      // that registered it), and never more than the operator holds now.
      return {
        userId: found.user.id,
        username: found.user.username,
        scopes: withinOperator(found.session.scopes, found.user),
        toolsets: null,
        via: 'session',
        tokenId: null,
        sessionId: found.session.id,
      };
    },
  };


  /**
   * Stores a new token of `userId` and its `token.create` audit row in one transaction; the
   * plaintext is answered once. `caller` null is the operator console (surface `cli`).
   */
  async function issueToken(
    caller: CallContext | null,
    userId: string,
    name: string,
    scopes: string[],
    toolsets: string[] | null,
    auditExtra: Record<string, unknown>,
  ) {
    const plaintext = generateTokenPlaintext();
    const row = newTokenRow(userId, name, scopes, toolsets, plaintext);
    await withTransaction(db, async (tx) => {
      await repo.insertToken(tx, row);
      await audit.record(tx, {
        verb: 'token.create',
        target: `token:${row.id}`,
        surface: caller === null ? 'cli' : 'api',
        actor: caller === null ? null : actorOf(caller.principal),
        after: { ...toTokenView(row), ...auditExtra },
        ...(caller === null ? {} : { requestId: caller.requestId }),
      });
    });
    return { ...toTokenView(row), token: plaintext };
  }
  return {
    credentials,

    /** Live tokens idle since `idleBefore`, and live first-start tokens (the compliance predicates read these). */
    async tokenHygiene(idleBefore: Date, listedMax: number) {
      const found = await repo.tokenHygiene(db, idleBefore, listedMax);
      const view = (t: { prefix: string; name: string; createdAt: Date; lastUsedAt: Date | null }) => ({
        prefix: t.prefix,
        name: t.name,
        createdAt: t.createdAt.toISOString(),
        lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
      });
      return { liveTokens: found.liveTokens, idleCount: found.idleCount, idle: found.idle.map(view), firstStart: found.firstStart.map(view) };
    },

    /**
     * Start-up (spec D1): with `adminToken`, make sure a token with that plaintext and every scope
     * exists for `admin`; without it, create one when the database holds no token and return its
     * plaintext so the caller prints it once. Runs under the start-up lock.
     */
    async bootstrap(adminToken: string | null): Promise<{ firstToken: string | null }> {
      return withTransaction(db, async (tx) => {
        const admin = await ensureAdminUser(tx);
        const actor = { userId: admin.id, username: 'startup' };
        const allScopes = [...SCOPES];
        if (adminToken !== null) {
          const found = await repo.findTokenWithUser(tx, hashToken(adminToken));
          if (!found) {
            const row = newTokenRow(admin.id, 'OBSERVATORY_ADMIN_TOKEN', allScopes, null, adminToken);
            await repo.insertToken(tx, row);
            await audit.record(tx, { verb: 'token.ensure-admin', target: `token:${row.id}`, surface: 'startup', actor, after: toTokenView(row) });
          } else {
            const token = found.token;
            const healthy =
              token.userId === admin.id && token.revokedAt === null && token.toolsets === null && allScopes.every((s) => token.scopes.includes(s));
            if (!healthy) {
              const change = { userId: admin.id, scopes: allScopes, toolsets: null, revokedAt: null };
              await repo.updateToken(tx, token.id, change);
              await audit.record(tx, {
                verb: 'token.ensure-admin',
                target: `token:${token.id}`,
                surface: 'startup',
                actor,
                before: toTokenView(token),
                after: toTokenView({ ...token, ...change }),
              });
            }
          }
          return { firstToken: null };
        }
        if ((await repo.countTokens(tx)) > 0) return { firstToken: null };
        const plaintext = generateTokenPlaintext();
        const row = newTokenRow(admin.id, repo.FIRST_START_TOKEN_NAME, allScopes, null, plaintext);
        await repo.insertToken(tx, row);
        await audit.record(tx, { verb: 'token.create', target: `token:${row.id}`, surface: 'startup', actor, after: toTokenView(row) });
        return { firstToken: plaintext };
      });
    },

    async createToken(ctx: CallContext, input: { name: string; scopes: Scope[]; toolsets?: string[] | undefined }) {
      assertCallerHolds(ctx.principal, input.scopes, 'A token cannot carry');
      const toolsets = toolsetsForNewToken(ctx.principal, input.toolsets);
      return issueToken(ctx, ctx.principal.userId, input.name, [...new Set(input.scopes)], toolsets, {});
    },

    /** The caller's operator's tokens; for a token bound to toolsets only those within its binding (tokenInReach). */
    async listTokens(principal: Principal): Promise<TokenView[]> {
      return (await repo.listTokensOfUser(db, principal.userId)).filter((row) => tokenInReach(principal, row)).map(toTokenView);
    },

    /** Idempotent: revoking a revoked token returns it unchanged and writes nothing. */
    async revokeToken(ctx: CallContext, id: string): Promise<TokenView> {
      return withTransaction(db, async (tx) => {
        const token = await repo.findToken(tx, id);
        const owned = token !== null && token.userId === ctx.principal.userId && tokenInReach(ctx.principal, token) ? token : null;
        assertThat(owned, notFound(`No token ${id} belongs to you.`));
        if (owned.revokedAt !== null) return toTokenView(owned);
        const revoked = { ...owned, revokedAt: clock.now() };
        await repo.updateToken(tx, id, { revokedAt: revoked.revokedAt });
        await audit.record(tx, {
          verb: 'token.revoke',
          target: `token:${id}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toTokenView(owned),
          after: toTokenView(revoked),
          requestId: ctx.requestId,
        });
        return toTokenView(revoked);
      });
    },

    /**
     * Opens a browser session for a user who just proved a passkey; returns the cookie secret.
     * `scopes` is the most the session may ever carry (the passkey's scopes); none when not given,
     * so a session opened by mistake without them can do nothing that needs a scope.
     */
    async openSession(
      tx: Db,
      userId: string,
      passkeyId: string | null,
      scopes: readonly string[] = [],
    ): Promise<{ id: string; secret: string; expiresAt: Date; scopes: string[] }> {
      const now = clock.now();
      const secret = randomToken(32);
      const row: repo.SessionRow = {
        id: randomUUID(),
        secretHash: sha256Hex(secret),
        userId,
        passkeyId,
        scopes: [...new Set(scopes)].sort(),
        createdAt: now,
        expiresAt: new Date(now.getTime() + deps.sessionTtlHours * 3_600_000),
        lastSeenAt: now,
        revokedAt: null,
      };
      await repo.insertSession(tx, row);
      return { id: row.id, secret, expiresAt: row.expiresAt, scopes: row.scopes };
    },

    /** A revoked passkey takes the sessions it opened with it. */
    closeSessionsOfPasskey: (tx: Db, passkeyId: string) => repo.revokeSessionsOfPasskey(tx, passkeyId, clock.now()),

    async closeSession(sessionId: string): Promise<void> {
      await repo.revokeSession(db, sessionId, clock.now());
    },

    /**
     * Adds an operator holding `scopes` and issues their first token (plaintext returned once, in
     * `firstToken.token`). `caller` is the API caller (`POST {v1}/operators`): it may hand on only
     * scopes it holds, and a token bound to toolsets is refused before this runs (an operator
     * reaches every toolset). Without a caller it is the operator console (`npm run cli` on the
     * database itself), audited with surface `cli`.
     */
    async createOperator(input: { username: string; displayName?: string | undefined; scopes: Scope[] }, caller: CallContext | null = null) {
      if (!USERNAME_PATTERN.test(input.username)) {
        throw badRequest('invalid-username', 'A username is 2 to 64 characters of a-z, 0-9, ".", "_" or "-", starting with a letter.');
      }
      const scopes = [...new Set(input.scopes)];
      assertKnownScopes(scopes);
      if (caller !== null) {
        assertCallerHolds(caller.principal, scopes, 'An operator cannot be given');
        if (caller.principal.toolsets !== null) throw forbidden('A token bound to toolsets cannot create operators: an operator reaches every toolset.');
      }
      const plaintext = generateTokenPlaintext();
      try {
        return await withTransaction(db, async (tx) => {
          if (await repo.findUserByUsername(tx, input.username)) throw conflict(`An operator named ${input.username} already exists.`);
          const user: repo.UserRow = {
            id: randomUUID(),
            username: input.username,
            displayName: input.displayName ?? input.username,
            scopes,
            createdAt: clock.now(),
            disabledAt: null,
          };
          await repo.insertUser(tx, user);
          const token = newTokenRow(user.id, `${input.username}-initial`, scopes, null, plaintext);
          await repo.insertToken(tx, token);
          await audit.record(tx, {
            verb: 'operator.create',
            target: `user:${user.id}`,
            surface: caller === null ? 'cli' : 'api',
            actor: caller === null ? null : actorOf(caller.principal),
            after: { username: user.username, scopes, tokenId: token.id },
            ...(caller === null ? {} : { requestId: caller.requestId }),
          });
          const operator = toOperatorView(user);
          // `userId`, `username`, `scopes` and `token` at the top as before this answer had an API.
          return { userId: user.id, username: user.username, scopes, token: plaintext, operator, firstToken: { ...toTokenView(token), token: plaintext } };
        });
      } catch (error) {
        // Two creations of one name at once: the loser meets the unique index.
        if (isUniqueViolation(error)) throw conflict(`An operator named ${input.username} already exists.`);
        throw error;
      }
    },

    async listOperators(): Promise<OperatorView[]> {
      return (await repo.listUsers(db)).map(toOperatorView);
    },

    /**
     * Issues a token for the operator `username` (`POST {v1}/operators/{username}/tokens`), audited
     * as `token.create` by the issuer. Such a token acts as that operator: its writes are audited
     * under their name, and it lists and revokes their tokens. So the issuer must hold every scope
     * the operator holds (no one mints a credential of someone who outranks them), the token
     * carries only scopes both hold, and a token bound to toolsets issues tokens bound within its
     * own toolsets only. Without a caller it is the operator console (surface `cli`).
     */
    async createTokenFor(
      caller: CallContext | null,
      username: string,
      input: { name: string; scopes: Scope[]; toolsets?: string[] | undefined },
    ) {
      const scopes = [...new Set(input.scopes)];
      assertKnownScopes(scopes);
      if (caller !== null) assertCallerHolds(caller.principal, scopes, 'A token cannot carry');
      const toolsets =
        caller === null ? (input.toolsets === undefined ? null : toolsetsForNewToken(CONSOLE, input.toolsets)) : toolsetsForNewToken(caller.principal, input.toolsets);
      const user = await repo.findUserByUsername(db, username);
      assertThat(user, notFound(`No operator is named ${username}.`));
      if (user.disabledAt !== null) throw conflict(`The operator ${username} is disabled; no token is issued for them.`);
      if (caller !== null && user.id !== caller.principal.userId) {
        const outranks = scopesOf(user.scopes);
        const lacking = [...outranks].filter((s) => !caller.principal.scopes.has(s));
        if (lacking.length > 0) {
          throw forbidden(`A token for ${username} acts as ${username}; issuing one needs every scope they hold, and this credential lacks: ${lacking.sort().join(', ')}.`);
        }
      }
      const beyond = scopes.filter((s) => !user.scopes.includes(s));
      if (beyond.length > 0) {
        throw badRequest('invalid-body', `${username} does not hold ${beyond.join(', ')}; a token never carries more than its operator.`, { field: 'body.scopes' });
      }
      return issueToken(caller, user.id, input.name, scopes, toolsets, { operator: user.username });
    },

    /**
     * A 32-byte key for `purpose` that every instance on this database derives alike and no caller
     * can learn: HMAC-SHA256 under the stored hash of the oldest token (a secret that never
     * leaves the database and never changes). Computed once per process. On a database without
     * tokens (never after start-up) it falls back to a random key of this process.
     */
    async derivedSecret(purpose: string): Promise<Buffer> {
      derivedBase ??= repo.oldestTokenHash(db).then((hash) => hash ?? randomToken(32)).catch((error: unknown) => {
        derivedBase = null;
        throw error;
      });
      return createHmac('sha256', await derivedBase).update(`observatory:${purpose}`).digest();
    },

    /**
     * The API tokens created in [from, to), oldest first (revoked ones too), each with the UTC days
     * (`YYYY-MM-DD`, ascending) it authenticated at least one request on, among its creation day
     * and the `followDays` days after it. For the analytics cohorts.
     */
    async tokensCreatedWithActivity(range: { from: Date; to: Date; followDays: number }): Promise<{ id: string; createdAt: Date; activeDays: string[] }[]> {
      if (range.from.getTime() >= range.to.getTime()) return [];
      return repo.tokensCreatedWithActivity(db, range.from, range.to, range.followDays);
    },

    findUser: (id: string) => repo.findUserById(db, id),
    findUserByUsername: (username: string) => repo.findUserByUsername(db, username),
    /** Deletes the sessions that can no longer be used; returns how many. */
    sweepExpiredSessions: (now: Date) => repo.deleteExpiredSessions(db, now),
  };

  function newTokenRow(userId: string, name: string, scopes: string[], toolsets: string[] | null, plaintext: string): repo.TokenRow {
    return {
      id: randomUUID(),
      userId,
      name,
      scopes,
      toolsets,
      tokenHash: hashToken(plaintext),
      prefix: plaintext.slice(0, PREFIX_LENGTH),
      createdAt: clock.now(),
      lastUsedAt: null,
      revokedAt: null,
    };
  }
}

export type IdentityService = ReturnType<typeof createIdentityService>;
