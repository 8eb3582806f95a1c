import type { FastifyBaseLogger } from 'fastify';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, notFound, ServiceError } from '../../../platform/errors.ts';
import { assertSpansNoToolset, assertToolsetInReach, toolsetReach } from '../../../platform/http/auth.ts';
import { type Principal, V1 } from '../../../platform/http/registry.ts';
import { checkOutboundUrl, type OutboundPolicy, type Resolver } from '../../../platform/outbound/safe-fetch.ts';
import type { RestoreRehearsal } from '../drills/service.ts';
import { type BridgeAnswer, bridgePost } from '../../../platform/bridge/client.ts';
import { type PeerReason, PEER_REASONS, reasonText, type RowOutcome } from './reasons.ts';
import * as repo from './repository.ts';
import type { StoredCheck } from './schema.ts';

export type { RowOutcome } from './reasons.ts';

/**
 * Cross-toolset restore (spec B `backups/cross-toolset`, D7; docs/backups/README.md, "Cross-toolset
 * restore"). Operators register toolsets with a bridge-gated verify endpoint. Checking them is a
 * write (`verify`: POST {v1}/backups/cross-toolset/verify, or the daily job): each toolset is asked
 * at most once per OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC, at once and with a timeout, and what it
 * answered is stored as a row from a fixed vocabulary (reasons.ts). The view (`view`, the GET) shows
 * the stored rows and does nothing else. This service is such a toolset too: `verifyOwn` answers
 * its bridge endpoint, at most once per the same interval.
 */

export const DATABASE_PATTERN = '^[A-Za-z0-9_.-]{1,128}$';
/** At most this many registered toolsets: each one is an outbound call (and a restore on its side) per check. */
export const MAX_TOOLSETS = 100;
/** The path a verify URL must end with: the bridge verify endpoint of a deployment of this service. */
export const BRIDGE_VERIFY_PATH = `${V1}/backups/bridge/verify`;
/** A hosting project name a toolset may report (anything else is dropped). */
const VERCEL_PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** How much of a peer's text goes into the log line about its answer. */
const MAX_LOGGED_TEXT = 500;

export type Badge = 'green' | 'yellow' | 'red';
export type Overall = Badge | 'unknown';

/** What this service's bridge verify endpoint answers. */
export interface VerifyAnswer {
  database: string;
  outcome: RowOutcome;
  latestSnapshotAt: string | null;
  lastVerifiedAt: string | null;
  errorText: string | null;
  vercelProject: string | null;
}

export interface CrossToolsetRow {
  toolset: string;
  database: string;
  vercelProject: string | null;
  outcome: RowOutcome;
  latestSnapshotAt: string | null;
  lastVerifiedAt: string | null;
  /** The fixed sentence of `reason`; null when ok. */
  errorText: string | null;
  badge: Badge;
  reason: PeerReason | null;
  /** When the row's check was made; null before the first. */
  checkedAt: string | null;
}

export interface CrossToolsetView {
  totalToolsets: number;
  overall: Overall;
  counts: Record<RowOutcome, number>;
  rows: CrossToolsetRow[];
}

export interface CrossToolsetVerifyResult extends CrossToolsetView {
  /** The toolsets asked now. */
  asked: string[];
  /** The toolsets not asked: asked less than the minimum interval ago. */
  throttled: { toolset: string; retryAfterSec: number }[];
}

export interface ToolsetView {
  toolset: string;
  verifyUrl: string;
  database: string;
  vercelProject: string | null;
  createdAt: string;
  updatedAt: string;
  updatedBy: string | null;
}

const toView = (row: repo.ToolsetRow): ToolsetView => ({
  toolset: row.toolset,
  verifyUrl: row.verifyUrl,
  database: row.database,
  vercelProject: row.vercelProject,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
  updatedBy: row.updatedBy,
});

/** Row badge: ok green; drift and skipped yellow; error red. */
export function rowBadge(outcome: RowOutcome): Badge {
  return outcome === 'ok' ? 'green' : outcome === 'error' ? 'red' : 'yellow';
}

/** unknown with no toolsets; red when any row is an error; yellow when any is drift or skipped; green when all are ok. */
export function overallOf(rows: readonly { outcome: RowOutcome }[]): Overall {
  if (rows.length === 0) return 'unknown';
  if (rows.some((r) => r.outcome === 'error')) return 'red';
  if (rows.some((r) => r.outcome !== 'ok')) return 'yellow';
  return 'green';
}

const OUTCOMES: readonly RowOutcome[] = ['ok', 'drift', 'error', 'skipped'];
const clip = (text: string) => (text.length > MAX_LOGGED_TEXT ? `${text.slice(0, MAX_LOGGED_TEXT)}…` : text);
const isoOrNull = (value: unknown): string | null | undefined => {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
};

/** What a peer's verify answer holds, as this deployment keeps it: checked values only. */
export interface ReadAnswer {
  outcome: RowOutcome;
  latestSnapshotAt: string | null;
  lastVerifiedAt: string | null;
  vercelProject: string | null;
  /** The peer's own errorText, for the log only. */
  peerText: string | null;
}

/**
 * Reads a peer's HTTP 200 answer: a verify answer (the envelope's extra fields ignored), or null
 * when it is not one. Times are normalised; a hosting project outside the name pattern is dropped.
 */
export function readVerifyAnswer(json: unknown): ReadAnswer | null {
  const body = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  if (body === null) return null;
  const outcome = body.outcome;
  if (typeof outcome !== 'string' || !OUTCOMES.includes(outcome as RowOutcome)) return null;
  const latestSnapshotAt = isoOrNull(body.latestSnapshotAt);
  const lastVerifiedAt = isoOrNull(body.lastVerifiedAt);
  if (latestSnapshotAt === undefined || lastVerifiedAt === undefined) return null;
  const errorText = body.errorText ?? null;
  if (errorText !== null && typeof errorText !== 'string') return null;
  return {
    outcome: outcome as RowOutcome,
    latestSnapshotAt,
    lastVerifiedAt,
    vercelProject: typeof body.vercelProject === 'string' && VERCEL_PROJECT.test(body.vercelProject) ? body.vercelProject : null,
    peerText: errorText === null ? null : clip(errorText),
  };
}

/** The reason a peer's reply earns (its outcome included), and what it reported when it answered. */
export function judgeReply(reply: BridgeAnswer): { peerReason: PeerReason | null; httpStatus: number | null; answer: ReadAnswer | null } {
  if (!reply.ok) return { peerReason: reply.failure, httpStatus: null, answer: null };
  const { status } = reply;
  if (status === 401 || status === 403) return { peerReason: 'bridge-token-refused', httpStatus: status, answer: null };
  if (status === 429) return { peerReason: 'peer-rate-limited', httpStatus: status, answer: null };
  if (status === 409) return { peerReason: 'peer-busy', httpStatus: status, answer: null };
  if (status !== 200) return { peerReason: 'unexpected-status', httpStatus: status, answer: null };
  const answer = readVerifyAnswer(reply.json);
  if (answer === null) return { peerReason: 'bad-answer', httpStatus: null, answer: null };
  const peerReason: PeerReason | null = answer.outcome === 'ok' ? null : answer.outcome === 'drift' ? 'peer-reported-drift' : answer.outcome === 'error' ? 'peer-reported-error' : 'peer-reported-skipped';
  return { peerReason, httpStatus: null, answer };
}

/** Why the registered URL is not a bridge verify endpoint; null when it is one. */
export function bridgeEndpointProblem(url: URL): string | null {
  if (url.search !== '' || url.hash !== '') return 'the bridge token is sent to a bridge verify endpoint only: the URL may carry no query or fragment';
  if (!url.pathname.endsWith(BRIDGE_VERIFY_PATH)) return `the bridge token is sent to a bridge verify endpoint only: the URL's path must end with ${BRIDGE_VERIFY_PATH}`;
  return null;
}

function rowOf(row: repo.ToolsetRow): CrossToolsetRow {
  const base = { toolset: row.toolset, database: row.database };
  const check = row.lastCheck;
  if (check === null) {
    const reason: PeerReason = 'not-verified-yet';
    return { ...base, vercelProject: row.vercelProject, outcome: 'skipped', latestSnapshotAt: null, lastVerifiedAt: null, errorText: reasonText(reason), badge: 'yellow', reason, checkedAt: null };
  }
  const reason = check.reason !== null && check.reason in PEER_REASONS ? (check.reason as PeerReason) : null;
  return {
    ...base,
    vercelProject: row.vercelProject ?? check.vercelProject,
    outcome: check.outcome,
    latestSnapshotAt: check.latestSnapshotAt,
    lastVerifiedAt: check.lastVerifiedAt,
    errorText: reason === null ? null : reasonText(reason, check.httpStatus),
    badge: rowBadge(check.outcome),
    reason,
    checkedAt: check.checkedAt,
  };
}

function viewOf(rows: CrossToolsetRow[]): CrossToolsetView {
  const counts: Record<RowOutcome, number> = { ok: 0, drift: 0, error: 0, skipped: 0 };
  for (const row of rows) counts[row.outcome] += 1;
  return { totalToolsets: rows.length, overall: overallOf(rows), counts, rows };
}


export interface CrossToolsetService {
  /** The stored rows (narrowed to a bound credential's toolsets); asks nobody and writes nothing. */
  view(principal: Principal | null): Promise<CrossToolsetView>;
  /**
   * Asks the named toolset, or every registered one (`null`; refused for a bound credential), that
   * was not asked within the minimum interval, and stores what each answered. A named toolset asked
   * too recently is 429 `rate-limited`; with every toolset those are listed under `throttled`.
   * `ctx` null: the daily job.
   */
  verify(ctx: CallContext | null, toolset: string | null): Promise<CrossToolsetVerifyResult>;
  listToolsets(principal: Principal | null): Promise<{ toolsets: ToolsetView[] }>;
  register(ctx: CallContext, toolset: string, input: { verifyUrl: string; database: string; vercelProject?: string | null | undefined }): Promise<{ ok: true; created: boolean; toolset: ToolsetView }>;
  remove(ctx: CallContext, toolset: string): Promise<{ ok: true; toolset: ToolsetView }>;
  /**
   * This deployment's answer to a bridge verify call: its newest snapshot, restored and checked
   * now. 429 `rate-limited` within the minimum interval after the last bridge verification; 409
   * `conflict` while another snapshot or verification runs.
   */
  verifyOwn(ctx: CallContext, database: string | undefined): Promise<VerifyAnswer>;
}

export function createCrossToolsetService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  log: FastifyBaseLogger;
  rehearsal: Pick<RestoreRehearsal, 'database' | 'latestSnapshot' | 'verifySnapshot' | 'exclusive' | 'lastVerifiedAt'>;
  /**
   * The bridge token to send, read at each check (BridgeTokens.outgoing: OBSERVATORY_BRIDGE_TOKEN,
   * or the staged one during a rotation rehearsal); null: no peer is asked (rows `skipped`).
   */
  bridgeToken: () => string | null;
  /** OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS. */
  timeoutMs: number;
  /** OBSERVATORY_BRIDGE_PEER_HOSTS: the only hosts the bridge token is sent to. */
  peerHosts: readonly string[];
  /** OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC. */
  minIntervalSec: number;
  /** config.outbound: the SSRF policy every outbound call follows. */
  policy: OutboundPolicy;
  /** Replaces DNS (tests). */
  resolve?: Resolver;
}): CrossToolsetService {
  const { db, clock, audit, rehearsal, log } = deps;
  const minIntervalMs = deps.minIntervalSec * 1000;
  let ownVerify: Promise<VerifyAnswer> | null = null;

  /** Why the bridge token may not go to this URL's host; null when it may. */
  function peerHostProblem(url: URL): string | null {
    if (deps.peerHosts.includes(url.hostname.toLowerCase())) return null;
    return deps.peerHosts.length === 0
      ? 'OBSERVATORY_BRIDGE_PEER_HOSTS is empty on this deployment, so the bridge token is sent to no host'
      : `its host ${url.hostname} is not in OBSERVATORY_BRIDGE_PEER_HOSTS, the hosts the bridge token may be sent to`;
  }

  function checkVerifyUrl(raw: string): void {
    try {
      const url = checkOutboundUrl(raw, deps.policy);
      const notPeer = peerHostProblem(url) ?? bridgeEndpointProblem(url);
      if (notPeer !== null) throw new Error(notPeer);
      // The bridge token travels in a header: never in clear text over the internet.
      if (url.protocol !== 'https:' && !deps.policy.allowPrivate) {
        throw new Error('the bridge token is only sent over https (http is allowed with OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1, for labs and tests)');
      }
    } catch (error) {
      throw badRequest('outbound-refused', `body.verifyUrl is not usable: ${(error as Error).message}.`, { field: 'body.verifyUrl' });
    }
  }

  /** Asks one toolset (or finds why it may not be asked) and answers the check to store. */
  async function ask(row: repo.ToolsetRow, token: string | null): Promise<StoredCheck> {
    const found = (reason: PeerReason | null, httpStatus: number | null, answer: ReadAnswer | null): StoredCheck => ({
      checkedAt: clock.now().toISOString(),
      outcome: reason === null ? 'ok' : PEER_REASONS[reason].outcome,
      reason,
      httpStatus,
      latestSnapshotAt: answer?.latestSnapshotAt ?? null,
      lastVerifiedAt: answer?.lastVerifiedAt ?? null,
      vercelProject: answer?.vercelProject ?? null,
    });
    if (token === null) return found('bridge-token-not-set', null, null);
    // Checked again on every ask: the host list may have shrunk, and rows registered before the
    // path rule may name another path.
    let url: URL;
    try {
      url = new URL(row.verifyUrl);
    } catch {
      return found('not-bridge-endpoint', null, null);
    }
    if (peerHostProblem(url) !== null) return found('host-not-allowed', null, null);
    if (bridgeEndpointProblem(url) !== null) return found('not-bridge-endpoint', null, null);
    const reply = await bridgePost(row.verifyUrl, { database: row.database }, {
      ...deps.policy,
      token,
      timeoutMs: deps.timeoutMs,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
    });
    const judged = judgeReply(reply);
    if (judged.peerReason !== null) {
      // The details stay in the log: a peer's words never reach the view.
      const detail = !reply.ok ? reply.detail : (judged.answer?.peerText ?? (reply.json === null ? null : clip(JSON.stringify(reply.json))));
      log.warn({ toolset: row.toolset, peerReason: judged.peerReason, httpStatus: judged.httpStatus, detail }, 'cross-toolset restore: the toolset\'s check is not ok');
    }
    return found(judged.peerReason, judged.httpStatus, judged.answer);
  }

  async function verifyNow(ctx: CallContext): Promise<VerifyAnswer> {
    const database = rehearsal.database;
    const base = { database, vercelProject: null };
    let latest;
    try {
      latest = await rehearsal.latestSnapshot(database);
    } catch (error) {
      return { ...base, outcome: 'error', latestSnapshotAt: null, lastVerifiedAt: null, errorText: `the newest snapshot could not be read: ${(error as Error).message}` };
    }
    if (latest === null) {
      return { ...base, outcome: 'skipped', latestSnapshotAt: null, lastVerifiedAt: null, errorText: `no snapshot of ${database} exists yet` };
    }
    const latestSnapshotAt = latest.takenAt.toISOString();
    try {
      const verification = await rehearsal.verifySnapshot(latest.id, ctx, 'bridge');
      return {
        ...base,
        outcome: verification.outcome,
        latestSnapshotAt,
        lastVerifiedAt: clock.now().toISOString(),
        errorText: verification.outcome === 'ok' ? null : (verification.errorText ?? `restore ${verification.outcome}`),
      };
    } catch (error) {
      return { ...base, outcome: 'error', latestSnapshotAt, lastVerifiedAt: null, errorText: `restore of snapshot ${latest.id} failed: ${(error as Error).message}` };
    }
  }

  return {
    async view(principal) {
      // A bound credential sees only its own toolsets' rows (docs/operations.md, "Toolset binding").
      return viewOf((await repo.listToolsets(db, toolsetReach(principal))).map(rowOf));
    },

    async verify(ctx, toolset) {
      const principal = ctx?.principal ?? null;
      let targets: repo.ToolsetRow[];
      if (toolset === null) {
        assertSpansNoToolset(principal, 'verifying every registered toolset');
        targets = await repo.listToolsets(db);
      } else {
        assertToolsetInReach(principal, toolset, 'verify the backups of');
        const row = await repo.toolsetByName(db, toolset);
        assertThat(row, notFound(`No toolset ${toolset} is registered.`));
        targets = [row];
      }
      const now = clock.now();
      // One token for the whole check: a rehearsal switching mid-way does not mix the two.
      const token = deps.bridgeToken();
      // Without a bridge token nobody is asked, so no interval is spent.
      const claimed =
        token === null
          ? targets
          : await repo.claimForAsking(db, targets.map((r) => r.toolset), now, new Date(now.getTime() - minIntervalMs));
      const claimedNames = new Set(claimed.map((r) => r.toolset));
      const throttled = targets
        .filter((r) => !claimedNames.has(r.toolset))
        .map((r) => ({ toolset: r.toolset, retryAfterSec: Math.max(1, Math.ceil(((r.lastAskedAt?.getTime() ?? now.getTime()) + minIntervalMs - now.getTime()) / 1000)) }));
      if (toolset !== null && throttled.length > 0) {
        const wait = throttled[0]!.retryAfterSec;
        throw new ServiceError(
          429,
          'rate-limited',
          `Toolset ${toolset} was asked less than ${deps.minIntervalSec} s ago (OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC); ask again in ${wait} s.`,
          { retryAfterSec: wait },
        );
      }
      const checks = await Promise.all(claimed.map(async (row) => ({ row, check: await ask(row, token) })));
      const askEnded = token === null ? null : clock.now();
      await withTransaction(db, async (tx) => {
        for (const { row, check } of checks) await repo.storeCheck(tx, row, check, askEnded);
        if (ctx !== null) {
          await audit.record(tx, {
            verb: 'backup.cross-toolset-verify',
            target: toolset === null ? 'backup-toolsets' : `backup-toolset:${toolset}`,
            surface: 'api',
            actor: actorOf(ctx.principal),
            after: { asked: checks.map(({ row, check }) => ({ toolset: row.toolset, outcome: check.outcome, reason: check.reason })), throttled },
            requestId: ctx.requestId,
          });
        }
      });
      const names = new Set(targets.map((r) => r.toolset));
      const rows = (await repo.listToolsets(db)).filter((r) => names.has(r.toolset)).map(rowOf);
      return { ...viewOf(rows), asked: token === null ? [] : checks.map(({ row }) => row.toolset), throttled };
    },

    async listToolsets(principal) {
      return { toolsets: (await repo.listToolsets(db, toolsetReach(principal))).map(toView) };
    },

    async register(ctx, toolset, input) {
      assertToolsetInReach(ctx.principal, toolset, 'register the backup verify endpoint of');
      checkVerifyUrl(input.verifyUrl);
      return withTransaction(db, async (tx) => {
        await repo.lockRegistrations(tx);
        const before = await repo.lockToolset(tx, toolset);
        if (before === null && (await repo.countToolsets(tx)) >= MAX_TOOLSETS) {
          throw conflict(`At most ${MAX_TOOLSETS} toolsets may be registered; remove one first.`);
        }
        const now = clock.now();
        const stored = await repo.upsertToolset(tx, {
          toolset,
          verifyUrl: input.verifyUrl,
          database: input.database,
          vercelProject: input.vercelProject ?? null,
          createdAt: before?.createdAt ?? now,
          updatedAt: now,
          updatedBy: ctx.principal.username,
        });
        await audit.record(tx, {
          verb: 'backup.toolset-register',
          target: `backup-toolset:${toolset}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: before === null ? null : toView(before),
          after: toView(stored),
          requestId: ctx.requestId,
        });
        return { ok: true as const, created: before === null, toolset: toView(stored) };
      });
    },

    async remove(ctx, toolset) {
      assertToolsetInReach(ctx.principal, toolset, 'remove the backup verify endpoint of');
      return withTransaction(db, async (tx) => {
        const before = await repo.lockToolset(tx, toolset);
        assertThat(before, notFound(`No toolset ${toolset} is registered.`));
        await repo.deleteToolset(tx, toolset);
        await audit.record(tx, {
          verb: 'backup.toolset-remove',
          target: `backup-toolset:${toolset}`,
          surface: 'api',
          actor: actorOf(ctx.principal),
          before: toView(before),
          after: null,
          requestId: ctx.requestId,
        });
        return { ok: true as const, toolset: toView(before) };
      });
    },

    async verifyOwn(ctx, database) {
      if (database !== undefined && database !== rehearsal.database) {
        throw notFound(`This deployment does not snapshot a database named ${database}; it snapshots ${rehearsal.database}.`);
      }
      // Concurrent calls on one instance share one attempt (audited under the caller that started
      // it). The interval is checked holding the backup turn, so two instances cannot both pass it.
      ownVerify ??= rehearsal
        .exclusive(async () => {
          const last = await rehearsal.lastVerifiedAt('bridge');
          const sinceMs = last === null ? Number.POSITIVE_INFINITY : clock.now().getTime() - last.getTime();
          if (sinceMs < minIntervalMs) {
            const wait = Math.max(1, Math.ceil((minIntervalMs - sinceMs) / 1000));
            throw new ServiceError(
              429,
              'rate-limited',
              `This deployment verified its backups for a bridge call less than ${deps.minIntervalSec} s ago (OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC); ask again in ${wait} s.`,
              { retryAfterSec: wait },
            );
          }
          return verifyNow(ctx);
        }, { wait: false })
        .finally(() => {
          ownVerify = null;
        });
      return ownVerify;
    },
  };
}
