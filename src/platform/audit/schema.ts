import { sql } from 'drizzle-orm';
import { bigint, check, index, jsonb, pgTable, primaryKey, smallint, text, timestamp, uuid } from 'drizzle-orm/pg-core';

/** One row per state-changing call: who did what to which thing, with the before and after state. */
export const operatorAudit = pgTable(
  'operator_audit',
  {
    id: uuid('id').primaryKey(),
    /** The audit-chain position of this row's fact; orders rows strictly. */
    seqNo: bigint('seq_no', { mode: 'number' }).notNull().unique(),
    ts: timestamp('ts', { withTimezone: true, mode: 'date' }).notNull(),
    actorUserId: text('actor_user_id'),
    actor: text('actor'),
    surface: text('surface').notNull(),
    verb: text('verb').notNull(),
    target: text('target').notNull(),
    before: jsonb('before'),
    after: jsonb('after'),
    requestId: text('request_id'),
  },
  (t) => [index('operator_audit_verb_idx').on(t.verb, t.seqNo)],
);

/** The tamper-evident hash chain of spec A ("Audit fact"). Append-only; seqNo has no gaps. */
export const auditFacts = pgTable(
  'audit_facts',
  {
    id: uuid('id').primaryKey(),
    seqNo: bigint('seq_no', { mode: 'number' }).notNull().unique(),
    source: text('source').notNull(),
    sourceId: text('source_id').notNull(),
    kind: text('kind').notNull(),
    actor: text('actor'),
    ts: text('ts').notNull(),
    payload: jsonb('payload').notNull(),
    prevHash: text('prev_hash').notNull(),
    entryHash: text('entry_hash').notNull(),
  },
  (t) => [
    index('audit_facts_source_idx').on(t.source, t.sourceId),
    // The list's filters (GET {v1}/audit/chain), each newest first by seqNo.
    index('audit_facts_source_seq_idx').on(t.source, t.seqNo),
    index('audit_facts_kind_seq_idx').on(t.kind, t.seqNo),
    index('audit_facts_actor_seq_idx').on(t.actor, t.seqNo),
    index('audit_facts_ts_idx').on(t.ts),
  ],
);

/**
 * The chain's single head row. Appenders lock it (SELECT … FOR UPDATE), which makes appends
 * strictly serial across connections and instances; a migration inserts it.
 */
export const auditChainHead = pgTable(
  'audit_chain_head',
  {
    id: smallint('id').primaryKey(),
    seqNo: bigint('seq_no', { mode: 'number' }).notNull(),
    headHash: text('head_hash').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
    /**
     * How many leaves (facts 1..merkleSize) the stored Merkle nodes cover. Equal to seqNo once the
     * catch-up has run; an append extends the tree only when they are equal (merkle.ts).
     */
    merkleSize: bigint('merkle_size', { mode: 'number' }).notNull().default(0),
    /** The right edge of the tree of merkleSize leaves: index L holds the 2^L-leaf part or null. */
    merkleFrontier: jsonb('merkle_frontier').$type<(string | null)[]>().notNull().default([]),
  },
  (t) => [check('audit_chain_head_single_row', sql`${t.id} = 1`)],
);

/**
 * The perfect aligned subtrees of the Merkle tree over the chain (docs/audit-chain/README.md): node (level,
 * idx) is the hash of facts idx·2^level + 1 … (idx+1)·2^level, level ≥ 1 (level 0 is each fact's
 * entryHash). Written in the transaction that appends the fact completing it; never changed.
 */
export const auditMerkleNodes = pgTable(
  'audit_merkle_nodes',
  {
    level: smallint('level').notNull(),
    idx: bigint('idx', { mode: 'number' }).notNull(),
    hash: text('hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.level, t.idx] })],
);
