import { Type } from '@sinclair/typebox';
import { LONG_WORK_TIMEOUT_MS, defineEndpoint, EmptyBody, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { type DrillService, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_WEEKS_DEFAULT, LIST_WEEKS_MAX } from './service.ts';

/** Region failover drills (spec B group 5; docs/backups/README.md, "Failover drills"). */

const generatedAt = '2026-11-23T04:00:09.000Z';
const TAG = 'backups';
const Outcome = StringEnum(['ok', 'drift', 'error'] as const);

export const Drill = Type.Object({
  id: Type.String({ format: 'uuid' }),
  region: Type.String({ description: 'OBSERVATORY_REGION of the deployment that ran the drill.' }),
  trigger: StringEnum(['schedule', 'manual'] as const, { description: '`schedule`: the weekly job; `manual`: drills/run or the job run on demand.' }),
  actor: Nullable(Type.String({ description: 'The operator who ran it by hand; null for jobs.' })),
  startedAt: IsoDate,
  endedAt: Nullable(IsoDate),
  outcome: Nullable(StringEnum(['ok', 'drift', 'error'] as const, { description: 'null while the drill is running.' })),
  errorText: Nullable(Type.String({ description: 'Why the drill is not ok (every reason, `; `-separated); null when ok.' })),
  observedBadge: Nullable(StringEnum(['green', 'yellow', 'red'] as const, { description: 'The badge observed when the drill ended; null while running.' })),
  badgeSource: StringEnum(['drill'] as const, {
    description: '`drill`: no trust snapshot exists yet, so the badge is the drill\'s own (green ok, yellow drift, red error).',
  }),
  federationLagSec: Nullable(Type.Number({ description: 'null: not measured; `unmeasured` says why (the drill does not ask the other regions).' })),
  unmeasured: Type.Array(Type.String(), { description: '`field: reason` for each measurement the drill could not take.' }),
  database: Nullable(Type.String()),
  snapshotId: Nullable(Type.String({ description: 'The snapshot restored.' })),
  snapshotTaken: Nullable(Type.Boolean({ description: 'true when the drill took that snapshot itself (none existed, or the newest was older than the data-loss target).' })),
  snapshotTakenAt: Nullable(IsoDate),
  verificationId: Nullable(Type.String({ description: 'The restore verification (backups/ladder) the drill ran.' })),
  verificationOutcome: Nullable(Outcome),
  recoverySec: Nullable(Type.Number({ description: 'Seconds the restore into a scratch database took.' })),
  dataLossWindowSec: Nullable(Type.Number({ description: 'Seconds between the newest snapshot that existed when the drill started and the start.' })),
  dataLossTargetSec: Nullable(Type.Number({ description: 'OBSERVATORY_DRILL_DATA_LOSS_TARGET_SEC when the drill ran.' })),
  writeRoundTripMs: Nullable(Type.Number({ description: 'A write and read-back on the live database.' })),
  resolvedDrillIds: Type.Array(Type.String({ format: 'uuid' }), { description: 'Error drills of the region this ok drill resolved.' }),
  resolvedAt: Nullable(IsoDate),
  resolvedBy: Nullable(Type.String({ description: 'The operator, or `drill:<id>` of the later ok drill.' })),
  resolveNote: Nullable(Type.String()),
});

export const exampleDrill = {
  id: '5b0f8f4e-2f59-4d8e-9d6b-0f3a51c2e7a1',
  region: 'eu-west',
  trigger: 'schedule',
  actor: null,
  startedAt: '2026-11-23T04:00:00.000Z',
  endedAt: '2026-11-23T04:00:08.412Z',
  outcome: 'ok',
  errorText: null,
  observedBadge: 'green',
  badgeSource: 'drill',
  federationLagSec: null,
  unmeasured: ['federationLagSec: the drill rehearses the restore of this deployment only and does not ask the other regions, so no lag was measured'],
  database: 'observatory',
  snapshotId: '9d1c7a52-6e0b-4c3f-a8d2-3b4e5f6a7b8c',
  snapshotTaken: false,
  snapshotTakenAt: '2026-11-23T02:30:00.000Z',
  verificationId: 'c2d3e4f5-a6b7-4c8d-9e0f-1a2b3c4d5e6f',
  verificationOutcome: 'ok',
  recoverySec: 7.9,
  dataLossWindowSec: 5400,
  dataLossTargetSec: 93600,
  writeRoundTripMs: 1.7,
  resolvedDrillIds: [],
  resolvedAt: null,
  resolvedBy: null,
  resolveNote: null,
};

const who = (principal: Principal | null) => principal as Principal;

export function drillEndpoints(drills: DrillService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listRegionFailoverDrills',
      title: 'List region failover drills',
      description:
        'Drills that started in the last `weeks` weeks (default 12), newest first, running ones included (outcome null). A weekly job creates them on Monday 04:00 UTC; drills/run runs one by hand. A token bound to toolsets is refused (403): a drill covers every toolset.',
      method: 'GET',
      path: `${V1}/backups/drills`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/backups/drills',
      query: Type.Object(
        {
          weeks: Type.Optional(Type.Integer({ minimum: 1, maximum: LIST_WEEKS_MAX, default: LIST_WEEKS_DEFAULT, description: `Weeks back from now, 1 to ${LIST_WEEKS_MAX}.` })),
          limit: PageLimitParam(LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX),
        },
        { examples: [{ weeks: 4, limit: 20 }] },
      ),
      response: { schemaId: 'svc-region-failover-drill-list.v1', fields: { drills: Type.Array(Drill) } },
      example: { schema: 'svc-region-failover-drill-list.v1', generatedAt, drills: [exampleDrill] },
      spansEveryToolset: 'the failover drill list',
      handler: async ({ query }) => drills.list(query),
    }),
    defineEndpoint({
      id: 'runRegionFailoverDrill',
      title: 'Run a region failover drill now',
      description:
        'Runs the same orchestrator as the weekly job: restores the newest snapshot into a scratch database, measures recovery time and the data-loss window, checks a live write, and records the drill as an audit fact. Refused with 200 `skipped` true and `skipReason` while an unresolved error drill of this region from the last 24 hours exists, or while another drill is running. Waits for a backup snapshot or verification in progress to end (one runs at a time). Audited as backup.drill-run. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/backups/drills/run`,
      // A dump or a restore of the whole database: minutes on a large one (docs/backups/README.md).
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/backups/drills',
      body: EmptyBody,
      response: {
        schemaId: 'svc-region-failover-drill.v1',
        fields: { skipped: Type.Boolean(), skipReason: Nullable(Type.String()), drill: Nullable(Drill) },
      },
      example: { schema: 'svc-region-failover-drill.v1', generatedAt, skipped: false, skipReason: null, drill: { ...exampleDrill, trigger: 'manual', actor: 'alice' } },
      spansEveryToolset: 'a failover drill',
      handler: async ({ principal, requestId }) => drills.run({ trigger: 'manual', ctx: { principal: who(principal), requestId } }),
    }),
    defineEndpoint({
      id: 'resolveRegionFailoverDrill',
      title: 'Resolve an error drill',
      description:
        'Marks an error drill resolved with a note, which lifts the 24-hour refusal of drills/run. 404 for an unknown drill; 409 when the drill is not an error drill or was already resolved (a later ok drill of the region resolves it too). Audited as backup.drill-resolve. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/backups/drills/{id}/resolve`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/backups/drills',
      errors: [409],
      params: Type.Object({ id: Type.String({ maxLength: 64 }) }, { examples: [{ id: '5b0f8f4e-2f59-4d8e-9d6b-0f3a51c2e7a1' }] }),
      body: Type.Object(
        { note: Type.String({ minLength: 1, maxLength: 2000, description: 'What was found and done.' }) },
        { additionalProperties: false, examples: [{ note: 'Snapshot bucket permissions fixed; restore re-run by hand.' }] },
      ),
      response: { schemaId: 'svc-region-failover-drill-resolve.v1', fields: { ok: Type.Literal(true), drill: Drill } },
      example: {
        schema: 'svc-region-failover-drill-resolve.v1',
        generatedAt,
        ok: true,
        drill: {
          ...exampleDrill,
          outcome: 'error',
          observedBadge: 'red',
          errorText: 'restore of snapshot 9d1c7a52-6e0b-4c3f-a8d2-3b4e5f6a7b8c failed: snapshot file missing',
          verificationOutcome: 'error',
          recoverySec: null,
          resolvedAt: '2026-11-23T09:12:00.000Z',
          resolvedBy: 'alice',
          resolveNote: 'Snapshot bucket permissions fixed; restore re-run by hand.',
        },
      },
      spansEveryToolset: 'a failover drill',
      handler: async ({ params, body, principal, requestId }) => drills.resolve({ principal: who(principal), requestId }, params.id, body.note),
    }),
  ];
}
