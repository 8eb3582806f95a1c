import { type Static, Type } from '@sinclair/typebox';
import { Cron } from 'croner';
import { IsoDate, Nullable, V1 } from './http/registry.ts';

/**
 * How fresh an answer is (docs/operations.md, "How fresh is an answer"). A read served from data a
 * job or applier derives (the knowledge graph, the analytics warehouse, alert evaluations, …)
 * carries one `freshness` object in its envelope, computed from what that producer recorded: the
 * instant up to which source data is in the answer, never a guess. One shape for every domain.
 */

export const FRESHNESS_DESCRIPTION =
  'How fresh the answer is (docs/operations.md, "How fresh is an answer"): source data up to `asOf` is included; what arrived later waits for `producer`.';

export const Freshness = Type.Object(
  {
    asOf: Nullable({
      ...IsoDate,
      description: 'Source data received up to this instant is included in the answer. null when the producer has not produced it yet (`reason` says why): the answer then includes none of it.',
    }),
    lagSec: Nullable(Type.Integer({ minimum: 0, description: 'Whole seconds from `asOf` to the answer (`generatedAt`); null with `asOf`.' })),
    producer: Type.String({
      description: 'What brings the answer up to date: a job name (`graph-materialise`, `analytics-rollup`, `alert-evaluate`, …), or `read` when the read itself includes everything acknowledged before it.',
    }),
    schedule: Nullable(Type.String({ description: "The producer job's UTC cron expression; null for `read` or a job run only on demand." })),
    nextRunAt: Nullable({ ...IsoDate, description: 'The next time the schedule fires (on whichever instance runs the scheduler); null without a schedule.' }),
    refresh: Nullable(Type.String({ description: 'The call that runs the producer now (needs `write:alerts`), e.g. `POST /api/observatory/v1/ops/jobs/graph-materialise/run`; null for `read`.' })),
    reason: Nullable(Type.String({ description: 'Why `asOf` is null (never produced, nothing to produce); null otherwise.' })),
  },
  { description: FRESHNESS_DESCRIPTION },
);
export type Freshness = Static<typeof Freshness>;

/** A job that produces derived data: its name and UTC cron (null: on demand only). */
export interface Producer {
  job: string;
  schedule: string | null;
}

/** Whole seconds from `asOf` to `now`, never negative (a clock set back reads 0). */
export function lagSecOf(asOf: Date, now: Date): number {
  return Math.max(0, Math.floor((now.getTime() - asOf.getTime()) / 1000));
}

/** The next fire time of a UTC cron expression strictly after `now`; null without one. */
export function nextFireAfter(schedule: string | null, now: Date): Date | null {
  if (schedule === null) return null;
  return new Cron(schedule, { timezone: 'UTC', paused: true }).nextRun(now) ?? null;
}

/** The call that runs a job now (`POST {v1}/ops/jobs/{job}/run`). */
export const runJobCall = (job: string) => `POST ${V1}/ops/jobs/${job}/run`;

/**
 * The freshness of an answer derived by `producer` up to `asOf` (what it recorded: a watermark, a
 * materialisation instant, an evaluation bound). `asOf` null needs a `reason`: the answer includes
 * nothing the producer has not yet produced, and says so rather than pretending.
 */
export function freshnessOf(producer: Producer, asOf: Date | null, now: Date, reason: string | null = null): Freshness {
  if (asOf === null && reason === null) throw new Error(`freshness of ${producer.job}: an unknown asOf needs a reason`);
  return {
    asOf: asOf?.toISOString() ?? null,
    lagSec: asOf === null ? null : lagSecOf(asOf, now),
    producer: producer.job,
    schedule: producer.schedule,
    nextRunAt: nextFireAfter(producer.schedule, now)?.toISOString() ?? null,
    refresh: runJobCall(producer.job),
    reason: asOf === null ? reason : null,
  };
}

/** An answer computed at read time from everything acknowledged before it: as of `now`, no lag. */
export function freshAtRead(now: Date): Freshness {
  return { asOf: now.toISOString(), lagSec: 0, producer: 'read', schedule: null, nextRunAt: null, refresh: null, reason: null };
}

/** The example value an endpoint's manifest example carries. */
export function exampleFreshness(producer: Producer, asOf: string, generatedAt: string): Freshness {
  return freshnessOf(producer, new Date(asOf), new Date(generatedAt));
}
