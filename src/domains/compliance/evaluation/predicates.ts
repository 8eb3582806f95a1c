import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * The predicates controls point at (docs/compliance/README.md, "Controls and predicates"). Each is a pure
 * function of its `observed` input: everything it decides on, the evaluation time included, is in
 * that payload, so replaying a stored evaluation recomputes the same outcome and summary. What a
 * predicate reads from the live system is gathered by observe.ts; an input the deployment does not
 * have (a domain not built yet) is observed as `available: false` with why, and answers `n/a`.
 */

export type PredicateOutcome = 'pass' | 'fail' | 'manual-review' | 'n/a';

export interface Verdict {
  outcome: PredicateOutcome;
  summary: string;
}

// No `format`: Value.Check knows no formats unless registered, and the payload is ours anyway.
const Iso = Type.String({ minLength: 1 });
const NullableIso = Type.Union([Iso, Type.Null()]);
const Unavailable = Type.Object({ asOf: Iso, available: Type.Literal(false), reason: Type.String() });

/** How many listed items an observation carries at most; counts are always whole. */
export const LISTED_MAX = 20;

export const TOKEN_MAX_IDLE_DAYS = 90;
export const CHAIN_VERIFY_MAX_AGE_DAYS = 7;
export const RESTORE_MAX_AGE_DAYS = 7;
export const DRILL_MAX_AGE_DAYS = 90;
export const SUBPROCESSOR_REVIEW_MAX_AGE_DAYS = 365;
export const TRIAGE_DECISION_MAX_HOURS = 72;
export const CHAOS_RECOVERY_MAX_AGE_DAYS = 90;

const DAY_MS = 86_400_000;
const ageDays = (asOf: string, at: string) => (Date.parse(asOf) - Date.parse(at)) / DAY_MS;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const listed = (names: string[], count: number) => (count > names.length ? `${names.join(', ')} and ${count - names.length} more` : names.join(', '));

interface PredicateDefinition<S extends TSchema> {
  title: string;
  /** Where an operator sees the evidence (an API path under the versioned prefix, `{v1}` stands for it). */
  evidencePath: string;
  observed: S;
  evaluate(observed: Static<S>): Verdict;
}

const define = <S extends TSchema>(d: PredicateDefinition<S>) => d;

const AdminToken = Type.Object({
  asOf: Iso,
  adminTokenConfigured: Type.Boolean(),
  firstStartTokens: Type.Array(Type.Object({ prefix: Type.String(), createdAt: Iso, lastUsedAt: NullableIso })),
});

const TokenIdle = Type.Object({
  asOf: Iso,
  maxIdleDays: Type.Integer(),
  liveTokens: Type.Integer({ minimum: 0 }),
  idleCount: Type.Integer({ minimum: 0 }),
  idle: Type.Array(Type.Object({ prefix: Type.String(), name: Type.String(), createdAt: Iso, lastUsedAt: NullableIso })),
});

const Outbound = Type.Object({ asOf: Iso, allowPrivateOutbound: Type.Boolean() });

const ChainVerified = Type.Object({
  asOf: Iso,
  maxAgeDays: Type.Integer(),
  headSeqNo: Type.Union([Type.String(), Type.Null()]),
  lastVerification: Type.Union([
    Type.Null(),
    Type.Object({ at: Iso, intact: Type.Boolean(), walkedCount: Type.Integer(), headSeqNo: Type.Union([Type.String(), Type.Null()]), divergence: Type.Unknown() }),
  ]),
});

const TriageDecided = Type.Object({
  asOf: Iso,
  maxWaitHours: Type.Integer(),
  pendingIncidents: Type.Integer({ minimum: 0 }),
  overdueCount: Type.Integer({ minimum: 0 }),
  oldestPendingAt: NullableIso,
});

const SubprocessorsReviewed = Type.Object({
  asOf: Iso,
  maxAgeDays: Type.Integer(),
  inUse: Type.Integer({ minimum: 0 }),
  unreviewedCount: Type.Integer({ minimum: 0 }),
  unreviewed: Type.Array(Type.Object({ name: Type.String(), lastReviewedAt: NullableIso })),
});

const CostOverruns = Type.Object({
  asOf: Iso,
  openCount: Type.Integer({ minimum: 0 }),
  open: Type.Array(Type.Object({ alertId: Type.String(), scope: Type.String(), scopeKey: Type.String(), monthBucket: Type.String(), thresholdPct: Type.Number(), firedAt: Iso })),
});

const LastRecord = Type.Union([Type.Null(), Type.Object({ id: Type.String(), at: Iso, outcome: Type.String(), subject: Type.String() })]);
const Recency = Type.Object({ asOf: Iso, maxAgeDays: Type.Integer(), lastOk: LastRecord, latest: LastRecord });

const SignedEvents = Type.Object({
  asOf: Iso,
  requireSignedGlobally: Type.Boolean(),
  toolsetsWithKeys: Type.Integer({ minimum: 0 }),
  /** Of those, the toolsets whose own policy leaves compatibility mode on. */
  admittingUnsigned: Type.Integer({ minimum: 0 }),
  admittingUnsignedListed: Type.Array(Type.String()),
});

const CriticalDrift = Type.Union([
  Unavailable,
  Type.Object({
    asOf: Iso,
    openCritical: Type.Integer({ minimum: 0 }),
    acknowledgedCritical: Type.Integer({ minimum: 0 }),
    listed: Type.Array(Type.Object({ id: Type.String(), kind: Type.String(), source: Type.String(), sourceId: Type.String(), status: Type.String(), openedAt: Iso })),
  }),
]);

const RegionParity = Type.Union([
  Unavailable,
  Type.Object({
    asOf: Iso,
    currentRegion: Type.String(),
    migrationParity: Type.Union([Type.Literal('drifted'), Type.Literal('matched')]),
    participating: Type.Array(Type.String()),
    participatingCount: Type.Integer({ minimum: 0 }),
    failed: Type.Array(Type.Object({ region: Type.String(), reason: Type.String() })),
    failedCount: Type.Integer({ minimum: 0 }),
    drifted: Type.Array(Type.Object({ migrationDigest: Type.String(), regionKey: Type.String() })),
  }),
]);

const ChaosRecovery = Type.Union([
  // A deployment without the chaos domain, and evaluations stored before it was built.
  Unavailable,
  Type.Object({
    asOf: Iso,
    maxAgeDays: Type.Integer(),
    /** OBSERVATORY_CHAOS_ALLOW; empty: chaos is switched off. */
    allowedBlastRadii: Type.Array(Type.String()),
    okCount: Type.Integer({ minimum: 0 }),
    slaBreachCount: Type.Integer({ minimum: 0 }),
    latest: Type.Union([
      Type.Null(),
      Type.Object({
        id: Type.String(),
        experimentSlug: Type.Union([Type.String(), Type.Null()]),
        outcome: Type.Union([Type.Literal('ok'), Type.Literal('sla-breach')]),
        observedRecoverySec: Type.Union([Type.Number(), Type.Null()]),
        recoverySloSec: Type.Number(),
        endedAt: Iso,
      }),
    ]),
  }),
]);

const seconds = (sec: number) => `${Math.round(sec * 10) / 10} s`;

function recency(title: string, evidencePath: string, what: string, how: string) {
  return define({
    title,
    evidencePath,
    observed: Recency,
    evaluate(o) {
      if (o.lastOk !== null && ageDays(o.asOf, o.lastOk.at) <= o.maxAgeDays) {
        return { outcome: 'pass', summary: `The last ${what} that ended ok (${o.lastOk.subject}) was at ${o.lastOk.at}, within ${o.maxAgeDays} days.` };
      }
      const last = o.latest === null ? `No ${what} is recorded.` : `The latest ${what} (${o.latest.subject}) at ${o.latest.at} ended ${o.latest.outcome}.`;
      const lastOk = o.lastOk === null ? `none ever ended ok` : `the last ok one was at ${o.lastOk.at}`;
      return { outcome: 'fail', summary: `No ${what} ended ok in the last ${o.maxAgeDays} days (${lastOk}). ${last} ${how}` };
    },
  });
}

export const PREDICATES = {
  'admin-token-not-first-start': define({
    title: 'The admin token is not the first-start default',
    evidencePath: '{v1}/honeypot/ops/audit',
    observed: AdminToken,
    evaluate(o) {
      if (o.firstStartTokens.length === 0) {
        return { outcome: 'pass', summary: o.adminTokenConfigured ? 'No first-start token is live; the admin token is the one OBSERVATORY_ADMIN_TOKEN names.' : 'No first-start token is live.' };
      }
      const prefixes = o.firstStartTokens.map((t) => t.prefix).join(', ');
      return {
        outcome: 'fail',
        summary: `The token printed on stdout at first start is still live (${prefixes}): create named tokens, then revoke it, or set OBSERVATORY_ADMIN_TOKEN.`,
      };
    },
  }),
  'tokens-expire-or-recently-used': define({
    title: 'Every live token expires or was used in the last 90 days',
    evidencePath: '{v1}/honeypot/ops/audit',
    observed: TokenIdle,
    evaluate(o) {
      if (o.idleCount === 0) {
        const subject = o.liveTokens === 0 ? 'No token is live' : o.liveTokens === 1 ? 'The one live token was' : `All ${o.liveTokens} live tokens were`;
        return { outcome: 'pass', summary: o.liveTokens === 0 ? `${subject}.` : `${subject} used (or created) in the last ${o.maxIdleDays} days.` };
      }
      const names = o.idle.map((t) => `${t.prefix} "${t.name}"`);
      return {
        outcome: 'fail',
        summary: `${plural(o.idleCount, 'live token')} of ${o.liveTokens} went unused for more than ${o.maxIdleDays} days and never expire: ${listed(names, o.idleCount)}. Revoke them.`,
      };
    },
  }),
  'outbound-private-addresses-blocked': define({
    title: 'Outbound destinations cannot reach private addresses',
    evidencePath: '{v1}/integrations/status',
    observed: Outbound,
    evaluate: (o) =>
      o.allowPrivateOutbound
        ? { outcome: 'fail', summary: 'OBSERVATORY_ALLOW_PRIVATE_OUTBOUND is on: webhooks may reach private, loopback and link-local addresses. Turn it off outside a lab.' }
        : { outcome: 'pass', summary: 'Webhooks and other outbound destinations are refused private, loopback and link-local addresses (OBSERVATORY_ALLOW_PRIVATE_OUTBOUND is off).' },
  }),
  'no-open-critical-drift': define({
    title: 'No critical trust drift event is open',
    evidencePath: '{v1}/trust/drift?status=all&limit=100',
    observed: CriticalDrift,
    evaluate(o) {
      if ('available' in o) return { outcome: 'n/a', summary: `Not applicable: ${o.reason}` };
      const total = o.openCritical + o.acknowledgedCritical;
      if (total === 0) return { outcome: 'pass', summary: 'No critical drift event is open or acknowledged.' };
      const names = o.listed.map((e) => `${e.kind} ${e.source} ${e.sourceId} (${e.status} since ${e.openedAt})`);
      return {
        outcome: 'fail',
        summary: `${plural(o.openCritical, 'critical drift event')} open and ${o.acknowledgedCritical} acknowledged but not resolved: ${listed(names, total)}. Fix the cause (drift-remediate then resolves it) or resolve it.`,
      };
    },
  }),
  'audit-chain-verified': define({
    title: 'The audit chain was verified intact in the last 7 days',
    evidencePath: '{v1}/audit/chain',
    observed: ChainVerified,
    evaluate(o) {
      const v = o.lastVerification;
      if (v === null) return { outcome: 'fail', summary: `The audit chain was never verified: run POST {v1}/audit/chain/verify.` };
      if (!v.intact) return { outcome: 'fail', summary: `The last verification of the audit chain (${v.at}) found it broken after ${v.walkedCount} facts.` };
      if (ageDays(o.asOf, v.at) > o.maxAgeDays) {
        return { outcome: 'fail', summary: `The audit chain was last verified at ${v.at}, more than ${o.maxAgeDays} days ago: run POST {v1}/audit/chain/verify.` };
      }
      return { outcome: 'pass', summary: `The audit chain was verified intact at ${v.at} (${v.walkedCount} facts, up to seqNo ${v.headSeqNo ?? 'none'}).` };
    },
  }),
  'triage-incidents-decided': define({
    title: 'No incident proposal waits more than 72 hours for a decision',
    evidencePath: '{v1}/empire/triage/proposals?status=pending&kind=incident',
    observed: TriageDecided,
    evaluate(o) {
      if (o.overdueCount === 0) {
        return { outcome: 'pass', summary: o.pendingIncidents === 0 ? 'No incident proposal is pending.' : `${plural(o.pendingIncidents, 'incident proposal')} pending, none for more than ${o.maxWaitHours} hours.` };
      }
      return {
        outcome: 'fail',
        summary: `${plural(o.overdueCount, 'incident proposal')} waited more than ${o.maxWaitHours} hours for a decision (the oldest since ${o.oldestPendingAt ?? 'unknown'}).`,
      };
    },
  }),
  'chaos-recovery-within-slo': define({
    title: 'Chaos experiments recovered within their objective',
    evidencePath: '{v1}/chaos/runs',
    observed: ChaosRecovery,
    evaluate(o) {
      if ('available' in o) return { outcome: 'n/a', summary: `Not applicable: ${o.reason}` };
      const last = o.latest;
      if (last === null) {
        const why =
          o.allowedBlastRadii.length === 0
            ? 'Chaos is switched off (OBSERVATORY_CHAOS_ALLOW is empty), so the chaos-schedule job starts no run and manual runs are refused: list the blast radii experiments may touch, then register and run one.'
            : 'Register an experiment (POST {v1}/chaos/experiments) and run it, or let the chaos-schedule job pick one.';
        return { outcome: 'fail', summary: `No chaos run measured its recovery in the last ${o.maxAgeDays} days. ${why}` };
      }
      const which = `The latest chaos run that measured its recovery (${last.experimentSlug ?? 'an experiment since removed'}, run ${last.id}, ended ${last.endedAt})`;
      if (last.outcome === 'sla-breach') {
        const how = last.observedRecoverySec === null ? `did not recover within the run's bound` : `recovered in ${seconds(last.observedRecoverySec)}`;
        return {
          outcome: 'fail',
          summary: `${which} breached its recovery objective: it ${how} against an objective of ${seconds(last.recoverySloSec)}. ${plural(o.okCount, 'run')} ended ok in the last ${o.maxAgeDays} days.`,
        };
      }
      if (o.okCount === 0) return { outcome: 'fail', summary: `No chaos run ended ok in the last ${o.maxAgeDays} days.` };
      const breaches = o.slaBreachCount === 0 ? '' : ` (${plural(o.slaBreachCount, 'earlier run')} breached it)`;
      return {
        outcome: 'pass',
        summary: `${plural(o.okCount, 'chaos run')} ended ok in the last ${o.maxAgeDays} days${breaches}. ${which} recovered in ${seconds(last.observedRecoverySec ?? 0)}, within its objective of ${seconds(last.recoverySloSec)}.`,
      };
    },
  }),
  'federation-region-parity': define({
    title: 'Every region reports the same digests',
    evidencePath: '{v1}/empire/region-slo',
    observed: RegionParity,
    evaluate(o) {
      if ('available' in o) return { outcome: 'n/a', summary: `Not applicable: ${o.reason}` };
      if (o.migrationParity === 'drifted') {
        const names = o.drifted.map((d) => `${d.regionKey} (${d.migrationDigest.slice(0, 12)})`);
        return { outcome: 'fail', summary: `The regions' migration digests differ: ${names.length > 0 ? names.join(', ') : 'no detail'}. Bring every region to the same migrations.` };
      }
      if (o.failedCount > 0) {
        const names = o.failed.map((f) => `${f.region} (${f.reason})`);
        return {
          outcome: 'manual-review',
          summary: `The ${plural(o.participatingCount, 'region')} that answered agree, but ${plural(o.failedCount, 'region')} could not be asked: ${listed(names, o.failedCount)}. An operator must confirm their parity.`,
        };
      }
      return {
        outcome: 'pass',
        summary: o.participatingCount <= 1 ? `Only this region (${o.currentRegion}) is active: there is no other region to differ from.` : `All ${o.participatingCount} active regions report the same migration digest.`,
      };
    },
  }),
  'subprocessors-reviewed': define({
    title: 'Every subprocessor in use was reviewed in the last 12 months',
    evidencePath: '{v1}/compliance/subprocessors',
    observed: SubprocessorsReviewed,
    evaluate(o) {
      if (o.inUse === 0) {
        return { outcome: 'manual-review', summary: 'No subprocessor is registered: register those the service uses (POST {v1}/compliance/subprocessors), or confirm it uses none.' };
      }
      if (o.unreviewedCount === 0) return { outcome: 'pass', summary: `${o.inUse === 1 ? 'The one subprocessor in use was' : `All ${o.inUse} subprocessors in use were`} reviewed in the last ${o.maxAgeDays} days.` };
      const names = o.unreviewed.map((s) => (s.lastReviewedAt === null ? `${s.name} (never)` : `${s.name} (${s.lastReviewedAt.slice(0, 10)})`));
      return { outcome: 'fail', summary: `${plural(o.unreviewedCount, 'subprocessor')} of ${o.inUse} not reviewed in the last ${o.maxAgeDays} days: ${listed(names, o.unreviewedCount)}.` };
    },
  }),
  'cost-overruns-acknowledged': define({
    title: 'No cost budget overrun stands unacknowledged',
    evidencePath: '{v1}/cost/alerts?status=open',
    observed: CostOverruns,
    evaluate(o) {
      if (o.openCount === 0) return { outcome: 'pass', summary: 'No cost alert at or over 100% of its budget is open.' };
      const names = o.open.map((a) => `${a.scope} ${a.scopeKey} ${a.monthBucket} at ${a.thresholdPct}%`);
      return { outcome: 'fail', summary: `${plural(o.openCount, 'cost alert')} at or over 100% of budget not acknowledged: ${listed(names, o.openCount)}.` };
    },
  }),
  'restore-verified-7d': recency(
    'A backup was restored and verified in the last 7 days',
    '{v1}/backups/ladder',
    'restore verification',
    'Run POST {v1}/backups/verify, or let the nightly backup-verify job run.',
  ),
  'failover-drill-90d': recency('A failover drill ended ok in the last 90 days', '{v1}/backups/drills', 'region failover drill', 'Run POST {v1}/backups/drills/run.'),
  'signed-events-required': define({
    title: 'Signed events are required for every toolset with keys',
    evidencePath: '{v1}/provenance/keys?status=active',
    observed: SignedEvents,
    evaluate(o) {
      if (o.toolsetsWithKeys === 0) return { outcome: 'n/a', summary: 'Not applicable: no toolset has an active signing key.' };
      if (o.requireSignedGlobally) return { outcome: 'pass', summary: 'OBSERVATORY_REQUIRE_SIGNED_EVENTS=1: unsigned events of every toolset are refused.' };
      if (o.admittingUnsigned === 0) return { outcome: 'pass', summary: `${o.toolsetsWithKeys === 1 ? 'The one toolset with a signing key refuses' : `All ${o.toolsetsWithKeys} toolsets with signing keys refuse`} unsigned events.` };
      return {
        outcome: 'fail',
        summary: `${plural(o.admittingUnsigned, 'toolset')} with a signing key still admit unsigned events in compatibility mode: ${listed(o.admittingUnsignedListed, o.admittingUnsigned)}. Set their policy to require signed events.`,
      };
    },
  }),
} as const;

export type PredicateKey = keyof typeof PREDICATES;
export const PREDICATE_KEYS = Object.keys(PREDICATES) as PredicateKey[];
export const isPredicateKey = (key: string): key is PredicateKey => Object.hasOwn(PREDICATES, key);

/**
 * Decides an outcome from an observed payload. A payload that is not the shape the predicate
 * reads (an override's free-form `observed`, a row edited by hand) cannot be decided: manual-review.
 */
export function evaluatePredicate(key: string, observed: unknown): Verdict {
  if (!isPredicateKey(key)) return { outcome: 'manual-review', summary: `The predicate ${key} is not one this version ships; an operator must decide.` };
  const predicate = PREDICATES[key] as PredicateDefinition<TSchema>;
  if (!Value.Check(predicate.observed, observed)) {
    return { outcome: 'manual-review', summary: `The observed payload is not the input predicate ${key} reads; an operator must decide.` };
  }
  return predicate.evaluate(observed);
}
