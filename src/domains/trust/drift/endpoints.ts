import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { DRIFT_KINDS, DRIFT_SEVERITIES, DRIFT_STATUSES, LIST_STATUSES, RESOLVE_STATUSES } from './kinds.ts';
import { type DriftEventView, type DriftService, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, NOTES_MAX, SINCE_HOURS_MAX } from './service.ts';

/** The drift inbox (spec B group 3 `trust/drift` rows; docs/federation/README.md, "Drift inbox and detectors"). */

const generatedAt = '2026-11-28T07:05:00.000Z';
export const TRUST_TAG = 'trust';
const UI_PATH = '/trust/drift';
/** Completes "… spans every toolset" (docs/operations.md, "Toolset binding"). */
export const DRIFT_SPANS = 'the drift inbox, whose detectors read every toolset\'s data';

export const DriftEvent = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: StringEnum(DRIFT_KINDS),
  source: Type.String({ description: 'What the detector looked at (docs/federation/README.md lists the sources of each kind).' }),
  sourceId: Type.String({ description: 'The thing in it: with kind and source, the slot one open event holds at a time.' }),
  description: Type.String(),
  severity: StringEnum(DRIFT_SEVERITIES),
  status: StringEnum(DRIFT_STATUSES),
  openedAt: IsoDate,
  acknowledgedAt: Nullable(IsoDate),
  resolvedAt: Nullable(IsoDate),
  resolvedBy: Nullable(Type.String({ description: 'The operator\'s username, or `job` when the drift-remediate job auto-resolved it.' })),
  resolutionNotes: Type.String(),
  payload: Type.Unknown({ description: 'What the detector found (JSON).' }),
});

const exampleEvent: DriftEventView = {
  id: '3d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a',
  kind: 'integrity-mismatch',
  source: 'restore-verification',
  sourceId: 'observatory',
  description: 'The newest restore verification of observatory (2026-11-28T03:30:41.000Z, snapshot 9d1c7a52-6e0b-4c3f-a8d2-3b4e5f6a7b8c) found the restored data differs from the snapshot in honeypot_events.',
  severity: 'critical',
  status: 'open',
  openedAt: '2026-11-28T07:00:00.000Z',
  acknowledgedAt: null,
  resolvedAt: null,
  resolvedBy: null,
  resolutionNotes: '',
  payload: { verificationId: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d', database: 'observatory', snapshotId: '9d1c7a52-6e0b-4c3f-a8d2-3b4e5f6a7b8c', outcome: 'drift', driftTables: ['honeypot_events'] },
};
const exampleAcked: DriftEventView = { ...exampleEvent, status: 'acknowledged', acknowledgedAt: '2026-11-28T07:03:10.000Z' };
const exampleResolved: DriftEventView = {
  ...exampleAcked,
  status: 'wont-fix',
  resolvedAt: '2026-11-28T07:04:55.000Z',
  resolvedBy: 'admin',
  resolutionNotes: 'The lab database is restored from a reduced snapshot on purpose.',
};

const EventId = Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: exampleEvent.id }] });
const who = (principal: Principal | null) => principal as Principal;
const Notes = Type.String({ maxLength: NOTES_MAX, description: `Free text, at most ${NOTES_MAX} characters.` });

export function driftEndpoints(drift: DriftService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listTrustDrift',
      title: 'List trust drift events',
      description:
        `Drift events newest first, of one status (\`open\` by default; \`acknowledged\`, \`resolved\`, \`auto-resolved\`, \`wont-fix\`, or \`all\`), of one kind when \`kind\` is given, opened in the last \`sinceHours\` hours (a whole number from 1 to ${SINCE_HOURS_MAX}; default unlimited). ` +
        `\`limit\` 1 to ${LIST_LIMIT_MAX}, default ${LIST_LIMIT_DEFAULT}. \`filter\` echoes what was applied. A read: it runs no detector. A token bound to toolsets is refused (403).`,
      method: 'GET',
      path: `${V1}/trust/drift`,
      auth: 'session-or-bearer',
      spansEveryToolset: DRIFT_SPANS,
      scope: 'read:empire',
      tag: TRUST_TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          status: Type.Optional(StringEnum(LIST_STATUSES, { description: 'Default `open`.' })),
          kind: Type.Optional(StringEnum(DRIFT_KINDS)),
          limit: Type.Optional(Type.String({ maxLength: 4, description: `A whole number from 1 to ${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT}.` })),
          sinceHours: Type.Optional(Type.String({ maxLength: 6, description: `Events opened in the last this many hours: a whole number from 1 to ${SINCE_HOURS_MAX}; default unlimited.` })),
        },
        { examples: [{ status: 'all', kind: 'integrity-mismatch', limit: '50', sinceHours: '168' }] },
      ),
      response: {
        schemaId: 'svc-trust-drift-list.v1',
        fields: {
          filter: Type.Object({
            status: StringEnum(LIST_STATUSES),
            kind: Nullable(StringEnum(DRIFT_KINDS)),
            limit: Type.Integer({ minimum: 1, maximum: LIST_LIMIT_MAX }),
            sinceHours: Nullable(Type.Integer({ minimum: 1 })),
          }),
          events: Type.Array(DriftEvent),
        },
      },
      example: { schema: 'svc-trust-drift-list.v1', generatedAt, filter: { status: 'all', kind: 'integrity-mismatch', limit: 50, sinceHours: 168 }, events: [exampleResolved] },
      handler: async ({ query }) => drift.list(query),
    }),
    defineEndpoint({
      id: 'autoOpenTrustDrift',
      title: 'Scan for drift now',
      description:
        'Runs the five detectors (graph-drift, replay-drift, region-parity, compliance-fail, integrity-mismatch; docs/federation/README.md) now, as the drift-auto-open job does every 5 minutes, and opens an event for each breach whose (kind, source, sourceId) slot holds no open and no acknowledged event: scanning an unchanged system opens nothing. ' +
        '`openedNow` lists the events opened; `alreadyOpen` counts breaches whose slot was held; `acceptedWontFix` counts breaches whose slot\'s latest event is wont-fix and has not been seen clear since (an accepted divergence reopens only after it cleared and returned); `detectorErrors` names each detector that could not tell (its kind is left alone). Opening is audited as `trust.drift-auto-open` and each event chained as a drift fact. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/trust/drift`,
      auth: 'session-or-bearer',
      spansEveryToolset: DRIFT_SPANS,
      scope: 'write:alerts',
      tag: TRUST_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      // A graph replay and a region fan-out among the detectors, each bounded by its own deadline.
      timeoutMs: 300_000,
      body: Type.Object({ action: Type.Literal('auto-open') }, { additionalProperties: false, examples: [{ action: 'auto-open' }] }),
      response: {
        schemaId: 'svc-trust-drift-auto-open.v1',
        fields: {
          scannedAt: IsoDate,
          openedNow: Type.Array(DriftEvent),
          alreadyOpen: Type.Integer({ minimum: 0 }),
          acceptedWontFix: Type.Integer({ minimum: 0 }),
          detectorErrors: Type.Array(Type.Object({ detector: StringEnum(DRIFT_KINDS), error: Type.String() })),
        },
      },
      example: {
        schema: 'svc-trust-drift-auto-open.v1',
        generatedAt,
        scannedAt: '2026-11-28T07:00:00.000Z',
        openedNow: [exampleEvent],
        alreadyOpen: 2,
        acceptedWontFix: 0,
        detectorErrors: [{ detector: 'region-parity', error: 'federation across regions is not part of this deployment, so region digests cannot be compared' }],
      },
      handler: async ({ principal, requestId }) => drift.autoOpen({ call: { principal: who(principal), requestId } }),
    }),
    defineEndpoint({
      id: 'acknowledgeTrustDrift',
      title: 'Acknowledge a drift event',
      description:
        'open → acknowledged, stamping acknowledgedAt; the slot is released in the table, but the scan opens no new event for it while this one is acknowledged and the drift persists (once drift-remediate auto-resolves it, a return opens a new event). ' +
        'On an acknowledged event: 200 with the event unchanged, nothing written. A resolved, auto-resolved or wont-fix event is 409 `conflict`; an unknown id 404. `notes` are kept in the audit record (`trust.drift-ack`) and the drift fact. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/trust/drift/{id}/ack`,
      auth: 'session-or-bearer',
      spansEveryToolset: DRIFT_SPANS,
      scope: 'write:alerts',
      tag: TRUST_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      params: EventId,
      body: Type.Object({ notes: Type.Optional(Notes) }, { additionalProperties: false, examples: [{ notes: 'Looking into the restore of honeypot_events.' }] }),
      errors: [409],
      response: { schemaId: 'svc-trust-drift-ack.v1', fields: { ok: Type.Literal(true), event: DriftEvent } },
      example: { schema: 'svc-trust-drift-ack.v1', generatedAt, ok: true, event: exampleAcked },
      handler: async ({ principal, params, body, requestId }) => drift.acknowledge({ principal: who(principal), requestId }, params.id, body),
    }),
    defineEndpoint({
      id: 'resolveTrustDrift',
      title: 'Resolve a drift event',
      description:
        'open or acknowledged → `status`: `resolved` (fixed by hand; the default when omitted), `auto-resolved` (cleared mechanically) or `wont-fix` (an expected divergence), stamping resolvedAt, resolvedBy (the caller\'s username) and resolutionNotes (`notes`). ' +
        'An event already resolved, auto-resolved or wont-fix is 409 `conflict`; an unknown id 404. Audited as `trust.drift-resolve` and chained as a drift fact. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/trust/drift/{id}/resolve`,
      auth: 'session-or-bearer',
      spansEveryToolset: DRIFT_SPANS,
      scope: 'write:alerts',
      tag: TRUST_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      params: EventId,
      body: Type.Object(
        { status: Type.Optional(StringEnum(RESOLVE_STATUSES, { description: 'Default `resolved`.' })), notes: Type.Optional(Notes) },
        { additionalProperties: false, examples: [{ status: 'wont-fix', notes: 'The lab database is restored from a reduced snapshot on purpose.' }] },
      ),
      errors: [409],
      response: { schemaId: 'svc-trust-drift-resolve.v1', fields: { ok: Type.Literal(true), event: DriftEvent } },
      example: { schema: 'svc-trust-drift-resolve.v1', generatedAt, ok: true, event: exampleResolved },
      handler: async ({ principal, params, body, requestId }) => drift.resolve({ principal: who(principal), requestId }, params.id, body),
    }),
  ];
}
