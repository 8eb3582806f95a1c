import { Type } from '@sinclair/typebox';
import { LONG_WORK_TIMEOUT_MS, defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { PEER_REASON_NAMES } from './reasons.ts';
import { BRIDGE_VERIFY_PATH, type CrossToolsetService, DATABASE_PATTERN, MAX_TOOLSETS } from './service.ts';
import { TOOLSET_PATTERN } from '../../../platform/toolset-name.ts';

/** Cross-toolset restore (spec B group 5, D7; docs/backups/README.md, "Cross-toolset restore"). */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = 'backups';
const RowOutcome = StringEnum(['ok', 'drift', 'error', 'skipped'] as const);
const Badge = StringEnum(['green', 'yellow', 'red'] as const);

const Toolset = Type.Object({
  toolset: Type.String(),
  verifyUrl: Type.String({ description: 'The toolset\'s bridge-gated verify endpoint.' }),
  database: Type.String({ description: 'The database the toolset is asked to verify.' }),
  vercelProject: Nullable(Type.String()),
  createdAt: IsoDate,
  updatedAt: IsoDate,
  updatedBy: Nullable(Type.String()),
});
const exampleToolset = {
  toolset: 'crawler-lab',
  verifyUrl: 'https://crawler-lab.example.com/api/observatory/v1/backups/bridge/verify',
  database: 'crawler_lab',
  vercelProject: 'crawler-lab-web',
  createdAt: generatedAt,
  updatedAt: generatedAt,
  updatedBy: 'alice',
};

const ToolsetParams = Type.Object(
  { toolset: Type.String({ pattern: TOOLSET_PATTERN, description: '3 to 128 characters: a letter, then letters, digits or -.' }) },
  { examples: [{ toolset: 'crawler-lab' }] },
);

const VerifyAnswerFields = {
  database: Type.String(),
  outcome: RowOutcome,
  latestSnapshotAt: Nullable(IsoDate),
  lastVerifiedAt: Nullable(IsoDate),
  errorText: Nullable(Type.String()),
  vercelProject: Nullable(Type.String()),
};

const Row = Type.Object({
  toolset: Type.String(),
  database: Type.String(),
  vercelProject: Nullable(Type.String()),
  outcome: RowOutcome,
  latestSnapshotAt: Nullable(IsoDate),
  lastVerifiedAt: Nullable(IsoDate),
  errorText: Nullable(Type.String({ description: 'The fixed sentence of `reason` (never the toolset\'s own words); null when ok.' })),
  badge: Badge,
  reason: Nullable(StringEnum(PEER_REASON_NAMES, { description: 'Why the row is not ok, from a fixed vocabulary (docs/backups/README.md, "The view"); null when ok.' })),
  checkedAt: Nullable(IsoDate),
});
const ViewFields = {
  totalToolsets: Type.Integer({ minimum: 0 }),
  overall: StringEnum(['green', 'red', 'unknown', 'yellow'] as const),
  counts: Type.Object({ ok: Type.Integer(), drift: Type.Integer(), error: Type.Integer(), skipped: Type.Integer() }),
  rows: Type.Array(Row),
};
const exampleRows = [
  {
    toolset: 'crawler-lab',
    database: 'crawler_lab',
    vercelProject: 'crawler-lab-web',
    outcome: 'ok',
    latestSnapshotAt: '2026-11-24T02:30:00.000Z',
    lastVerifiedAt: '2026-11-24T05:00:41.000Z',
    errorText: null,
    badge: 'green',
    reason: null,
    checkedAt: '2026-11-24T05:00:42.000Z',
  },
  {
    toolset: 'lure-forge',
    database: 'lure_forge',
    vercelProject: null,
    outcome: 'error',
    latestSnapshotAt: null,
    lastVerifiedAt: null,
    errorText: 'The toolset did not answer within OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS.',
    badge: 'red',
    reason: 'timeout',
    checkedAt: '2026-11-24T05:02:00.000Z',
  },
];

const who = (principal: Principal | null) => principal as Principal;

export function crossToolsetEndpoints(service: CrossToolsetService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getCrossToolsetRestore',
      title: 'Cross-toolset restore status',
      description:
        'One row per registered toolset: what its last check found (POST {v1}/backups/cross-toolset/verify, or the daily backup-cross-toolset-verify job). A read: it asks no toolset and writes nothing; a toolset not checked yet is `skipped` with reason `not-verified-yet`. `reason` and `errorText` come from a fixed vocabulary, never from the toolset. overall: unknown with no toolsets, red with any error, yellow with any drift or skipped, green when all are ok. A token bound to toolsets sees only its toolsets\' rows. Drift and error rows open trust drift events (kind integrity-mismatch, source cross-toolset-restore) at the next drift scan, which reads these stored rows.',
      method: 'GET',
      path: `${V1}/backups/cross-toolset`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/backups/cross-toolset',
      response: { schemaId: 'svc-cross-toolset-restore.v1', fields: ViewFields },
      example: { schema: 'svc-cross-toolset-restore.v1', generatedAt, totalToolsets: 2, overall: 'red', counts: { ok: 1, drift: 0, error: 1, skipped: 0 }, rows: exampleRows },
      handler: async ({ principal }) => service.view(principal),
    }),
    defineEndpoint({
      id: 'verifyCrossToolsetRestore',
      title: 'Check the registered toolsets\' backups now',
      description:
        'Asks the named toolset (`toolset`), or every registered one (`toolset` null or absent), through its bridge-gated verify endpoint whether its newest snapshot restores (header X-Observatory-Bridge; each ask bounded by OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS, all at once), stores what each answered and answers the rows as GET {v1}/backups/cross-toolset then shows them. Each toolset is asked at most once per OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC, counted from the end of its last ask: a named toolset asked more recently is 429 `rate-limited` with Retry-After; with every toolset such ones are listed under `throttled` and not asked. A toolset that fails, times out or answers something else is a row with a `reason`, never a failed call. Audited as backup.cross-toolset-verify. A token bound to toolsets may name one of its toolsets (another is 403) but not ask every toolset (403).',
      method: 'POST',
      path: `${V1}/backups/cross-toolset/verify`,
      // A toolset's answer includes a restore of its newest snapshot: minutes on a large one.
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/backups/cross-toolset',
      errors: [429],
      body: Type.Object(
        { toolset: Type.Optional(Nullable(Type.String({ pattern: TOOLSET_PATTERN, description: 'The toolset to ask; null or absent: every registered toolset.' }))) },
        { additionalProperties: false, examples: [{ toolset: null }] },
      ),
      response: {
        schemaId: 'svc-cross-toolset-verify.v1',
        fields: {
          ...ViewFields,
          asked: Type.Array(Type.String(), { description: 'The toolsets asked now.' }),
          throttled: Type.Array(Type.Object({ toolset: Type.String(), retryAfterSec: Type.Integer({ minimum: 1 }) }), {
            description: 'Toolsets not asked: asked less than OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC ago; their rows are the last check\'s.',
          }),
        },
      },
      example: {
        schema: 'svc-cross-toolset-verify.v1',
        generatedAt,
        totalToolsets: 2,
        overall: 'red',
        counts: { ok: 1, drift: 0, error: 1, skipped: 0 },
        rows: exampleRows,
        asked: ['lure-forge'],
        throttled: [{ toolset: 'crawler-lab', retryAfterSec: 420 }],
      },
      handler: async ({ body, principal, requestId }) => service.verify({ principal: who(principal), requestId }, body.toolset ?? null),
    }),
    defineEndpoint({
      id: 'listBackupToolsets',
      title: 'List the toolsets of the cross-toolset restore view',
      description: 'The registered toolsets, by name; a token bound to toolsets sees only its own.',
      method: 'GET',
      path: `${V1}/backups/toolsets`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/backups/cross-toolset',
      response: { schemaId: 'svc-backup-toolsets.v1', fields: { toolsets: Type.Array(Toolset) } },
      example: { schema: 'svc-backup-toolsets.v1', generatedAt, toolsets: [exampleToolset] },
      handler: async ({ principal }) => service.listToolsets(principal),
    }),
    defineEndpoint({
      id: 'putBackupToolset',
      title: 'Register a toolset for the cross-toolset restore view',
      description: `Registers (or replaces) a toolset's bridge-gated verify endpoint. The URL must pass the outbound policy (http or https, an allowed port, a public address unless OBSERVATORY_ALLOW_PRIVATE_OUTBOUND), be https unless private outbound is allowed, name a host listed in OBSERVATORY_BRIDGE_PEER_HOSTS and be a bridge verify endpoint (its path ending in ${BRIDGE_VERIFY_PATH}, no query or fragment): the bridge token is sent to it and nowhere else. Replacing the URL or database clears the last check. At most ${MAX_TOOLSETS} toolsets (409 beyond). Audited as backup.toolset-register.`,
      method: 'PUT',
      path: `${V1}/backups/toolsets/{toolset}`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/backups/cross-toolset',
      errors: [409],
      params: ToolsetParams,
      body: Type.Object(
        {
          verifyUrl: Type.String({ minLength: 8, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'The toolset\'s bridge-gated verify endpoint.' }),
          database: Type.String({ pattern: DATABASE_PATTERN, description: '1 to 128 of A-Z, a-z, 0-9, _, . and -.' }),
          vercelProject: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 128 }))),
        },
        {
          additionalProperties: false,
          examples: [{ verifyUrl: 'https://crawler-lab.example.com/api/observatory/v1/backups/bridge/verify', database: 'crawler_lab', vercelProject: 'crawler-lab-web' }],
        },
      ),
      response: { schemaId: 'svc-backup-toolset.v1', fields: { ok: Type.Literal(true), created: Type.Boolean(), toolset: Toolset } },
      example: { schema: 'svc-backup-toolset.v1', generatedAt, ok: true, created: true, toolset: exampleToolset },
      handler: async ({ params, body, principal, requestId }) => service.register({ principal: who(principal), requestId }, params.toolset, body),
    }),
    defineEndpoint({
      id: 'deleteBackupToolset',
      title: 'Remove a toolset from the cross-toolset restore view',
      description: 'Removes the registration; 404 when none exists. Audited as backup.toolset-remove.',
      method: 'DELETE',
      path: `${V1}/backups/toolsets/{toolset}`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: '/backups/cross-toolset',
      params: ToolsetParams,
      response: { schemaId: 'svc-backup-toolset-delete.v1', fields: { ok: Type.Literal(true), toolset: Toolset } },
      example: { schema: 'svc-backup-toolset-delete.v1', generatedAt, ok: true, toolset: exampleToolset },
      handler: async ({ params, principal, requestId }) => service.remove({ principal: who(principal), requestId }, params.toolset),
    }),
    defineEndpoint({
      id: 'bridgeVerifyBackup',
      title: 'Verify this deployment\'s newest snapshot (bridge)',
      description:
        'What a peer\'s cross-toolset check asks (spec D7): restores this deployment\'s newest snapshot into a scratch database now and answers the outcome (`skipped` when no snapshot exists yet); recorded as a verification with trigger `bridge`. At most once per OBSERVATORY_BRIDGE_MIN_INTERVAL_SEC after the last such verification: sooner is 429 `rate-limited` with Retry-After. 409 `conflict` while another snapshot or verification runs on this deployment; concurrent calls to one instance share one restore. Accepts the bridge credential, header X-Observatory-Bridge with OBSERVATORY_BRIDGE_TOKEN (a wrong or missing token is 401; with no token configured, bridge calls are refused), as well as an operator credential (a token bound to toolsets is refused: 403). `database`, when given, must be this deployment\'s database (404 otherwise).',
      method: 'POST',
      path: `${V1}/backups/bridge/verify`,
      // A dump or a restore of the whole database: minutes on a large one (docs/backups/README.md).
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      bridge: true,
      tag: TAG,
      kind: 'write',
      errors: [409, 429],
      body: Type.Object(
        { database: Type.Optional(Type.String({ pattern: DATABASE_PATTERN, description: 'The database the caller expects; this deployment\'s own when absent.' })) },
        { examples: [{ database: 'observatory' }] },
      ),
      response: { schemaId: 'svc-backup-bridge-verify.v1', fields: VerifyAnswerFields },
      example: {
        schema: 'svc-backup-bridge-verify.v1',
        generatedAt,
        database: 'observatory',
        outcome: 'ok',
        latestSnapshotAt: '2026-11-24T02:30:00.000Z',
        lastVerifiedAt: '2026-11-24T08:00:00.000Z',
        errorText: null,
        vercelProject: null,
      },
      spansEveryToolset: 'a restore verification of this deployment',
      handler: async ({ body, principal, requestId }) => service.verifyOwn({ principal: who(principal), requestId }, body.database),
    }),
  ];
}
