import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { POSTMORTEM_SECTIONS } from './types.ts';

/**
 * The shapes an agent's answer must have (docs/triage/README.md, "Output"): one schema each, sent to the
 * live model as its response format and checked against every answer, the built-in engine's
 * included. An answer that is not JSON, or not `{"proposals": [...]}`, is auto-rejected whole
 * (`malformed-output`); an item that breaks its schema is auto-rejected alone (`schema-violation`)
 * and nothing of it is kept but the reason: the run's stored text keeps what the model wrote.
 */

export const MAX_EVIDENCE = 50;
export const MAX_CLAIMS = 20;
export const MAX_CLAIM_EVENT_IDS = 20;

/** The longest text of each kind an agent may write (the schemas' bounds, which what the checks keep must stay within). */
export const TEXT_MAX = { title: 200, summary: 2000, name: 120, bullet: 300, rationale: 1000, claim: 1000, paragraph: 4000 } as const;

const Text = (max: number) => Type.String({ minLength: 1, maxLength: max });
const EventIds = (max: number) => Type.Array(Type.String({ maxLength: 64 }), { maxItems: max });
const Toolset = Type.String({ minLength: 3, maxLength: 128, pattern: '^[A-Za-z][A-Za-z0-9-]*$' });
const NullableText = (max: number) => Type.Union([Text(max), Type.Null()]);

export const ClaimSchema = Type.Object({ text: Text(TEXT_MAX.claim), eventIds: EventIds(MAX_CLAIM_EVENT_IDS) }, { additionalProperties: false });

export const PostmortemDraftSchema = Type.Object(
  {
    title: Text(TEXT_MAX.title),
    sections: Type.Object(
      Object.fromEntries(POSTMORTEM_SECTIONS.map((s) => [s, Type.Array(ClaimSchema, { maxItems: MAX_CLAIMS })])) as Record<(typeof POSTMORTEM_SECTIONS)[number], ReturnType<typeof Type.Array<typeof ClaimSchema>>>,
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const IncidentItem = Type.Object(
  {
    kind: Type.Literal('incident'),
    toolset: Toolset,
    severity: Type.Union([Type.Literal('critical'), Type.Literal('major'), Type.Literal('minor')]),
    signal: Type.Union(['rate-spike', 'silence', 'liar-flood', 'tarpit', 'cross-toolset', 'other'].map((s) => Type.Literal(s))),
    title: Text(TEXT_MAX.title),
    summary: Text(TEXT_MAX.summary),
    evidenceEventIds: EventIds(MAX_EVIDENCE),
    postmortemDraft: Type.Optional(Type.Union([PostmortemDraftSchema, Type.Null()])),
  },
  { additionalProperties: false },
);

export const ViewFiltersSchema = Type.Object(
  {
    toolset: NullableText(128),
    tenant: NullableText(128),
    eventType: NullableText(128),
    uaClass: NullableText(64),
    fingerprintId: NullableText(128),
    focalEventId: NullableText(64),
    from: Text(40),
    to: Text(40),
  },
  { additionalProperties: false },
);

export const InvestigationItem = Type.Object(
  {
    kind: Type.Literal('investigation'),
    toolset: Toolset,
    name: Text(TEXT_MAX.name),
    rationale: Type.Array(Text(TEXT_MAX.bullet), { minItems: 3, maxItems: 3 }),
    filters: ViewFiltersSchema,
    evidenceEventIds: EventIds(MAX_EVIDENCE),
  },
  { additionalProperties: false },
);

export const RuleItem = Type.Object(
  {
    kind: Type.Literal('alert-rule'),
    toolset: Toolset,
    name: Text(TEXT_MAX.name),
    // Only its shape as an object with a kind: the empire union's values are checked after, so a
    // wrong predicate is auto-rejected as `invalid-predicate`, not as a schema violation.
    predicate: Type.Object({ kind: Text(64) }, { additionalProperties: true }),
    rationale: Text(TEXT_MAX.rationale),
  },
  { additionalProperties: false },
);

export type IncidentItem = Static<typeof IncidentItem>;
export type InvestigationItem = Static<typeof InvestigationItem>;
export type RuleItem = Static<typeof RuleItem>;
export type PostmortemDraftOutput = Static<typeof PostmortemDraftSchema>;

/** The answer of a proposing agent: `{"proposals": [...]}`. */
export const proposalsAnswer = (item: TSchema, maxItems: number) => Type.Object({ proposals: Type.Array(item, { maxItems }) }, { additionalProperties: false });

export type ParsedItem<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface ParsedAnswer<T> {
  /** Why the whole answer was refused (`malformed-output: …`), or null. */
  refused: string | null;
  items: ParsedItem<T>[];
}

/** The first schema error as `schema-violation: <path> <message>`. */
function violation(schema: TSchema, value: unknown): string {
  const first = Value.Errors(schema, value).First();
  return `schema-violation: ${first ? `${first.path || '/'} ${first.message}` : 'the value does not match'}`.slice(0, 300);
}

/** Reads a proposing agent's text: the whole answer first, then each item against its schema. */
export function parseProposals<T>(text: string, item: TSchema, maxItems: number): ParsedAnswer<T> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { refused: `malformed-output: the answer is not JSON (${(error as Error).message.slice(0, 120)})`, items: [] };
  }
  // Of the JSON values only an object can hold `proposals` (a string, number, boolean or array reads it as undefined).
  const list = (json as { proposals?: unknown } | null)?.proposals;
  if (!Array.isArray(list)) {
    return { refused: 'malformed-output: the answer is not an object {"proposals": [...]}', items: [] };
  }
  return {
    refused: null,
    items: list.map((value, index): ParsedItem<T> => {
      if (index >= maxItems) return { ok: false, reason: `schema-violation: more than ${maxItems} proposals in one answer` };
      return Value.Check(item, value) ? { ok: true, value: value as T } : { ok: false, reason: violation(item, value) };
    }),
  };
}

/** Reads a postmortem writer's text: the draft, or why it was refused. */
export function parseDraft(text: string): { ok: true; value: PostmortemDraftOutput } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `malformed-output: the answer is not JSON (${(error as Error).message.slice(0, 120)})` };
  }
  return Value.Check(PostmortemDraftSchema, json) ? { ok: true, value: json } : { ok: false, reason: violation(PostmortemDraftSchema, json) };
}

/** The compliance narrator's answer: `{"paragraph": "..."}`. */
export const NarrationSchema = Type.Object({ paragraph: Text(TEXT_MAX.paragraph) }, { additionalProperties: false });
export type NarrationOutput = Static<typeof NarrationSchema>;

/** Reads a compliance narrator's text: the paragraph, or why it was refused. */
export function parseNarration(text: string): { ok: true; value: NarrationOutput } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `malformed-output: the answer is not JSON (${(error as Error).message.slice(0, 120)})` };
  }
  return Value.Check(NarrationSchema, json) ? { ok: true, value: json } : { ok: false, reason: violation(NarrationSchema, json) };
}
