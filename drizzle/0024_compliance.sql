CREATE TABLE "compliance_bundles" (
	"id" uuid PRIMARY KEY NOT NULL,
	"framework" text NOT NULL,
	"storage_kind" text NOT NULL,
	"files" jsonb NOT NULL,
	"manifest_text" text NOT NULL,
	"manifest_sha256" text NOT NULL,
	"control_count" integer NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "compliance_evaluations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"framework" text NOT NULL,
	"control_id" text NOT NULL,
	"predicate_key" text NOT NULL,
	"outcome" text NOT NULL,
	"summary" text NOT NULL,
	"observed" jsonb,
	"observed_sha256" text NOT NULL,
	"evidence_url" text,
	"evaluated_by" text NOT NULL,
	"pass_id" uuid,
	"run_at" timestamp with time zone NOT NULL,
	"note" text,
	"overridden_outcome" text,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "compliance_subprocessors" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"role" text NOT NULL,
	"data_access" text NOT NULL,
	"region" text NOT NULL,
	"notes" text NOT NULL,
	"website_url" text,
	"contract_url" text,
	"last_reviewed_at" timestamp with time zone,
	"reviewer_operator_id" text,
	"archived_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "compliance_bundles_created_idx" ON "compliance_bundles" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "compliance_evaluations_control_idx" ON "compliance_evaluations" USING btree ("framework","control_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "compliance_evaluations_open_override_idx" ON "compliance_evaluations" USING btree ("framework","control_id") WHERE "compliance_evaluations"."evaluated_by" <> 'job' AND "compliance_evaluations"."ended_at" IS NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "compliance_subprocessors_name_idx" ON "compliance_subprocessors" USING btree ("name");