import { type AuditLog, actorOf, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { badRequest, ServiceError } from '../../../platform/errors.ts';
import { type BridgePeer, FANOUT_REASONS, type FanOutPolicy, peerOriginProblem } from '../../../platform/bridge/fanout.ts';
import * as repo from './repository.ts';

/**
 * The regions registry (spec A "Region", D6; docs/federation/README.md, "Regions"): one row per
 * deployment of the service, keyed by its OBSERVATORY_REGION. An empty registry answers the
 * built-in seed: this deployment alone.
 */

export const REGION_STATUSES = ['active', 'standby', 'retired'] as const;
export type RegionStatus = (typeof REGION_STATUSES)[number];
export const REGION_KEY_PATTERN = '^[a-z0-9][a-z0-9-]{0,63}$';
/** The most regions the registry holds (409 beyond): a fan-out asks each active one. */
export const MAX_REGIONS = 32;
export const DISPLAY_NAME_MAX = 128;
export const SLUG_MAX = 128;
export const HOST_MAX = 253;
export const URL_MAX = 2048;
/** The latency tier of the seed row and of an upsert that names none: five minutes. */
export const DEFAULT_LATENCY_TIER_SEC = 300;
export const LATENCY_TIER_MAX_SEC = 86_400;

export interface RegionView {
  key: string;
  displayName: string;
  baseUrl: string;
  hostProjectSlug: string | null;
  databaseHost: string | null;
  latencyTierSec: number;
  status: RegionStatus;
  isPrimary: boolean;
  /** Whether this row is this deployment (OBSERVATORY_REGION). */
  isCurrent: boolean;
  /** Null for the seed row. */
  updatedAt: string | null;
}

export interface RegionInput {
  key: string;
  displayName?: string | undefined;
  baseUrl: string;
  hostProjectSlug?: string | null | undefined;
  databaseHost?: string | null | undefined;
  latencyTierSec?: number | undefined;
  status?: RegionStatus | undefined;
  isPrimary?: boolean | undefined;
}

export function createRegionService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  /** OBSERVATORY_REGION. */
  currentRegion: string;
  /** OBSERVATORY_PUBLIC_URL: the seed row's baseUrl (its origin). */
  publicUrl: string;
  /** Where the bridge token may go (the upsert refuses a peer origin the fan-out would refuse). */
  policy: Pick<FanOutPolicy, 'peerHosts' | 'allowPrivate' | 'allowedPorts'>;
}) {
  const { db, clock, audit, currentRegion } = deps;

  const viewOf = (row: repo.RegionRow): RegionView => ({
    key: row.key,
    displayName: row.displayName,
    baseUrl: row.baseUrl,
    hostProjectSlug: row.hostProjectSlug,
    databaseHost: row.databaseHost,
    latencyTierSec: row.latencyTierSec,
    status: row.status as RegionStatus,
    isPrimary: row.isPrimary,
    isCurrent: row.key === currentRegion,
    updatedAt: row.updatedAt.toISOString(),
  });

  /** The built-in seed: this deployment alone, active and primary, at OBSERVATORY_PUBLIC_URL's origin. */
  const seedRow = (): RegionView => ({
    key: currentRegion,
    displayName: currentRegion,
    baseUrl: `${new URL(deps.publicUrl).origin}/`,
    hostProjectSlug: null,
    databaseHost: null,
    latencyTierSec: DEFAULT_LATENCY_TIER_SEC,
    status: 'active',
    isPrimary: true,
    isCurrent: true,
    updatedAt: null,
  });

  /** The registry, or the seed when it is empty. */
  async function list(): Promise<{ currentRegion: string; seeded: boolean; rows: RegionView[] }> {
    const rows = await repo.listRegions(db);
    if (rows.length === 0) return { currentRegion, seeded: true, rows: [seedRow()] };
    return { currentRegion, seeded: false, rows: rows.map(viewOf) };
  }

  /** This deployment's row: its registry row, else the seed row (with the registry's other rows unchanged). */
  async function current(): Promise<RegionView> {
    const row = await repo.regionByKey(db, currentRegion);
    return row === null ? seedRow() : viewOf(row);
  }

  /**
   * Whom a fan-out asks: every `active` row other than this deployment (which is answered
   * in-process, whatever its row says), by key; and this deployment's own row.
   */
  async function fanOutTargets(): Promise<{ self: RegionView; peers: (BridgePeer & { view: RegionView })[]; all: RegionView[] }> {
    const { rows } = await list();
    const self = rows.find((r) => r.isCurrent) ?? seedRow();
    const peers = rows.filter((r) => !r.isCurrent && r.status === 'active').map((view) => ({ region: view.key, baseUrl: view.baseUrl, view }));
    return { self, peers, all: rows };
  }

  function normaliseBaseUrl(raw: string, own: boolean): string {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw badRequest('invalid-body', 'baseUrl must be an absolute http or https URL.', { field: 'body.baseUrl' });
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '') {
      throw badRequest('invalid-body', 'baseUrl must be an http or https URL without user name or password.', { field: 'body.baseUrl' });
    }
    if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
      throw badRequest('invalid-body', 'baseUrl must be an origin (scheme, host and port), without path, query or fragment: the bridge routes are fixed.', { field: 'body.baseUrl' });
    }
    const normal = `${url.origin}/`;
    // This deployment's own row is never called over HTTP: its URL is shown, not used.
    if (own) return normal;
    const problem = peerOriginProblem(normal, deps.policy);
    if (problem !== null) {
      throw badRequest('outbound-refused', `body.baseUrl is not an origin the bridge token may be sent to (${problem}): ${FANOUT_REASONS[problem]}`, { field: 'body.baseUrl' });
    }
    return normal;
  }

  /** D6: upsert by key. Audited as `federation.region-upsert`; a moved primary is named in the entry's `after.primaryMovedFrom`. */
  async function upsert(ctx: CallContext, input: RegionInput): Promise<RegionView> {
    const own = input.key === currentRegion;
    const baseUrl = normaliseBaseUrl(input.baseUrl, own);
    const displayName = (input.displayName ?? input.key).trim();
    if (displayName.length === 0) throw badRequest('invalid-body', 'displayName may not be blank.', { field: 'body.displayName' });
    const now = clock.now();
    const by = `operator:${ctx.principal.userId}`;
    return withTransaction(db, async (tx) => {
      await repo.lockRegistry(tx);
      const before = await repo.regionByKey(tx, input.key);
      if (before === null && (await repo.countRegions(tx)) >= MAX_REGIONS) {
        throw new ServiceError(409, 'limit-reached', `The registry holds ${MAX_REGIONS} regions, its maximum: retire and reuse a key, or update an existing one.`);
      }
      const row: repo.RegionRow = {
        key: input.key,
        displayName,
        baseUrl,
        hostProjectSlug: input.hostProjectSlug === undefined ? (before?.hostProjectSlug ?? null) : input.hostProjectSlug,
        databaseHost: input.databaseHost === undefined ? (before?.databaseHost ?? null) : input.databaseHost,
        latencyTierSec: input.latencyTierSec ?? before?.latencyTierSec ?? DEFAULT_LATENCY_TIER_SEC,
        status: input.status ?? (before?.status as RegionStatus | undefined) ?? 'active',
        isPrimary: input.isPrimary ?? before?.isPrimary ?? false,
        createdAt: before?.createdAt ?? now,
        updatedAt: now,
        updatedBy: by,
      };
      await repo.upsertRegion(tx, row);
      // At most one primary: naming a new one moves the flag.
      const demoted = row.isPrimary ? await repo.clearOtherPrimaries(tx, row.key, now, by) : [];
      await audit.record(tx, {
        verb: 'federation.region-upsert',
        target: `region:${row.key}`,
        surface: 'api',
        actor: actorOf(ctx.principal),
        before: before === null ? null : viewOf(before),
        after: { ...viewOf(row), ...(demoted.length > 0 ? { primaryMovedFrom: demoted } : {}) },
        requestId: ctx.requestId,
      });
      return viewOf(row);
    });
  }

  return { currentRegion, list, current, fanOutTargets, upsert };
}

export type RegionService = ReturnType<typeof createRegionService>;
