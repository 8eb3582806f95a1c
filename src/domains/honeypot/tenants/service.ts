import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import { randomToken } from '../../../platform/crypto.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, conflict, notFound } from '../../../platform/errors.ts';
import { createClockCache } from '../../../platform/memo.ts';
import * as repo from './repository.ts';

export type { TenantRef, TenantRow } from './repository.ts';

/** After a rotation the previous secret keeps verifying this long (spec D2). */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

export interface TenantView {
  id: string;
  slug: string;
  name: string;
  createdAt: string;
  disabledAt: string | null;
  notes: string | null;
}

/** The public form of a tenant: never a secret. */
export function toTenantView(row: repo.TenantRow): TenantView {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    createdAt: row.createdAt.toISOString(),
    disabledAt: row.disabledAt?.toISOString() ?? null,
    notes: row.notes,
  };
}

/** `whsec_` + 32 random bytes: the tenant's HMAC signing secret. */
export const newSigningSecret = () => `whsec_${randomToken(32)}`;

/** The secrets that verify a signature at `now`: the current one, and the previous within its overlap. */
export function verifyingSecrets(tenant: repo.TenantRow, now: Date): string[] {
  const secrets = [tenant.signingSecret];
  if (tenant.previousSecret && tenant.previousValidUntil && tenant.previousValidUntil > now) secrets.push(tenant.previousSecret);
  return secrets;
}

/**
 * How long ingest may verify against a tenant row it read before (docs/honeypot/README.md, "Tenant
 * lookups"). Every change made on this instance takes effect at once; one made on another
 * instance within this long. A signature that fails against a cached row is checked again against
 * a fresh read, so a rotated secret is never refused.
 */
export const TENANT_CACHE_MS = 1000;

/**
 * Tenants and every lookup of one (slug → row, id → slug): ingest, the reads, the dashboard and the
 * alert rules ask this service, not the table.
 */
export function createTenantService(deps: { db: Db; clock: Clock; audit: AuditLog }) {
  const { db, clock, audit } = deps;
  /** Tenant rows (or their absence) by slug, aged by the service clock. */
  const cache = createClockCache<string, { row: repo.TenantRow | null }>({ max: 10_000, ttlMs: TENANT_CACHE_MS, clock });

  /** A new enabled tenant with a fresh signing secret. */
  function newTenantRow(input: { slug: string; name: string; notes?: string | null | undefined }): repo.TenantRow {
    return {
      id: randomUUID(),
      slug: input.slug,
      name: input.name,
      notes: input.notes ?? null,
      signingSecret: newSigningSecret(),
      previousSecret: null,
      previousValidUntil: null,
      createdAt: clock.now(),
      disabledAt: null,
    };
  }

  async function change(ctx: CallContext, slug: string, verb: string, apply: (row: repo.TenantRow, now: Date) => Partial<repo.TenantRow> | null) {
    const result = await withTransaction(db, async (tx) => {
      const row = await repo.lockTenant(tx, slug);
      assertThat(row, notFound(`There is no tenant ${slug}.`));
      const now = clock.now();
      const patch = apply(row, now);
      if (patch === null) return { row, changed: false };
      const next = { ...row, ...patch };
      await repo.updateTenant(tx, row.id, patch);
      await audit.record(tx, {
        verb,
        target: `tenant:${slug}`,
        surface: 'api',
        actor: actorOf(ctx.principal),
        before: toTenantView(row),
        after: toTenantView(next),
        requestId: ctx.requestId,
      });
      return { row: next, changed: true };
    });
    // After the commit, so that no lookup in between can cache the row as it was.
    cache.delete(slug);
    return result;
  }

  /** The tenant with this slug, read now (not from the ingest cache); 404 when there is none. */
  async function requireBySlug(slug: string): Promise<repo.TenantRow> {
    const tenant = await repo.findTenantBySlug(db, slug);
    assertThat(tenant, notFound(`There is no tenant ${slug}.`));
    return tenant;
  }

  return {
    async list(): Promise<TenantView[]> {
      return (await repo.listTenants(db)).map(toTenantView);
    },

    requireBySlug,

    /** The id of the tenant a read names (404 for an unknown one); null when it names none (every tenant). */
    async idOf(slug: string | undefined): Promise<string | null> {
      return slug === undefined ? null : (await requireBySlug(slug)).id;
    },

    /** Every tenant's id and slug, by slug. */
    refs: (): Promise<repo.TenantRef[]> => repo.listTenantRefs(db),

    /** The slug of the tenant with this id, null when there is none; `on` is the caller's transaction when it holds one. */
    slugOf: (id: string, on: Db = db): Promise<string | null> => repo.findTenantSlug(on, id),

    /**
     * The tenant for ingest verification: read at most once per TENANT_CACHE_MS per slug (unknown
     * slugs included), or fresh when `fresh` is set.
     */
    async forIngest(slug: string, fresh = false): Promise<repo.TenantRow | null> {
      const cached = fresh ? undefined : cache.get(slug);
      if (cached) return cached.row;
      const row = await repo.findTenantBySlug(db, slug);
      cache.set(slug, { row });
      return row;
    },

    async create(ctx: CallContext, input: { slug: string; name: string; notes?: string | null | undefined }) {
      const row = newTenantRow(input);
      await withTransaction(db, async (tx) => {
        if (!(await repo.insertTenant(tx, row))) throw conflict(`A tenant with slug ${input.slug} already exists.`);
        await audit.record(tx, {
          verb: 'tenant.create',
          target: `tenant:${row.slug}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          after: toTenantView(row),
          requestId: ctx.requestId,
        });
      });
      cache.delete(row.slug);
      return { tenant: toTenantView(row), signingSecret: row.signingSecret };
    },

    /**
     * Makes sure a tenant exists for the service's own recordings (the public agent API's tenant),
     * creating it at start-up when missing; audited as a start-up change. Its signing secret is
     * never shown: an operator who wants to send to it rotates the secret.
     */
    async ensureTenant(input: { slug: string; name: string; notes: string }): Promise<void> {
      const row = newTenantRow(input);
      await withTransaction(db, async (tx) => {
        if (!(await repo.insertTenant(tx, row))) return;
        await audit.record(tx, { verb: 'tenant.create', target: `tenant:${row.slug}`, surface: 'startup', actor: null, after: toTenantView(row) });
      });
      cache.delete(row.slug);
    },

    /** A new secret; the old one keeps verifying for 24 hours so senders can switch without loss. */
    async rotateSecret(ctx: CallContext, slug: string) {
      const secret = newSigningSecret();
      let previousValidUntil = new Date(0);
      const { row } = await change(ctx, slug, 'tenant.rotate-secret', (current, now) => {
        previousValidUntil = new Date(now.getTime() + SECRET_OVERLAP_MS);
        return { signingSecret: secret, previousSecret: current.signingSecret, previousValidUntil };
      });
      return { tenant: toTenantView(row), signingSecret: secret, previousValidUntil: previousValidUntil.toISOString() };
    },

    /** Idempotent: disabling a disabled tenant changes and audits nothing. */
    async setDisabled(ctx: CallContext, slug: string, disabled: boolean) {
      const { row } = await change(ctx, slug, disabled ? 'tenant.disable' : 'tenant.enable', (current, now) => {
        if (disabled === (current.disabledAt !== null)) return null;
        return { disabledAt: disabled ? now : null };
      });
      return { tenant: toTenantView(row) };
    },
  };
}

export type TenantService = ReturnType<typeof createTenantService>;
