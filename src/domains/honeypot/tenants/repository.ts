import { asc, eq } from 'drizzle-orm';
import type { Db } from '../../../platform/db/client.ts';
import { honeypotTenants } from '../schema.ts';

/** The only SQL over honeypot_tenants; the tenant service (service.ts) is its one caller. */

export type TenantRow = typeof honeypotTenants.$inferSelect;
/** A tenant's id and slug: what a read needs to scope its queries and name the tenant. */
export type TenantRef = Pick<TenantRow, 'id' | 'slug'>;

export async function listTenants(db: Db): Promise<TenantRow[]> {
  return db.select().from(honeypotTenants).orderBy(asc(honeypotTenants.slug));
}

/** Every tenant's id and slug, by slug. */
export async function listTenantRefs(db: Db): Promise<TenantRef[]> {
  return db.select({ id: honeypotTenants.id, slug: honeypotTenants.slug }).from(honeypotTenants).orderBy(asc(honeypotTenants.slug));
}

export async function findTenantBySlug(db: Db, slug: string): Promise<TenantRow | null> {
  const [row] = await db.select().from(honeypotTenants).where(eq(honeypotTenants.slug, slug)).limit(1);
  return row ?? null;
}

export async function findTenantSlug(db: Db, id: string): Promise<string | null> {
  const [row] = await db.select({ slug: honeypotTenants.slug }).from(honeypotTenants).where(eq(honeypotTenants.id, id));
  return row?.slug ?? null;
}

/** Inserts unless the slug exists; false on a conflict. */
export async function insertTenant(db: Db, row: TenantRow): Promise<boolean> {
  const inserted = await db.insert(honeypotTenants).values(row).onConflictDoNothing().returning({ id: honeypotTenants.id });
  return inserted.length === 1;
}

export async function updateTenant(db: Db, id: string, change: Partial<TenantRow>): Promise<void> {
  await db.update(honeypotTenants).set(change).where(eq(honeypotTenants.id, id));
}

/** Locks the tenant row for a state change, so concurrent rotations serialise. */
export async function lockTenant(db: Db, slug: string): Promise<TenantRow | null> {
  const [row] = await db.select().from(honeypotTenants).where(eq(honeypotTenants.slug, slug)).for('update');
  return row ?? null;
}
