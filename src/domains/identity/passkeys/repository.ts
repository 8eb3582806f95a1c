import { and, count, desc, eq, gt, isNull, lte, min, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { passkeys, users, webauthnChallenges } from '../schema.ts';

/** The SQL of passkeys and their WebAuthn challenges. */

export type UserRow = typeof users.$inferSelect;
export type PasskeyRow = typeof passkeys.$inferSelect;
export type ChallengeRow = typeof webauthnChallenges.$inferSelect;
export type ChallengePurpose = 'registration' | 'authentication';

/** Deletes the challenges that can no longer be used; returns how many. */
export async function deleteExpiredChallenges(db: Db, now: Date): Promise<number> {
  // A challenge is dead from its own expiry on (consume takes only expires_at > now), used or not.
  const gone = await db.delete(webauthnChallenges).where(lte(webauthnChallenges.expiresAt, now)).returning({ id: webauthnChallenges.id });
  return gone.length;
}

export async function insertChallenge(db: Db, row: ChallengeRow): Promise<void> {
  await db.insert(webauthnChallenges).values(row);
}

/**
 * Serialises login starts from one address group until the transaction ends, so its count of
 * outstanding challenges and the insert that follows cannot interleave with another start's.
 */
export async function lockLoginAddress(tx: Db, clientIp: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`webauthn-login:${clientIp}`}))`);
}

/** Deletes the expired challenges of one address group (an index range on (client_ip, expires_at)). */
export async function deleteExpiredChallengesOf(db: Db, clientIp: string, now: Date): Promise<number> {
  const rows = await db
    .delete(webauthnChallenges)
    .where(and(eq(webauthnChallenges.clientIp, clientIp), lte(webauthnChallenges.expiresAt, now)))
    .returning({ id: webauthnChallenges.id });
  return rows.length;
}

/**
 * Login challenges that can still be used (not consumed, not expired): how many, and when the
 * first of them expires. With `clientIp`, only that address group's; without, everyone's.
 */
export async function outstandingLoginChallenges(
  db: Db,
  now: Date,
  clientIp?: string,
): Promise<{ count: number; firstExpiresAt: Date | null }> {
  const [row] = await db
    .select({ n: count(), first: min(webauthnChallenges.expiresAt) })
    .from(webauthnChallenges)
    .where(
      and(
        eq(webauthnChallenges.purpose, 'authentication'),
        clientIp === undefined ? undefined : eq(webauthnChallenges.clientIp, clientIp),
        isNull(webauthnChallenges.consumedAt),
        gt(webauthnChallenges.expiresAt, now),
      ),
    );
  const first = row?.first ?? null;
  return { count: Number(row?.n ?? 0), firstExpiresAt: first === null ? null : new Date(first) };
}

/**
 * Marks a challenge used and returns it, in one statement: only a challenge that has this
 * purpose, is unexpired, unused and (when `userId` is given) belongs to that user is taken, so two
 * concurrent finishes on different instances can never both get it.
 */
export async function consumeChallenge(
  db: Db,
  where: { id: string; purpose: ChallengePurpose; userId?: string },
  now: Date,
): Promise<ChallengeRow | null> {
  const [row] = await db
    .update(webauthnChallenges)
    .set({ consumedAt: now })
    .where(
      and(
        eq(webauthnChallenges.id, where.id),
        eq(webauthnChallenges.purpose, where.purpose),
        isNull(webauthnChallenges.consumedAt),
        gt(webauthnChallenges.expiresAt, now),
        where.userId === undefined ? undefined : eq(webauthnChallenges.userId, where.userId),
      ),
    )
    .returning();
  return row ?? null;
}

export async function listPasskeysOfUser(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db
    .select()
    .from(passkeys)
    .where(eq(passkeys.userId, userId))
    .orderBy(desc(passkeys.createdAt), desc(passkeys.id));
}

export async function listActivePasskeysOfUser(db: Db, userId: string): Promise<PasskeyRow[]> {
  return db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.userId, userId), isNull(passkeys.revokedAt)))
    .orderBy(desc(passkeys.createdAt), desc(passkeys.id));
}

export async function findPasskey(db: Db, id: string): Promise<PasskeyRow | null> {
  const [row] = await db.select().from(passkeys).where(eq(passkeys.id, id)).limit(1);
  return row ?? null;
}

export async function findPasskeyByCredentialId(db: Db, credentialId: string): Promise<PasskeyRow | null> {
  const [row] = await db.select().from(passkeys).where(eq(passkeys.credentialId, credentialId)).limit(1);
  return row ?? null;
}

/** The passkey with this credential id and the operator it belongs to, in one query (login). */
export async function findPasskeyWithUser(
  db: Db,
  credentialId: string,
): Promise<{ passkey: PasskeyRow; user: UserRow } | null> {
  const [row] = await db
    .select({ passkey: passkeys, user: users })
    .from(passkeys)
    .innerJoin(users, eq(users.id, passkeys.userId))
    .where(eq(passkeys.credentialId, credentialId))
    .limit(1);
  return row ?? null;
}

export async function insertPasskey(db: Db, row: PasskeyRow): Promise<void> {
  await db.insert(passkeys).values(row);
}

/** Revokes a passkey that is still active; false when it was revoked meanwhile. */
export async function revokePasskey(db: Db, id: string, at: Date): Promise<boolean> {
  const rows = await db
    .update(passkeys)
    .set({ revokedAt: at })
    .where(and(eq(passkeys.id, id), isNull(passkeys.revokedAt)))
    .returning({ id: passkeys.id });
  return rows.length > 0;
}

/**
 * Records a successful assertion on a passkey that is still active; false when it was revoked
 * between verification and this write, so the login must fail.
 */
export async function recordPasskeyUse(
  db: Db,
  id: string,
  use: { counter: number; backedUp: boolean; at: Date },
): Promise<boolean> {
  const rows = await db
    .update(passkeys)
    .set({ counter: use.counter, backedUp: use.backedUp, lastUsedAt: use.at })
    .where(and(eq(passkeys.id, id), isNull(passkeys.revokedAt)))
    .returning({ id: passkeys.id });
  return rows.length > 0;
}
