import { type Static, Type } from '@sinclair/typebox';
import { IsoDate, Nullable, V1 } from './http/registry.ts';

/**
 * How fresh an answer is (docs/operations.md, "How fresh is an answer"). A read served from data a
 * job or applier derives (the knowledge graph, the analytics warehouse, alert evaluations, …)
 * carries one `freshness` object in its envelope, computed from what that producer recorded: the
 * instant up to which source data is in the answer, never a guess. One shape for every domain.
 *
 * It holds only what the producer recorded, nothing relative to the moment of the answer (the lag
 * is `generatedAt` − `asOf`, the next run follows from `schedule`): an answer stays a function of
 * the stored state apart from `generatedAt`, as `analytics/query` promises.
 */

export const FRESHNESS_DESCRIPTION =
  'How fresh the answer is (docs/operations.md, "How fresh is an answer"): source data up to `asOf` is included; what arrived later waits for `producer`.';

export const Freshness = Type.Object(
  {
    asOf: Nullable({
      ...IsoDate,
      description:
        'Source data received up to this instant is included in the answer; the lag is `generatedAt` − `asOf`. null when the producer has not produced it yet (`reason` says why): the answer then includes none of it.',
    }),
    producer: Type.String({
      description: 'What brings the answer up to date: a job name (`graph-materialise`, `analytics-rollup`, `alert-evaluate`, …), or `read` when the read itself includes everything acknowledged before it.',
    }),
    schedule: Nullable(Type.String({ description: "The producer job's UTC cron expression; null for `read` or a job run only on demand." })),
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

/** The call that runs a job now (`POST {v1}/ops/jobs/{job}/run`). */
export const runJobCall = (job: string) => `POST ${V1}/ops/jobs/${job}/run`;

/**
 * The freshness of an answer derived by `producer` up to `asOf` (what it recorded: a watermark, a
 * materialisation instant, an evaluation bound). `asOf` null needs a `reason`: the answer includes
 * nothing the producer has not yet produced, and says so rather than pretending.
 */
export function freshnessOf(producer: Producer, asOf: Date | null, reason: string | null = null): Freshness {
  if (asOf === null && reason === null) throw new Error(`freshness of ${producer.job}: an unknown asOf needs a reason`);
  return {
    asOf: asOf?.toISOString() ?? null,
    producer: producer.job,
    schedule: producer.schedule,
    refresh: runJobCall(producer.job),
    reason: asOf === null ? reason : null,
  };
}

/** An answer computed at read time from everything acknowledged before it: as of `now`, no lag. */
export function freshAtRead(now: Date): Freshness {
  return { asOf: now.toISOString(), producer: 'read', schedule: null, refresh: null, reason: null };
}

/** The example value an endpoint's manifest example carries. */
export function exampleFreshness(producer: Producer, asOf: string): Freshness {
  return freshnessOf(producer, new Date(asOf));
}
