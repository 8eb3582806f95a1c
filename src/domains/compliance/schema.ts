import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One outcome of one control (spec A "Compliance framework and control", Evaluation): written by
 * the `compliance-evaluate` job (evaluated_by `job`) or by an operator's override (`operator:<userId>`).
 * `observed` is the predicate's whole input, so replay can recompute the outcome from the row
 * alone; `observed_sha256` is its digest at write time (also in the audit fact), which replay
 * checks to tell a row edited afterwards. docs/compliance/README.md.
 */
export const complianceEvaluations = pgTable(
  'compliance_evaluations',
  {
    id: uuid('id').primaryKey(),
    /** Insertion order: the newest evaluation of a control, even when two passes share a run time. */
    seq: bigserial('seq', { mode: 'number' }).notNull(),
    framework: text('framework').notNull(),
    controlId: text('control_id').notNull(),
    predicateKey: text('predicate_key').notNull(),
    /** `pass`, `fail`, `manual-review` or `n/a`. */
    outcome: text('outcome').notNull(),
    summary: text('summary').notNull(),
    observed: jsonb('observed'),
    observedSha256: text('observed_sha256').notNull(),
    evidenceUrl: text('evidence_url'),
    /** `job`, or `operator:<userId>` for an override. */
    evaluatedBy: text('evaluated_by').notNull(),
    /** The evaluation pass that wrote the row (one per job run); null for an override. */
    passId: uuid('pass_id'),
    runAt: ts('run_at').notNull(),
    /** The operator's note (overrides only). */
    note: text('note'),
    /** Overrides only: the automatic outcome in force when the operator overrode it (null if none yet). */
    overriddenOutcome: text('overridden_outcome'),
    /** Overrides only: when an automatic evaluation changed the outcome, or a newer override replaced it. */
    endedAt: ts('ended_at'),
  },
  (t) => [
    // The latest evaluation of a control: the framework read and posture (newest first, no sort).
    index('compliance_evaluations_control_idx').on(t.framework, t.controlId, t.seq),
    // The override in force per control: at most one open one.
    uniqueIndex('compliance_evaluations_open_override_idx')
      .on(t.framework, t.controlId)
      .where(sql`${t.evaluatedBy} <> 'job' AND ${t.endedAt} IS NULL`),
  ],
);

/** A third party that processes the service's data (spec A "Subprocessor"); unique by name. */
export const complianceSubprocessors = pgTable(
  'compliance_subprocessors',
  {
    id: uuid('id').primaryKey(),
    name: text('name').notNull(),
    /** `ai`, `auth`, `billing`, `cdn`, `email`, `infra`, `observability`, `other` or `storage`. */
    role: text('role').notNull(),
    dataAccess: text('data_access').notNull(),
    region: text('region').notNull(),
    notes: text('notes').notNull(),
    websiteUrl: text('website_url'),
    contractUrl: text('contract_url'),
    lastReviewedAt: ts('last_reviewed_at'),
    reviewerOperatorId: text('reviewer_operator_id'),
    archivedAt: ts('archived_at'),
    createdAt: ts('created_at').notNull(),
    updatedAt: ts('updated_at').notNull(),
  },
  (t) => [uniqueIndex('compliance_subprocessors_name_idx').on(t.name)],
);

/**
 * An evidence bundle (spec B `POST compliance/bundle`): its files live in the file store the
 * backups use; this row names them, with each file's digest, and the manifest over them.
 */
export const complianceBundles = pgTable(
  'compliance_bundles',
  {
    id: uuid('id').primaryKey(),
    framework: text('framework').notNull(),
    /** `local` or `s3`: the store the files went to. */
    storageKind: text('storage_kind').notNull(),
    /** [{name, key, contentType, bytes, sha256}] in manifest order. */
    files: jsonb('files').notNull(),
    manifestText: text('manifest_text').notNull(),
    manifestSha256: text('manifest_sha256').notNull(),
    controlCount: integer('control_count').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [index('compliance_bundles_created_idx').on(t.createdAt, t.id)],
);
