import { Type } from '@sinclair/typebox';
import { DayParam, defineEndpoint, type Endpoint, Nullable, type Principal, StringEnum, V1 } from '../../../platform/http/registry.ts';
import { type CostRecordService, RANGE_MAX_DAYS, RECORDS_MAX, ROLLUP_GROUPS, TEXT_MAX } from './service.ts';

/** Cost records and their rollups (spec D6 `POST cost/records`; B group 4 `cost/rollup`, `cost/by-toolset`; docs/cost/README.md). */

const TAG = 'cost';
const UI_PATH = '/cost';
const generatedAt = '2026-11-26T08:00:00.000Z';
/** 5000 records with every text at its longest fit; the server's 1 MiB would hold only about 1300 of those. */
const RECORDS_BODY_LIMIT = 4 * 1024 * 1024;

/** A text without control characters (U+0000 is refused when the body is parsed). */
const Text = (options: { minLength: number; description: string; examples?: string[] }) =>
  Type.String({ maxLength: TEXT_MAX, pattern: '^[^\\x00-\\x1F\\x7F]*$', ...options });
const Filter = (what: string) => Type.Optional(Type.String({ maxLength: TEXT_MAX, description: `Only records of this ${what} ('' matches records naming none).` }));

const CostRecord = Type.Object(
  {
    date: Type.String({ format: 'date', maxLength: 10, description: 'The UTC day charged (FOCUS ChargePeriodStart; the period ends the next day): a calendar date YYYY-MM-DD.' }),
    toolset: Type.String({ minLength: 3, maxLength: 128, description: 'The toolset the spend is allocated to: a toolset name (a letter, then letters, digits or -).' }),
    vendor: Text({ minLength: 1, description: 'Who sells it (FOCUS ProviderName), e.g. `openai`, `aws`.' }),
    sku: Text({ minLength: 1, description: 'What was bought (FOCUS SkuId), e.g. `gpt-4o-mini-input`.' }),
    workspace: Type.Optional(Text({ minLength: 0, description: 'The account or project inside the vendor (FOCUS SubAccountId); \'\' or absent: none.' })),
    region: Type.Optional(Text({ minLength: 0, description: 'The vendor\'s region id (FOCUS RegionId); \'\' or absent: none.' })),
    amountUsd: Type.Number({
      minimum: -999_999_999.999999,
      maximum: 999_999_999.999999,
      description: 'The day\'s billed cost in USD (FOCUS BilledCost), at most 6 decimal places; negative for a credit or refund.',
    }),
    units: Type.Optional(
      Type.Number({ minimum: 0, maximum: 999_999_999_999, description: 'Quantity consumed (FOCUS ConsumedQuantity), at most 6 decimal places and 15 significant digits; 0 when absent.' }),
    ),
  },
  { additionalProperties: false },
);

const exampleRecords = [
  { date: '2026-11-24', toolset: 'crawler-lab', vendor: 'openai', sku: 'gpt-4o-mini-input', workspace: 'proj-triage', region: 'us', amountUsd: 12.345678, units: 82304520 },
  { date: '2026-11-24', toolset: 'crawler-lab', vendor: 'aws', sku: 'ec2-t4g-small', workspace: '123456789012', region: 'eu-west-1', amountUsd: 0.4032, units: 24 },
  { date: '2026-11-25', toolset: 'crawler-lab', vendor: 'aws', sku: 'credit-promo', workspace: '123456789012', region: '', amountUsd: -5, units: 0 },
];

const RollupRow = Type.Object({
  key: Type.String({ description: 'The sku, toolset or vendor.' }),
  amountUsd: Type.Number({ description: 'Exact sum of the records\' amounts.' }),
  units: Type.Number({ description: 'Exact sum of the records\' units (of different skus when grouped by toolset or vendor).' }),
  dayCount: Type.Integer({ minimum: 1, description: 'Distinct days with at least one record of this key in the range.' }),
});

export function costRecordEndpoints(service: CostRecordService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'upsertCostRecords',
      title: 'Upsert cost records',
      description:
        `Writes 1 to ${RECORDS_MAX} daily cost records (FOCUS mapping in docs/cost/README.md). A record is keyed by (date, toolset, vendor, sku, workspace, region); a key already stored has its \`amountUsd\` and \`units\` replaced, and when one request names a key twice the later record wins. ` +
        '`amountUsd` and `units` are exact: at most 6 decimal places (400 `invalid-amount` otherwise); `amountUsd` may be negative (credits, refunds), `units` may not. ' +
        '`upserted` counts the distinct keys written. All or nothing, in one statement; a token bound to toolsets writes its own toolsets only. Audited as `cost.records-upsert` with counts.',
      method: 'POST',
      path: `${V1}/cost/records`,
      auth: 'session-or-bearer',
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      bodyLimit: RECORDS_BODY_LIMIT,
      body: Type.Object(
        { records: Type.Array(CostRecord, { minItems: 1, maxItems: RECORDS_MAX, description: `1 to ${RECORDS_MAX} records.` }) },
        { additionalProperties: false, examples: [{ records: exampleRecords }] },
      ),
      response: {
        schemaId: 'svc-cost-records.v1',
        fields: { ok: Type.Boolean(), upserted: Type.Integer({ minimum: 1, description: 'Distinct keys inserted or replaced.' }) },
      },
      example: { schema: 'svc-cost-records.v1', generatedAt, ok: true, upserted: 3 },
      handler: async ({ body, principal, requestId }) => service.upsert({ principal: principal as Principal, requestId }, body.records),
    }),
    defineEndpoint({
      id: 'readCostRollup',
      title: 'Cost rollup',
      description:
        `Sums the cost records of [from, to) (\`to\` exclusive; at most ${RANGE_MAX_DAYS} days) per \`group\` (sku, toolset or vendor; default toolset), keeping only records matching every filter given. ` +
        'Rows are sorted by `amountUsd` descending (compared exactly), then `key` ascending by UTF-16 code units. `total.amountUsd` is the exact sum of the rows, `total.rows` the number of cost records summed; `dayCount` counts the distinct days a key has records. ' +
        'A token bound to toolsets sums only its toolsets\' records (403 for a `toolset` filter outside them). 400 `invalid-date` for a date that is not a calendar date, `invalid-range` when `from` is not before `to` or the range is too long.',
      method: 'GET',
      path: `${V1}/cost/rollup`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          from: DayParam('First day summed (inclusive), YYYY-MM-DD.', '2026-11-01'),
          to: DayParam(`Day after the last one summed (exclusive), YYYY-MM-DD; at most ${RANGE_MAX_DAYS} days after from.`, '2026-12-01'),
          group: Type.Optional(StringEnum(ROLLUP_GROUPS, { default: 'toolset', description: 'What a row sums: one sku, toolset or vendor.' })),
          workspace: Filter('workspace'),
          toolset: Filter('toolset'),
          vendor: Filter('vendor'),
          region: Filter('region'),
        },
        { examples: [{ from: '2026-11-01', to: '2026-12-01', group: 'sku', workspace: 'proj-triage', toolset: 'crawler-lab', vendor: 'openai', region: 'us' }] },
      ),
      response: {
        schemaId: 'svc-cost-rollup.v1',
        fields: {
          group: StringEnum(ROLLUP_GROUPS),
          filters: Type.Object(
            { workspace: Nullable(Type.String()), toolset: Nullable(Type.String()), vendor: Nullable(Type.String()), region: Nullable(Type.String()) },
            { description: 'The filters applied; null: not filtered.' },
          ),
          from: Type.String({ format: 'date' }),
          to: Type.String({ format: 'date' }),
          total: Type.Object({
            amountUsd: Type.Number({ description: 'Exact sum of every row.' }),
            rows: Type.Integer({ minimum: 0, description: 'Cost records summed (not result rows).' }),
          }),
          rows: Type.Array(RollupRow),
        },
      },
      example: {
        schema: 'svc-cost-rollup.v1',
        generatedAt,
        group: 'toolset',
        filters: { workspace: null, toolset: null, vendor: 'openai', region: null },
        from: '2026-11-01',
        to: '2026-12-01',
        total: { amountUsd: 412.75, rows: 58 },
        rows: [
          { key: 'crawler-lab', amountUsd: 370.5, units: 2140000000, dayCount: 29 },
          { key: 'triage-bot', amountUsd: 42.25, units: 98000000, dayCount: 12 },
        ],
      },
      handler: async ({ query, principal }) => service.rollup(query, principal),
    }),
    defineEndpoint({
      id: 'readCostByToolset',
      title: 'Cost of one toolset per day',
      description:
        `One toolset's cost per day over [from, to) (\`to\` exclusive; at most ${RANGE_MAX_DAYS} days): \`series\` lists every day of the range in ascending order, 0 for a day without records, so a chart needs no gap filling. ` +
        '`total.amountUsd` is the exact sum. 403 for a token bound to other toolsets; 400 `invalid-date` or `invalid-range` as for the rollup.',
      method: 'GET',
      path: `${V1}/cost/by-toolset`,
      auth: 'session-or-bearer',
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          toolset: Type.String({ minLength: 1, maxLength: TEXT_MAX, description: 'The toolset.', examples: ['crawler-lab'] }),
          from: DayParam('First day (inclusive), YYYY-MM-DD.', '2026-11-01'),
          to: DayParam(`Day after the last one (exclusive), YYYY-MM-DD; at most ${RANGE_MAX_DAYS} days after from.`, '2026-11-08'),
        },
        { examples: [{ toolset: 'crawler-lab', from: '2026-11-01', to: '2026-11-08' }] },
      ),
      response: {
        schemaId: 'svc-cost-by-toolset.v1',
        fields: {
          toolset: Type.String(),
          from: Type.String({ format: 'date' }),
          to: Type.String({ format: 'date' }),
          total: Type.Object({ amountUsd: Type.Number() }),
          series: Type.Array(Type.Object({ dimDate: Type.String({ format: 'date' }), amountUsd: Type.Number() }), { description: 'Every day of [from, to), ascending; 0 without records.' }),
        },
      },
      example: {
        schema: 'svc-cost-by-toolset.v1',
        generatedAt,
        toolset: 'crawler-lab',
        from: '2026-11-01',
        to: '2026-11-04',
        total: { amountUsd: 25.5 },
        series: [
          { dimDate: '2026-11-01', amountUsd: 12.25 },
          { dimDate: '2026-11-02', amountUsd: 0 },
          { dimDate: '2026-11-03', amountUsd: 13.25 },
        ],
      },
      handler: async ({ query, principal }) => service.byToolset(query, principal),
    }),
  ];
}
