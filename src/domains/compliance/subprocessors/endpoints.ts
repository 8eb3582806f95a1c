import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { COMPLIANCE_TAG } from '../frameworks/endpoints.ts';
import {
  DATA_ACCESS_MAX,
  NAME_MAX,
  NOTES_MAX,
  REGION_MAX,
  SUBPROCESSOR_ACTIONS,
  SUBPROCESSOR_ROLES,
  SUBPROCESSORS_MAX,
  type SubprocessorService,
  type SubprocessorView,
  URL_MAX,
} from './service.ts';

/**
 * The subprocessor registry: list, upsert by name, review and archive. Subprocessors belong to no
 * toolset, so a token bound to toolsets is treated like any other (its scopes decide).
 * docs/compliance/README.md, "Subprocessors".
 */

const generatedAt = '2026-11-24T08:00:00.000Z';
const TAG = COMPLIANCE_TAG;
const UI_PATH = '/compliance/subprocessors';

const Role = StringEnum(SUBPROCESSOR_ROLES, { description: 'What the subprocessor does for the service.' });

const Subprocessor = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String({ description: 'Unique, compared ignoring case; stored trimmed, in the spelling of the latest upsert.' }),
  role: Role,
  dataAccess: Type.String({ description: 'What data it can reach; empty when not stated.' }),
  region: Type.String({ description: 'Where it processes the data; empty when not stated.' }),
  notes: Type.String(),
  websiteUrl: Nullable(Type.String()),
  contractUrl: Nullable(Type.String({ description: 'The data processing agreement or contract.' })),
  lastReviewedAt: Nullable({ ...IsoDate, description: 'When an operator last reviewed it (action `review`, or an upsert with `markReviewed`).' }),
  reviewerOperatorId: Nullable(Type.String({ description: 'The user id of the operator who last reviewed it.' })),
  archivedAt: Nullable({ ...IsoDate, description: 'When it was archived (no longer in use); null while in use.' }),
  createdAt: IsoDate,
  updatedAt: { ...IsoDate, description: 'The last call that changed something.' },
});

const exampleRow: SubprocessorView = {
  id: '3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f',
  name: 'Postmark',
  role: 'email',
  dataAccess: 'Operator email addresses and alert texts',
  region: 'US',
  notes: 'Sends alert notifications.',
  websiteUrl: 'https://postmarkapp.com',
  contractUrl: 'https://postmarkapp.com/eu-privacy',
  lastReviewedAt: '2026-11-20T14:30:00.000Z',
  reviewerOperatorId: '0b7f9a1c-5d2e-4c6b-8e3a-1f2d3c4b5a69',
  archivedAt: null,
  createdAt: '2026-03-02T09:00:00.000Z',
  updatedAt: '2026-11-20T14:30:00.000Z',
};
const exampleArchived: SubprocessorView = {
  ...exampleRow,
  id: '5e4d3c2b-1a09-4f8e-8d7c-6b5a4f3e2d1c',
  name: 'Sentry',
  role: 'observability',
  dataAccess: 'Stack traces of server errors',
  region: 'EU',
  notes: 'Replaced by self-hosted logging.',
  websiteUrl: 'https://sentry.io',
  contractUrl: null,
  lastReviewedAt: '2025-12-01T10:00:00.000Z',
  archivedAt: '2026-10-01T08:00:00.000Z',
  updatedAt: '2026-10-01T08:00:00.000Z',
};

const OneRow = { ok: Type.Literal(true), row: Subprocessor };
const who = (principal: Principal | null) => principal as Principal;
const Url = (description: string) =>
  Type.Optional(Nullable(Type.String({ maxLength: URL_MAX, description: `${description} An absolute http or https URL of at most ${URL_MAX} characters, without user name or password; null or empty clears it.` })));

export function subprocessorEndpoints(service: SubprocessorService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listComplianceSubprocessors',
      title: 'List subprocessors',
      description:
        `The subprocessors in use, ordered by name (ignoring case); \`includeArchived=1\` lists the archived ones too. The registry holds at most ${SUBPROCESSORS_MAX} rows, so the list is always whole. ` +
        'Subprocessors belong to no toolset: a token bound to toolsets reads them like any other.',
      method: 'GET',
      path: `${V1}/compliance/subprocessors`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        { includeArchived: Type.Optional(StringEnum(['0', '1'] as const, { description: '`1` lists archived subprocessors too; `0` or absent, only those in use.' })) },
        { examples: [{ includeArchived: '1' }] },
      ),
      response: { schemaId: 'svc-compliance-subprocessors.v1', fields: { rows: Type.Array(Subprocessor) } },
      example: { schema: 'svc-compliance-subprocessors.v1', generatedAt, rows: [exampleRow, exampleArchived] },
      handler: async ({ query }) => service.list(query),
    }),
    defineEndpoint({
      id: 'upsertComplianceSubprocessor',
      title: 'Register or change a subprocessor',
      description:
        'Creates the subprocessor of this `name` or changes it: names are trimmed and compare ignoring case (`Acme` and `acme ` are one subprocessor, which takes the spelling of the latest call). ' +
        'Fields given replace the stored ones; fields left out keep theirs (a new row: empty text, null links). Changing an archived subprocessor brings it back into use. ' +
        '`markReviewed` true stamps `lastReviewedAt` now and the caller as `reviewerOperatorId`. ' +
        `At most ${SUBPROCESSORS_MAX} subprocessors, archived ones included (409 \`limit-reached\`). Audited as \`compliance.subprocessor.upsert\` with before and after; a call that changes nothing writes nothing.`,
      method: 'POST',
      path: `${V1}/compliance/subprocessors`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      errors: [409],
      body: Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: NAME_MAX, description: `1 to ${NAME_MAX} characters once trimmed, one line; unique ignoring case.` }),
          role: Role,
          dataAccess: Type.Optional(Type.String({ maxLength: DATA_ACCESS_MAX, description: 'What data it can reach.' })),
          region: Type.Optional(Type.String({ maxLength: REGION_MAX, description: 'Where it processes the data.' })),
          notes: Type.Optional(Type.String({ maxLength: NOTES_MAX })),
          websiteUrl: Url('Its website.'),
          contractUrl: Url('Its data processing agreement or contract.'),
          markReviewed: Type.Optional(Type.Boolean({ description: 'true: record a review by the caller now.' })),
        },
        {
          additionalProperties: false,
          examples: [
            {
              name: 'Postmark',
              role: 'email',
              dataAccess: 'Operator email addresses and alert texts',
              region: 'US',
              notes: 'Sends alert notifications.',
              websiteUrl: 'https://postmarkapp.com',
              contractUrl: 'https://postmarkapp.com/eu-privacy',
              markReviewed: true,
            },
          ],
        },
      ),
      response: { schemaId: 'svc-compliance-subprocessor.v1', fields: OneRow },
      example: { schema: 'svc-compliance-subprocessor.v1', generatedAt, ok: true, row: exampleRow },
      handler: async ({ principal, body, requestId }) => service.upsert({ principal: who(principal), requestId }, body),
    }),
    defineEndpoint({
      id: 'actOnComplianceSubprocessor',
      title: 'Review or archive a subprocessor',
      description:
        '`review` stamps `lastReviewedAt` now and the caller as `reviewerOperatorId`, and leaves the subprocessor in use (an archived one is brought back); audited as `compliance.subprocessor.review`. ' +
        '`archive` stamps `archivedAt` now: it is no longer listed by default nor counted by the compliance check; audited as `compliance.subprocessor.archive`. Archiving an archived subprocessor answers it unchanged (its first `archivedAt`) and writes nothing. ' +
        'An unknown id is 404.',
      method: 'POST',
      path: `${V1}/compliance/subprocessors/{id}`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      params: Type.Object({ id: Type.String({ format: 'uuid' }) }, { examples: [{ id: exampleRow.id }] }),
      body: Type.Object({ action: StringEnum(SUBPROCESSOR_ACTIONS) }, { additionalProperties: false, examples: [{ action: 'review' }] }),
      response: { schemaId: 'svc-compliance-subprocessor.v1', fields: OneRow },
      example: { schema: 'svc-compliance-subprocessor.v1', generatedAt, ok: true, row: exampleRow },
      handler: async ({ principal, params, body, requestId }) => service.act({ principal: who(principal), requestId }, params.id, body.action),
    }),
  ];
}
