import { and, asc, count, desc, eq, gte, isNull, lt, or, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { apiTokenActivity, apiTokens, sessions, users } from '../schema.ts';

export type UserRow = typeof users.$inferSelect;
export type TokenRow = typeof apiTokens.$inferSelect;
export type SessionRow = typeof sessions.$inferSelect;

export async function findUserByUsername(db: Db, username: string): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.username, username)).limit(1);
  return row ?? null;
}

export async function findUserById(db: Db, id: string): Promise<UserRow | null> {
  const [row] = await db.select().from(users).where(eq(users.id, id)).limit(1);
  return row ?? null;
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  return db.select().from(users).orderBy(asc(users.username));
}

export async function insertUser(db: Db, row: UserRow): Promise<void> {
  await db.insert(users).values(row);
}

export async function setUserScopes(db: Db, id: string, scopes: string[]): Promise<void> {
  await db.update(users).set({ scopes }).where(eq(users.id, id));
}

/** The token with this hash and the user it belongs to, in one query (the hot path of every call). */
export async function findTokenWithUser(db: Db, tokenHash: string): Promise<{ token: TokenRow; user: UserRow } | null> {
  const [row] = await db
    .select({ token: apiTokens, user: users })
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(eq(apiTokens.tokenHash, tokenHash))
    .limit(1);
  return row ?? null;
}

/**
 * The stored hash of the oldest token: a secret only the database knows, the same on every
 * instance, and fixed (tokens are revoked, never deleted or re-hashed). Null on a database with no
 * token (start-up always makes one).
 */
export async function oldestTokenHash(db: Db): Promise<string | null> {
  const [row] = await db
    .select({ tokenHash: apiTokens.tokenHash })
    .from(apiTokens)
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id))
    .limit(1);
  return row?.tokenHash ?? null;
}

export async function countTokens(db: Db): Promise<number> {
  const [row] = await db.select({ n: count() }).from(apiTokens);
  return Number(row?.n ?? 0);
}

export async function insertToken(db: Db, row: TokenRow): Promise<void> {
  await db.insert(apiTokens).values(row);
}

export async function updateToken(db: Db, id: string, change: Partial<TokenRow>): Promise<void> {
  await db.update(apiTokens).set(change).where(eq(apiTokens.id, id));
}

export async function findToken(db: Db, id: string): Promise<TokenRow | null> {
  const [row] = await db.select().from(apiTokens).where(eq(apiTokens.id, id)).limit(1);
  return row ?? null;
}

export async function listTokensOfUser(db: Db, userId: string): Promise<TokenRow[]> {
  return db
    .select()
    .from(apiTokens)
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id));
}

/**
 * Stamps last use at most once a minute per token, so reads stay reads, and always on the first
 * use of a UTC day (a stamp before the day of `at` began is replaced at once).
 */
export async function touchToken(db: Db, id: string, at: Date): Promise<void> {
  const dayStart = Math.floor(at.getTime() / 86_400_000) * 86_400_000;
  const before = new Date(Math.max(at.getTime() - 60_000, dayStart));
  await db
    .update(apiTokens)
    .set({ lastUsedAt: at })
    .where(and(eq(apiTokens.id, id), or(isNull(apiTokens.lastUsedAt), lt(apiTokens.lastUsedAt, before))));
}

/** Notes that the token authenticated a request on UTC day `day` (`YYYY-MM-DD`); a day already noted is left alone. */
export async function recordTokenActivity(db: Db, tokenId: string, day: string): Promise<void> {
  await db.insert(apiTokenActivity).values({ tokenId, day }).onConflictDoNothing();
}

/**
 * The tokens created in [from, to), oldest first, each with the UTC days (`YYYY-MM-DD`, ascending)
 * on which it authenticated a request among the `followDays` + 1 days from its creation day on
 * (its creation day is day 0). One grouped statement; the activity is read by its primary key.
 */
export async function tokensCreatedWithActivity(db: Db, from: Date, to: Date, followDays: number): Promise<{ id: string; createdAt: Date; activeDays: string[] }[]> {
  const createdDay = sql`(${apiTokens.createdAt} AT TIME ZONE 'UTC')::date`;
  const rows = await db
    .select({
      id: apiTokens.id,
      createdAt: apiTokens.createdAt,
      days: sql<string | null>`string_agg(to_char(${apiTokenActivity.day}, 'YYYY-MM-DD'), ',' ORDER BY ${apiTokenActivity.day})`,
    })
    .from(apiTokens)
    .leftJoin(
      apiTokenActivity,
      and(eq(apiTokenActivity.tokenId, apiTokens.id), sql`${apiTokenActivity.day} >= ${createdDay}`, sql`${apiTokenActivity.day} <= ${createdDay} + ${followDays}::int`),
    )
    .where(and(gte(apiTokens.createdAt, from), lt(apiTokens.createdAt, to)))
    .groupBy(apiTokens.id)
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id));
  return rows.map((r) => ({ id: r.id, createdAt: r.createdAt, activeDays: r.days === null ? [] : r.days.split(',') }));
}

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insert(sessions).values(row);
}

export async function findSessionWithUser(db: Db, secretHash: string): Promise<{ session: SessionRow; user: UserRow } | null> {
  const [row] = await db
    .select({ session: sessions, user: users })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(eq(sessions.secretHash, secretHash))
    .limit(1);
  return row ?? null;
}

export async function revokeSession(db: Db, id: string, at: Date): Promise<void> {
  await db.update(sessions).set({ revokedAt: at }).where(and(eq(sessions.id, id), isNull(sessions.revokedAt)));
}

/** Ends every live session opened with this passkey; returns how many. */
export async function revokeSessionsOfPasskey(db: Db, passkeyId: string, at: Date): Promise<number> {
  const rows = await db
    .update(sessions)
    .set({ revokedAt: at })
    .where(and(eq(sessions.passkeyId, passkeyId), isNull(sessions.revokedAt)))
    .returning({ id: sessions.id });
  return rows.length;
}

export async function touchSession(db: Db, id: string, at: Date): Promise<void> {
  await db
    .update(sessions)
    .set({ lastSeenAt: at })
    .where(and(eq(sessions.id, id), lt(sessions.lastSeenAt, new Date(at.getTime() - 60_000))));
}

/** Deletes the sessions that can no longer be used (expired, or revoked over a day ago); returns how many. */
export async function deleteExpiredSessions(db: Db, now: Date): Promise<number> {
  const gone = await db
    .delete(sessions)
    .where(or(lt(sessions.expiresAt, now), lt(sessions.revokedAt, new Date(now.getTime() - 86_400_000))))
    .returning({ id: sessions.id });
  return gone.length;
}

/**
 * Token hygiene for the compliance predicates (docs/compliance/README.md): live tokens, those neither used
 * nor created since `idleBefore` (tokens here never expire), and live first-start tokens. The
 * tokens table is small (operators' tokens), so one pass over it is the index.
 */
export async function tokenHygiene(db: Db, idleBefore: Date, listedMax: number) {
  const live = isNull(apiTokens.revokedAt);
  const idle = and(live, lt(sql`coalesce(${apiTokens.lastUsedAt}, ${apiTokens.createdAt})`, idleBefore));
  const [counts] = await db
    .select({ live: sql<number>`count(*) filter (where ${live})`, idle: sql<number>`count(*) filter (where ${idle})` })
    .from(apiTokens);
  const columns = { prefix: apiTokens.prefix, name: apiTokens.name, createdAt: apiTokens.createdAt, lastUsedAt: apiTokens.lastUsedAt };
  const idleRows = await db
    .select(columns)
    .from(apiTokens)
    .where(idle)
    .orderBy(sql`coalesce(${apiTokens.lastUsedAt}, ${apiTokens.createdAt})`, asc(apiTokens.id))
    .limit(listedMax);
  const firstStart = await db
    .select(columns)
    .from(apiTokens)
    .innerJoin(users, eq(users.id, apiTokens.userId))
    .where(and(live, eq(apiTokens.name, FIRST_START_TOKEN_NAME), eq(users.username, 'admin')))
    .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id))
    .limit(listedMax);
  return { liveTokens: Number(counts?.live ?? 0), idleCount: Number(counts?.idle ?? 0), idle: idleRows, firstStart };
}

/** The name of the token the first start creates and prints on stdout (spec D1). */
export const FIRST_START_TOKEN_NAME = 'first-start';
