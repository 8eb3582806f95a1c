import { Type } from '@sinclair/typebox';
import { FACT_KINDS, FACT_SOURCES } from '../../platform/audit/chain.ts';
import { defineEndpoint, EmptyBody, LONG_WORK_TIMEOUT_MS, type Endpoint, IsoDate, Nullable, PageLimitParam, type Principal, StringEnum, V1 } from '../../platform/http/registry.ts';
import { type AuditChainService, FACT_ID_PATTERN, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from './service.ts';

/** The audit chain (spec B group 5): the list, one fact with its Merkle inclusion proof, verify. */

const generatedAt = '2026-11-25T08:00:00.000Z';
const TAG = 'audit';
const UI_PATH = '/audit';
const Hash = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });

const FactFields = {
  id: Type.String({ format: 'uuid' }),
  seqNo: Type.String({ description: 'Position in the chain, from 1, without gaps (decimal).' }),
  source: StringEnum(FACT_SOURCES),
  sourceId: Type.String({ description: 'The id of the record the fact is about (an operator audit row, a drift event, …).' }),
  kind: StringEnum(FACT_KINDS),
  actor: Nullable(Type.String({ description: 'The operator, or null for jobs and the system.' })),
  ts: IsoDate,
  prevHash: Hash('The entryHash of fact seqNo − 1; 64 zeros for fact 1.'),
  entryHash: Hash('SHA-256 (hex) of the RFC 8785 canonical JSON of {seqNo, source, sourceId, kind, actor, ts, payload, prevHash} (docs/audit-chain/README.md).'),
};
const FactSummary = Type.Object(FactFields);
const Fact = Type.Object({ ...FactFields, payload: Type.Unknown({ description: 'The fact\'s JSON content, hashed as it is shown.' }) });

const Head = Type.Object({
  seqNo: Type.String({ description: 'The last fact\'s seqNo (decimal).' }),
  headHash: Hash('The last fact\'s entryHash.'),
  observedAt: Type.String({ format: 'date-time', description: 'When this answer read the head.' }),
});

const Proof = Type.Object({
  leafIndex: Type.Integer({ minimum: 0, description: 'seqNo − 1.' }),
  leafCount: Type.Integer({ minimum: 1, description: 'Leaves of the tree the proof is for: facts 1 to leafCount (the head).' }),
  leafHash: Hash('The fact\'s entryHash: the leaf.'),
  rootHash: Hash('The root of the tree over facts 1 to leafCount.'),
  siblings: Type.Array(
    Type.Object({
      hash: Hash('A sibling subtree\'s hash.'),
      side: StringEnum(['left', 'right'] as const, { description: 'left: next = SHA-256(hash ‖ running); right: next = SHA-256(running ‖ hash), over the raw 32-byte digests.' }),
    }),
    { description: 'From the leaf up to the root (RFC 9162 inclusion path order).' },
  ),
});

const exampleFact = {
  id: '3b0d6a4e-8f21-4c3d-9a57-6e1f2b3c4d5e',
  seqNo: '3',
  source: 'OperatorAudit',
  sourceId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
  kind: 'operator',
  actor: 'admin',
  ts: '2026-11-25T07:59:58.000Z',
  prevHash: '5f0b7c4e1d2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4',
  entryHash: '9c1e2d3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d',
};
const exampleHead = { seqNo: '3', headHash: exampleFact.entryHash, observedAt: generatedAt };

const who = (principal: Principal | null) => principal as Principal;

/**
 * The chain holds the facts of every toolset in one order, and its heads, proofs and verification
 * are over all of them: it cannot be narrowed to some toolsets without breaking the hashes, so a
 * token bound to toolsets is refused it (docs/operations.md, "Toolset binding", rule 4).
 */
const CHAIN_SPANS = 'the audit hash chain';

export function auditChainEndpoints(chain: AuditChainService): Endpoint[] {
  return [
    defineEndpoint({
      id: 'listAuditChain',
      title: 'List audit facts',
      description: `The hash-chained audit facts without their payload, highest seqNo first, with the chain head. Filters: actor, kind, source (exact), since (inclusive) and until (exclusive), ISO 8601 date-times with a time zone. Page with cursor = the nextCursor of the previous page (the last fact's seqNo); limit 1 to ${LIST_LIMIT_MAX}, default ${LIST_LIMIT_DEFAULT}. A token bound to toolsets is refused (403): the chain spans every toolset.`,
      method: 'GET',
      path: `${V1}/audit/chain`,
      auth: 'session-or-bearer',
      spansEveryToolset: CHAIN_SPANS,
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      query: Type.Object(
        {
          actor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          kind: Type.Optional(StringEnum(FACT_KINDS)),
          source: Type.Optional(StringEnum(FACT_SOURCES)),
          since: Type.Optional(Type.String({ format: 'date-time', description: 'Facts with ts at or after this time.' })),
          until: Type.Optional(Type.String({ format: 'date-time', description: 'Facts with ts before this time.' })),
          cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$', description: 'The nextCursor of the previous page: facts with a lower seqNo.' })),
          limit: PageLimitParam(LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX),
        },
        { examples: [{ actor: 'admin', kind: 'operator', source: 'OperatorAudit', since: '2026-11-01T00:00:00Z', until: '2026-12-01T00:00:00Z', cursor: '120', limit: 100 }] },
      ),
      response: { schemaId: 'svc-audit-chain-list.v1', fields: { facts: Type.Array(FactSummary), head: Nullable(Head), nextCursor: Nullable(Type.String()) } },
      example: { schema: 'svc-audit-chain-list.v1', generatedAt, facts: [exampleFact], head: exampleHead, nextCursor: null },
      handler: async ({ query }) => chain.list(query),
    }),
    defineEndpoint({
      id: 'getAuditFact',
      title: 'Read an audit fact with its inclusion proof',
      description:
        'One fact with its payload, the chain head, and a Merkle inclusion proof of the fact in the SHA-256 tree over facts 1 to the head (RFC 9162 shape; node = SHA-256(left ‖ right) over raw digests, leaf = entryHash). {id} is the fact\'s uuid or its decimal seqNo; anything else is 400, an unknown fact 404. A token bound to toolsets is refused (403): the chain spans every toolset. docs/audit-chain/README.md shows how to check the proof offline (`npm run cli -- audit:verify-proof <file>`).',
      method: 'GET',
      path: `${V1}/audit/chain/{id}`,
      auth: 'session-or-bearer',
      spansEveryToolset: CHAIN_SPANS,
      scope: 'read:empire',
      tag: TAG,
      kind: 'read',
      uiPath: UI_PATH,
      params: Type.Object(
        { id: Type.String({ pattern: FACT_ID_PATTERN, description: 'A fact id (uuid) or a decimal seqNo.', examples: ['1'] }) },
        { examples: [{ id: '1' }] },
      ),
      response: { schemaId: 'svc-audit-fact.v1', fields: { fact: Fact, head: Head, proof: Proof } },
      example: {
        schema: 'svc-audit-fact.v1',
        generatedAt,
        fact: { ...exampleFact, payload: { verb: 'token.create', target: 'token:3f0c7d0e-2f43-4a53-9d55-6a4f0a0b9c11', surface: 'api', before: null, after: { name: 'grafana-reader' } } },
        head: exampleHead,
        proof: {
          leafIndex: 2,
          leafCount: 3,
          leafHash: exampleFact.entryHash,
          rootHash: '0e4c2b7d9a1f3e5c7b9d1f3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e',
          siblings: [{ hash: '7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b', side: 'left' }],
        },
      },
      handler: async ({ params }) => chain.get(params.id),
    }),
    defineEndpoint({
      id: 'verifyAuditChain',
      title: 'Verify the audit chain',
      description:
        'Walks every fact from seqNo 1 to the head in ascending order, in bounded batches: recomputes each entryHash and checks the prevHash links (fact 1 links to 64 zeros). intact is false with the first divergence (prev-mismatch or entry-mismatch) when one fails; merkle reports the same walk\'s check of the stored Merkle nodes. Then writes an operator audit row with verb audit.verify-chain (a new fact after the head it reports). A token bound to toolsets is refused (403): the chain spans every toolset.',
      method: 'POST',
      path: `${V1}/audit/chain/verify`,
      auth: 'session-or-bearer',
      spansEveryToolset: CHAIN_SPANS,
      scope: 'write:alerts',
      tag: TAG,
      kind: 'write',
      uiPath: UI_PATH,
      // A walk of the whole chain: about a minute per million facts on a busy two-core machine.
      timeoutMs: LONG_WORK_TIMEOUT_MS,
      body: EmptyBody,
      response: {
        schemaId: 'svc-audit-chain-verify.v1',
        fields: {
          intact: Type.Boolean({ description: 'Every entryHash recomputes and every prevHash links; the head row is the last fact.' }),
          walkedCount: Type.Integer({ minimum: 0 }),
          divergence: Nullable(
            Type.Object({
              seqNo: Type.String({ description: 'The first fact that fails (decimal).' }),
              reason: StringEnum(['prev-mismatch', 'entry-mismatch'] as const, {
                description: 'prev-mismatch: its prevHash is not the entryHash of the fact before it (or that fact is missing); entry-mismatch: its entryHash does not recompute from its fields.',
              }),
            }),
          ),
          head: Nullable(Head),
          merkle: Type.Object(
            {
              intact: Type.Boolean({ description: 'Every stored Merkle node and the head row\'s frontier equal the tree recomputed from the stored entry hashes.' }),
              checkedLeaves: Type.Integer({ minimum: 0 }),
              divergence: Nullable(
                Type.Object({
                  level: Type.Integer({ minimum: 0 }),
                  index: Type.Integer({ minimum: 0 }),
                  reason: StringEnum(['node-mismatch', 'node-missing', 'frontier-mismatch'] as const),
                }),
              ),
            },
            { description: 'The check of the stored Merkle nodes proofs are built from (docs/audit-chain/README.md).' },
          ),
          durationMs: Type.Integer({ minimum: 0 }),
        },
      },
      example: {
        schema: 'svc-audit-chain-verify.v1',
        generatedAt,
        intact: true,
        walkedCount: 3,
        divergence: null,
        head: exampleHead,
        merkle: { intact: true, checkedLeaves: 3, divergence: null },
        durationMs: 4,
      },
      handler: async ({ principal, requestId }) => chain.verify({ principal: who(principal), requestId }),
    }),
  ];
}
