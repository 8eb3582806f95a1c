import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { withTransaction } from '../../../platform/db/transaction.ts';
import { assertThat, badRequest, conflict, notFound } from '../../../platform/errors.ts';
import { assertToolsetInReach } from '../../../platform/http/auth.ts';
import { checkOutboundUrl, type OutboundPolicy, type Resolver } from '../../../platform/outbound/safe-fetch.ts';
import type { RestoreRehearsal } from '../drills/service.ts';
import { bridgePost } from './bridge-client.ts';
import * as repo from './repository.ts';

/**
 * Cross-toolset restore (spec B `backups/cross-toolset`, D7; docs/backups.md, "Cross-toolset
 * restore"): operators register toolsets with a bridge-gated verify endpoint; the view asks each of
 * them at once, with a timeout, and lists every failure as an `error` row, never throwing. This
 * service is such a toolset too: `verifyOwn` answers its bridge endpoint.
 */

/** Toolset names as everywhere (spec C, Limits): 3 to 128 characters, a letter first, then letters, digits and `-`. */
export const TOOLSET_PATTERN = '^[A-Za-z][A-Za-z0-9-]{2,127}$';
export const DATABASE_PATTERN = '^[A-Za-z0-9_.-]{1,128}$';
/** At most this many registered toolsets: each one is an outbound call on every read of the view. */
export const MAX_TOOLSETS = 100;
/** Text from a peer is cut to this length before it is listed. */
const MAX_PEER_TEXT = 500;

export type RowOutcome = 'ok' | 'drift' | 'error' | 'skipped';
export type Badge = 'green' | 'yellow' | 'red';
export type Overall = Badge | 'unknown';

/** What a toolset's bridge verify endpoint answers (and this service's own answers). */
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
  errorText: string | null;
  badge: Badge;
}

export interface CrossToolsetView {
  totalToolsets: number;
  overall: Overall;
  counts: Record<RowOutcome, number>;
  rows: CrossToolsetRow[];
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
const clip = (text: string) => (text.length > MAX_PEER_TEXT ? `${text.slice(0, MAX_PEER_TEXT)}…` : text);
const isIsoOrNull = (value: unknown) => value === null || (typeof value === 'string' && value.length <= 64 && !Number.isNaN(Date.parse(value)));

/**
 * Reads a peer's answer: a verify answer (the envelope's extra fields ignored), or why it is not
 * one. A refusal (svc-error.v1) is named with its status and reason.
 */
export function readVerifyAnswer(status: number, json: unknown): { answer: Omit<VerifyAnswer, 'database' | 'vercelProject'> & { vercelProject: string | null } } | { error: string } {
  const body = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  if (status !== 200) {
    const reason = body && typeof body.reason === 'string' ? ` ${clip(body.reason)}` : '';
    const human = body && typeof body.human === 'string' ? `: ${clip(body.human)}` : '';
    return { error: `HTTP ${status}${reason}${human}` };
  }
  if (body === null) return { error: 'the answer is not a JSON object' };
  const outcome = body.outcome;
  if (typeof outcome !== 'string' || !OUTCOMES.includes(outcome as RowOutcome)) return { error: 'the answer has no valid outcome (ok, drift, error or skipped)' };
  if (!isIsoOrNull(body.latestSnapshotAt ?? null)) return { error: 'the answer\'s latestSnapshotAt is not an ISO 8601 time' };
  if (!isIsoOrNull(body.lastVerifiedAt ?? null)) return { error: 'the answer\'s lastVerifiedAt is not an ISO 8601 time' };
  const errorText = body.errorText ?? null;
  if (errorText !== null && typeof errorText !== 'string') return { error: 'the answer\'s errorText is not a string' };
  const vercelProject = typeof body.vercelProject === 'string' ? clip(body.vercelProject) : null;
  return {
    answer: {
      outcome: outcome as RowOutcome,
      latestSnapshotAt: (body.latestSnapshotAt as string | null | undefined) ?? null,
      lastVerifiedAt: (body.lastVerifiedAt as string | null | undefined) ?? null,
      errorText: errorText === null ? null : clip(errorText),
      vercelProject,
    },
  };
}

export interface CrossToolsetService {
  view(): Promise<CrossToolsetView>;
  listToolsets(): Promise<{ toolsets: ToolsetView[] }>;
  register(ctx: CallContext, toolset: string, input: { verifyUrl: string; database: string; vercelProject?: string | null | undefined }): Promise<{ ok: true; created: boolean; toolset: ToolsetView }>;
  remove(ctx: CallContext, toolset: string): Promise<{ ok: true; toolset: ToolsetView }>;
  /** This deployment's answer to a bridge verify call: its newest snapshot, restored and checked now. */
  verifyOwn(ctx: CallContext, database: string | undefined): Promise<VerifyAnswer>;
}

export function createCrossToolsetService(deps: {
  db: Db;
  clock: Clock;
  audit: AuditLog;
  rehearsal: Pick<RestoreRehearsal, 'database' | 'latestSnapshot' | 'verifySnapshot'>;
  /** OBSERVATORY_BRIDGE_TOKEN; null: no peer is asked (rows `skipped`). */
  bridgeToken: string | null;
  /** OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS. */
  timeoutMs: number;
  /** OBSERVATORY_BRIDGE_PEER_HOSTS: the only hosts the bridge token is sent to. */
  peerHosts: readonly string[];
  /** config.outbound: the SSRF policy every outbound call follows. */
  policy: OutboundPolicy;
  /** Replaces DNS (tests). */
  resolve?: Resolver;
}): CrossToolsetService {
  const { db, clock, audit, rehearsal } = deps;
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
      const notPeer = peerHostProblem(url);
      if (notPeer !== null) throw new Error(notPeer);
      // The bridge token travels in a header: never in clear text over the internet.
      if (url.protocol !== 'https:' && !deps.policy.allowPrivate) {
        throw new Error('the bridge token is only sent over https (http is allowed with OBSERVATORY_ALLOW_PRIVATE_OUTBOUND=1, for labs and tests)');
      }
    } catch (error) {
      throw badRequest('outbound-refused', `body.verifyUrl is not usable: ${(error as Error).message}.`, { field: 'body.verifyUrl' });
    }
  }

  async function ask(row: repo.ToolsetRow): Promise<CrossToolsetRow> {
    const base = { toolset: row.toolset, database: row.database, vercelProject: row.vercelProject };
    const failed = (outcome: 'error' | 'skipped', errorText: string): CrossToolsetRow => ({
      ...base,
      outcome,
      latestSnapshotAt: null,
      lastVerifiedAt: null,
      errorText,
      badge: rowBadge(outcome),
    });
    if (deps.bridgeToken === null) return failed('skipped', 'OBSERVATORY_BRIDGE_TOKEN is not set on this deployment, so the toolset was not asked');
    // Checked again on every ask: the list may have shrunk since the toolset was registered.
    const notPeer = peerHostProblem(new URL(row.verifyUrl));
    if (notPeer !== null) return failed('error', `not asked: ${notPeer}`);
    const reply = await bridgePost(row.verifyUrl, { database: row.database }, {
      ...deps.policy,
      token: deps.bridgeToken,
      timeoutMs: deps.timeoutMs,
      ...(deps.resolve ? { resolve: deps.resolve } : {}),
    });
    if (!reply.ok) return failed('error', reply.error);
    const read = readVerifyAnswer(reply.status, reply.json);
    if ('error' in read) return failed('error', read.error);
    const { answer } = read;
    return {
      ...base,
      vercelProject: row.vercelProject ?? answer.vercelProject,
      outcome: answer.outcome,
      latestSnapshotAt: answer.latestSnapshotAt,
      lastVerifiedAt: answer.lastVerifiedAt,
      errorText: answer.outcome === 'ok' ? null : (answer.errorText ?? `the toolset reported ${answer.outcome} without a reason`),
      badge: rowBadge(answer.outcome),
    };
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
      const verification = await rehearsal.verifySnapshot(latest.id, ctx);
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
    async view() {
      const toolsets = await repo.listToolsets(db);
      const rows = await Promise.all(toolsets.map(ask));
      const counts: Record<RowOutcome, number> = { ok: 0, drift: 0, error: 0, skipped: 0 };
      for (const row of rows) counts[row.outcome] += 1;
      return { totalToolsets: rows.length, overall: overallOf(rows), counts, rows };
    },

    async listToolsets() {
      return { toolsets: (await repo.listToolsets(db)).map(toView) };
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
      // Concurrent bridge calls share one restore (audited under the caller that started it).
      ownVerify ??= verifyNow(ctx).finally(() => {
        ownVerify = null;
      });
      return ownVerify;
    },
  };
}
