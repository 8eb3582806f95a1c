import { Type } from '@sinclair/typebox';
import { defineEndpoint, type Endpoint, IsoDate, Nullable, type Principal, V1 } from '../../../platform/http/registry.ts';
import { CHAOS_TAG } from '../experiments/endpoints.ts';
import { FREEZE_SCOPE, type FreezeService, type FreezeView, REASON_MAX } from './service.ts';

/** The freeze switch (spec B group 5 `chaos/freeze` row; docs/chaos/README.md, "Freeze"). */

const generatedAt = '2026-11-28T08:00:00.000Z';
const UI_PATH = '/chaos/freeze';
/** Completes "… spans every toolset": the switch stops chaos on the whole deployment. */
const FREEZE_SPANS = 'the chaos freeze switch';
const SCHEMA = 'svc-chaos-freeze.v1';

const Freeze = Type.Object({
  scope: Type.Literal(FREEZE_SCOPE),
  frozen: Type.Boolean({ description: 'true: the chaos-schedule job starts nothing and manual runs are refused.' }),
  reason: Type.String(),
  updatedBy: Nullable(Type.String({ description: 'The operator who last set the switch.' })),
  updatedAt: IsoDate,
});

const exampleFreeze: FreezeView = { scope: FREEZE_SCOPE, frozen: true, reason: 'Release freeze until Monday.', updatedBy: 'admin', updatedAt: generatedAt };
const who = (principal: Principal | null) => principal as Principal;

export function freezeEndpoints(freeze: FreezeService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'getChaosFreeze',
      title: 'Read the chaos freeze switch',
      description: 'Whether chaos is frozen now, why, and who set it when. A token bound to toolsets is refused (403).',
      method: 'GET',
      path: `${V1}/chaos/freeze`,
      auth: 'session-or-bearer',
      spansEveryToolset: FREEZE_SPANS,
      scope: 'read:empire',
      tag: CHAOS_TAG,
      kind: 'read',
      uiPath: UI_PATH,
      response: { schemaId: SCHEMA, fields: { freeze: Freeze } },
      example: { schema: SCHEMA, generatedAt, freeze: exampleFreeze },
      handler: async () => ({ freeze: await freeze.current() }),
    }),
    defineEndpoint({
      id: 'setChaosFreeze',
      title: 'Freeze or thaw chaos',
      description:
        'frozen true: a run in progress is aborted first (outcome aborted, its abortReason naming the freeze and its reason, what it injected undone), then the switch is set; the chaos-schedule job starts nothing and manual runs are refused until it is thawed. ' +
        'frozen false thaws. Audited as chaos.freeze or chaos.thaw with the switch before and after; setting the state and reason it has changes nothing. Answers the switch as GET does. A token bound to toolsets is refused (403).',
      method: 'POST',
      path: `${V1}/chaos/freeze`,
      auth: 'session-or-bearer',
      spansEveryToolset: FREEZE_SPANS,
      scope: 'write:alerts',
      tag: CHAOS_TAG,
      kind: 'write',
      uiPath: UI_PATH,
      body: Type.Object(
        {
          frozen: Type.Boolean({ description: 'true freezes, false thaws.' }),
          reason: Type.Optional(Type.String({ maxLength: REASON_MAX, description: `Why, at most ${REASON_MAX} characters; kept on the switch and in the audit record.` })),
        },
        { additionalProperties: false, examples: [{ frozen: true, reason: exampleFreeze.reason }] },
      ),
      response: { schemaId: SCHEMA, fields: { freeze: Freeze } },
      example: { schema: SCHEMA, generatedAt, freeze: exampleFreeze },
      handler: async ({ body, principal, requestId }) => ({ freeze: await freeze.set({ principal: who(principal), requestId }, body) }),
    }),
  ];
}
