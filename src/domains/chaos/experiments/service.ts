import { randomUUID } from 'node:crypto';
import { actorOf, type AuditLog, type CallContext } from '../../../platform/audit/service.ts';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import { decodeSeqCursor, isUuid, pageOfSeq } from '../../../platform/db/paging.ts';
import { isUniqueViolation, withTransaction } from '../../../platform/db/transaction.ts';
import { conflict, notFound } from '../../../platform/errors.ts';
import { CHAOS_KINDS, type ChaosCategory, type ChaosKind, KIND_RULES } from '../kinds.ts';
import * as repo from './repository.ts';

/** Registration rules (spec B group 5, spec C "Limits": chaos registration). */
export const SLUG_PATTERN = '^[a-z0-9-]{1,128}$';
const SLUG = new RegExp(SLUG_PATTERN);
export const TARGET_MAX = 256;
export const DESCRIPTION_MAX = 2000;
export const COOLDOWN_MIN = 1;
export const COOLDOWN_MAX = 1440;
export const COOLDOWN_DEFAULT = 60;
export const SEVERITIES = ['major', 'minor'] as const;
export const SEVERITY_DEFAULT = 'minor';
export const STATUSES = ['active', 'paused', 'retired'] as const;
export const LIST_LIMIT_DEFAULT = 50;
export const LIST_LIMIT_MAX = 200;

export type ExperimentStatus = (typeof STATUSES)[number];
export type Severity = (typeof SEVERITIES)[number];
export type ExperimentRow = repo.ExperimentRow;

/** A chaos experiment as the API answers it (spec A "Chaos experiment"). */
export interface ExperimentView {
  id: string;
  slug: string;
  kind: ChaosKind;
  target: string;
  description: string;
  /** The kind's category: what OBSERVATORY_CHAOS_ALLOW must list for it to run. */
  blastRadius: ChaosCategory;
  recoverySloSec: number;
  cooldownMinutes: number;
  severity: Severity;
  status: ExperimentStatus;
  ownerUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

export type RefusalReason =
  | 'invalid-slug'
  | 'slug-taken'
  | 'invalid-kind'
  | 'invalid-target'
  | 'unknown-target'
  | 'invalid-recovery-slo'
  | 'invalid-cooldown'
  | 'invalid-severity'
  | 'invalid-description';

export type ExperimentOutcome = { ok: true; experiment: ExperimentView } | { ok: false; reason: RefusalReason; human: string };

export interface RegisterInput {
  slug?: string | undefined;
  kind?: string | undefined;
  target?: string | undefined;
  description?: string | undefined;
  recoverySloSec?: number | undefined;
  cooldownMinutes?: number | undefined;
  severity?: string | undefined;
}

export interface ListInput {
  kind?: ChaosKind | undefined;
  status?: ExperimentStatus | undefined;
  cursor?: string | undefined;
  limit?: number | undefined;
}

/** Why a kind's target names nothing it can act on, or null (targets.ts has the deployment's rules). */
export type TargetProblem = (kind: ChaosKind, target: string) => string | null;

export function toExperimentView(row: repo.ExperimentRow): ExperimentView {
  return {
    id: row.id,
    slug: row.slug,
    kind: row.kind as ChaosKind,
    target: row.target,
    description: row.description,
    blastRadius: row.blastRadius as ChaosCategory,
    recoverySloSec: row.recoverySloSec,
    cooldownMinutes: row.cooldownMinutes,
    severity: row.severity as Severity,
    status: row.status as ExperimentStatus,
    ownerUserId: row.ownerUserId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const isKind = (kind: string): kind is ChaosKind => (CHAOS_KINDS as readonly string[]).includes(kind);
const isSeverity = (severity: string): severity is Severity => (SEVERITIES as readonly string[]).includes(severity);
/** Characters as a reader counts them (code points), not UTF-16 units. */
const charCount = (text: string) => [...text].length;
const refuse = (reason: RefusalReason, human: string): ExperimentOutcome => ({ ok: false, reason, human });

type Validated = { ok: true; kind: ChaosKind; slug: string; target: string; description: string; recoverySloSec: number; cooldownMinutes: number; severity: Severity };

/** The registration's own rules, in the order a form shows its fields; the slug's uniqueness and the target's existence come after. */
function validate(input: RegisterInput): Validated | Extract<ExperimentOutcome, { ok: false }> {
  const { slug, kind, target } = input;
  if (slug === undefined || !SLUG.test(slug)) return { ok: false, reason: 'invalid-slug', human: 'slug must be 1 to 128 characters of a-z, 0-9 and -.' };
  if (kind === undefined || !isKind(kind)) return { ok: false, reason: 'invalid-kind', human: `kind must be one of ${CHAOS_KINDS.join(', ')}.` };
  if (target === undefined || charCount(target) < 1 || charCount(target) > TARGET_MAX) {
    return { ok: false, reason: 'invalid-target', human: `target must be 1 to ${TARGET_MAX} characters: ${KIND_RULES[kind].targetMeans}.` };
  }
  const rules = KIND_RULES[kind];
  let recoverySloSec = rules.defaultRecoverySloSec;
  if (input.recoverySloSec !== undefined) {
    if (!Number.isInteger(input.recoverySloSec) || input.recoverySloSec < 1) {
      return { ok: false, reason: 'invalid-recovery-slo', human: 'recoverySloSec must be a whole number of seconds, at least 1.' };
    }
    // Capped, not refused (spec C, Limits): no run of the category lasts longer than its window.
    recoverySloSec = Math.min(input.recoverySloSec, rules.maxWindowSec);
  }
  const cooldownMinutes = input.cooldownMinutes ?? COOLDOWN_DEFAULT;
  if (!Number.isInteger(cooldownMinutes) || cooldownMinutes < COOLDOWN_MIN || cooldownMinutes > COOLDOWN_MAX) {
    return { ok: false, reason: 'invalid-cooldown', human: `cooldownMinutes must be a whole number from ${COOLDOWN_MIN} to ${COOLDOWN_MAX}.` };
  }
  const severity = input.severity ?? SEVERITY_DEFAULT;
  if (!isSeverity(severity)) return { ok: false, reason: 'invalid-severity', human: `severity must be one of ${SEVERITIES.join(', ')}.` };
  const description = input.description ?? '';
  if (charCount(description) > DESCRIPTION_MAX) {
    return { ok: false, reason: 'invalid-description', human: `description must be at most ${DESCRIPTION_MAX} characters.` };
  }
  return { ok: true, kind, slug, target, description, recoverySloSec, cooldownMinutes, severity };
}

type Action = 'pause' | 'resume' | 'retire';
/** What each action makes of an experiment: its status after, and the statuses it leaves as they are. */
const ACTIONS: Record<Action, { to: ExperimentStatus; verb: string; unchangedFrom: ExperimentStatus }> = {
  pause: { to: 'paused', verb: 'chaos.pause', unchangedFrom: 'paused' },
  resume: { to: 'active', verb: 'chaos.resume', unchangedFrom: 'active' },
  retire: { to: 'retired', verb: 'chaos.retire', unchangedFrom: 'retired' },
};

/** The experiment registry (docs/chaos/README.md, "Experiments"). */
export function createExperimentService(deps: { db: Db; clock: Clock; audit: AuditLog; targetProblem: TargetProblem }) {
  const { db, clock, audit } = deps;

  async function transition(ctx: CallContext, id: string, action: Action): Promise<ExperimentOutcome> {
    // Only a UUID can name an experiment; anything else is one nothing has (the uuid column would refuse it with an error).
    if (!isUuid(id)) throw notFound(`There is no chaos experiment ${id}.`);
    const { to, verb, unchangedFrom } = ACTIONS[action];
    const row = await withTransaction(db, async (tx) => {
      const before = await repo.lockExperiment(tx, id);
      if (before === null) throw notFound(`There is no chaos experiment ${id}.`);
      if (before.status === unchangedFrom) return before;
      if (before.status === 'retired') throw conflict(`The chaos experiment ${before.slug} is retired: it cannot be ${action === 'pause' ? 'paused' : 'resumed'}. Register a new one.`);
      const after = await repo.setStatus(tx, id, to, clock.now());
      await audit.record(tx, {
        verb,
        target: `chaos-experiment:${id}`,
        surface: 'api',
        actor: actorOf(ctx.principal),
        before: toExperimentView(before),
        after: toExperimentView(after),
        requestId: ctx.requestId,
      });
      return after;
    });
    return { ok: true, experiment: toExperimentView(row) };
  }

  return {
    /**
     * Registers an experiment, active at once. A request breaking a rule is refused with `ok` false,
     * `reason` and `human` (HTTP 400; spec C, Errors item 3). Audited as `chaos.register`.
     */
    async register(ctx: CallContext, input: RegisterInput): Promise<ExperimentOutcome> {
      const valid = validate(input);
      if (!valid.ok) return valid;
      const problem = deps.targetProblem(valid.kind, valid.target);
      if (problem !== null) return refuse('unknown-target', problem);
      const taken = () => refuse('slug-taken', `There is already a chaos experiment with the slug ${valid.slug}.`);
      if ((await repo.experimentBySlug(db, valid.slug)) !== null) return taken();
      const now = clock.now();
      try {
        const row = await withTransaction(db, async (tx) => {
          const inserted = await repo.insertExperiment(tx, {
            id: randomUUID(),
            slug: valid.slug,
            kind: valid.kind,
            target: valid.target,
            description: valid.description,
            blastRadius: KIND_RULES[valid.kind].category,
            recoverySloSec: valid.recoverySloSec,
            cooldownMinutes: valid.cooldownMinutes,
            severity: valid.severity,
            status: 'active',
            ownerUserId: ctx.principal.userId,
            createdAt: now,
            updatedAt: now,
          });
          await audit.record(tx, {
            verb: 'chaos.register',
            target: `chaos-experiment:${inserted.id}`,
            surface: 'api',
            actor: actorOf(ctx.principal),
            after: toExperimentView(inserted),
            requestId: ctx.requestId,
          });
          return inserted;
        });
        return { ok: true, experiment: toExperimentView(row) };
      } catch (error) {
        // Two registrations of one slug at once: the unique index refuses the second.
        if (isUniqueViolation(error)) return taken();
        throw error;
      }
    },

    /** Newest first (createdAt, then insertion order), with kind and status filters and a cursor. */
    async list(input: ListInput): Promise<{ experiments: ExperimentView[]; nextCursor: string | null }> {
      const limit = input.limit ?? LIST_LIMIT_DEFAULT;
      const rows = await repo.listExperiments(db, { kind: input.kind, status: input.status, cursor: decodeSeqCursor(input.cursor), limit: limit + 1 });
      const { page, nextCursor } = pageOfSeq(rows, limit, (r) => r.createdAt);
      return { experiments: page.map(toExperimentView), nextCursor };
    },

    /** active → paused; a paused one answers unchanged; a retired one is 409. Audited as `chaos.pause`. */
    pause: (ctx: CallContext, id: string) => transition(ctx, id, 'pause'),
    /** paused → active; an active one answers unchanged; a retired one is 409. Audited as `chaos.resume`. */
    resume: (ctx: CallContext, id: string) => transition(ctx, id, 'resume'),
    /** active or paused → retired, for good; a retired one answers unchanged (nothing audited). Audited as `chaos.retire`. */
    retire: (ctx: CallContext, id: string) => transition(ctx, id, 'retire'),

    /** One experiment as the API shows it; null for an unknown or malformed id. */
    async get(id: string): Promise<ExperimentView | null> {
      const row = isUuid(id) ? await repo.experimentById(db, id) : null;
      return row === null ? null : toExperimentView(row);
    },
    /** One experiment's stored row (what a run starts from); null for an unknown or malformed id. */
    row: (id: string): Promise<repo.ExperimentRow | null> => (isUuid(id) ? repo.experimentById(db, id) : Promise.resolve(null)),
  };
}

export type ExperimentService = ReturnType<typeof createExperimentService>;
