import { Type } from '@sinclair/typebox';
import { LONG_WORK_TIMEOUT_MS, defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { type CrossToolsetService, DATABASE_PATTERN, MAX_TOOLSETS, TOOLSET_PATTERN } from './service.ts';

/** Cross-toolset restore (spec B group 5, D7; docs/backups.md, "Cross-toolset restore"). */

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

const who = (principal: Principal | null) => principal as Principal;

export function crossToolsetEndpoints(service: CrossToolsetService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getCrossToolsetRestore',
      title: 'Cross-toolset restore status',
      description:
        'Asks every registered toolset\'s bridge-gated verify endpoint at once (header X-Observatory-Bridge, OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS each) and lists one row per toolset. A toolset that fails, times out or answers something else is an `error` row with errorText, never a failed call. overall: unknown with no toolsets, red with any error, yellow with any drift or skipped, green when all are ok. Drift and error rows are listed only: no drift inbox exists yet to open events in. Operator-only.',
      method: 'GET',
      path: `${V1}/backups/cross-toolset`,
      // A dump or a restore of the whole database: minutes on a large one (docs/backups.md).
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/backups/cross-toolset',
      response: {
        schemaId: 'svc-cross-toolset-restore.v1',
        fields: {
          totalToolsets: Type.Integer({ minimum: 0 }),
          overall: StringEnum(['green', 'red', 'unknown', 'yellow'] as const),
          counts: Type.Object({ ok: Type.Integer(), drift: Type.Integer(), error: Type.Integer(), skipped: Type.Integer() }),
          rows: Type.Array(
            Type.Object({
              toolset: Type.String(),
              database: Type.String(),
              vercelProject: Nullable(Type.String()),
              outcome: RowOutcome,
              latestSnapshotAt: Nullable(IsoDate),
              lastVerifiedAt: Nullable(IsoDate),
              errorText: Nullable(Type.String()),
              badge: Badge,
            }),
          ),
        },
      },
      example: {
        schema: 'svc-cross-toolset-restore.v1',
        generatedAt,
        totalToolsets: 2,
        overall: 'red',
        counts: { ok: 1, drift: 0, error: 1, skipped: 0 },
        rows: [
          {
            toolset: 'crawler-lab',
            database: 'crawler_lab',
            vercelProject: 'crawler-lab-web',
            outcome: 'ok',
            latestSnapshotAt: '2026-11-24T02:30:00.000Z',
            lastVerifiedAt: '2026-11-24T07:59:58.000Z',
            errorText: null,
            badge: 'green',
          },
          {
            toolset: 'lure-forge',
            database: 'lure_forge',
            vercelProject: null,
            outcome: 'error',
            latestSnapshotAt: null,
            lastVerifiedAt: null,
            errorText: 'timed out after 5000 ms',
            badge: 'red',
          },
        ],
      },
      handler: async () => service.view(),
    }),
    defineEndpoint({
      id: 'listBackupToolsets',
      title: 'List the toolsets of the cross-toolset restore view',
      description: 'The registered toolsets, by name.',
      method: 'GET',
      path: `${V1}/backups/toolsets`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: '/backups/cross-toolset',
      response: { schemaId: 'svc-backup-toolsets.v1', fields: { toolsets: Type.Array(Toolset) } },
      example: { schema: 'svc-backup-toolsets.v1', generatedAt, toolsets: [exampleToolset] },
      handler: async () => service.listToolsets(),
    }),
    defineEndpoint({
      id: 'putBackupToolset',
      title: 'Register a toolset for the cross-toolset restore view',
      description: `Registers (or replaces) a toolset's bridge-gated verify endpoint. The URL must pass the outbound policy (http or https, an allowed port, a public address unless OBSERVATORY_ALLOW_PRIVATE_OUTBOUND) be https unless private outbound is allowed, and name a host listed in OBSERVATORY_BRIDGE_PEER_HOSTS: the bridge token is sent to it. At most ${MAX_TOOLSETS} toolsets (409 beyond). Audited as backup.toolset-register.`,
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
        'What a peer\'s cross-toolset view asks (spec D7): restores this deployment\'s newest snapshot into a scratch database now and answers the outcome (`skipped` when no snapshot exists yet). Accepts the bridge credential, header X-Observatory-Bridge with OBSERVATORY_BRIDGE_TOKEN (a wrong or missing token is 401; with no token configured, bridge calls are refused), as well as an operator credential. `database`, when given, must be this deployment\'s database (404 otherwise).',
      method: 'POST',
      path: `${V1}/backups/bridge/verify`,
      // A dump or a restore of the whole database: minutes on a large one (docs/backups.md).
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      bridge: true,
      tag: TAG,
      kind: 'write',
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
      handler: async ({ body, principal, requestId }) => service.verifyOwn({ principal: who(principal), requestId }, body.database),
    }),
  ];
}
