CREATE TABLE "audit_merkle_nodes" (
	"level" smallint NOT NULL,
	"idx" bigint NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "audit_merkle_nodes_level_idx_pk" PRIMARY KEY("level","idx")
);
--> statement-breakpoint
CREATE TABLE "backup_toolsets" (
	"toolset" text PRIMARY KEY NOT NULL,
	"verify_url" text NOT NULL,
	"database" text NOT NULL,
	"vercel_project" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"updated_by" text
);
--> statement-breakpoint
CREATE TABLE "region_failover_drills" (
	"id" uuid PRIMARY KEY NOT NULL,
	"region" text NOT NULL,
	"trigger" text NOT NULL,
	"actor" text,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"outcome" text,
	"error_text" text,
	"observed_badge" text,
	"badge_source" text NOT NULL,
	"federation_lag_sec" double precision,
	"unmeasured" jsonb NOT NULL,
	"database" text,
	"snapshot_id" text,
	"snapshot_taken" boolean,
	"snapshot_taken_at" timestamp with time zone,
	"verification_id" text,
	"verification_outcome" text,
	"recovery_sec" double precision,
	"data_loss_window_sec" double precision,
	"data_loss_target_sec" double precision,
	"write_probe" text,
	"write_round_trip_ms" double precision,
	"resolved_drill_ids" jsonb NOT NULL,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"resolve_note" text
);
--> statement-breakpoint
CREATE TABLE "backup_snapshots" (
	"id" uuid PRIMARY KEY NOT NULL,
	"database" text NOT NULL,
	"provider_snapshot_id" text NOT NULL,
	"storage" text NOT NULL,
	"format" text NOT NULL,
	"taken_at" timestamp with time zone NOT NULL,
	"observed_at" timestamp with time zone NOT NULL,
	"retention_until" timestamp with time zone,
	"size_bytes" bigint NOT NULL,
	"row_counts_sha256" text NOT NULL,
	"by_table" jsonb NOT NULL,
	"table_hashes" jsonb NOT NULL,
	"file_sha256" text NOT NULL,
	"source" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "restore_verifications" (
	"id" uuid PRIMARY KEY NOT NULL,
	"snapshot_id" uuid NOT NULL,
	"database" text NOT NULL,
	"provider_snapshot_id" text NOT NULL,
	"taken_at" timestamp with time zone NOT NULL,
	"verified_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"outcome" text NOT NULL,
	"error_text" text,
	"drift_tables" jsonb NOT NULL,
	"restored_row_sha256" text,
	"determinism_digest" text NOT NULL,
	"file_sha256" text,
	"trigger" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "audit_chain_head" ADD COLUMN "merkle_size" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_chain_head" ADD COLUMN "merkle_frontier" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "region_failover_drills_one_running" ON "region_failover_drills" USING btree ("region") WHERE "region_failover_drills"."ended_at" IS NULL;--> statement-breakpoint
CREATE INDEX "region_failover_drills_started_idx" ON "region_failover_drills" USING btree ("started_at","id");--> statement-breakpoint
CREATE INDEX "region_failover_drills_region_started_idx" ON "region_failover_drills" USING btree ("region","started_at");--> statement-breakpoint
CREATE INDEX "backup_snapshots_database_taken_idx" ON "backup_snapshots" USING btree ("database","taken_at","id");--> statement-breakpoint
CREATE INDEX "backup_snapshots_retention_idx" ON "backup_snapshots" USING btree ("retention_until");--> statement-breakpoint
CREATE INDEX "restore_verifications_verified_idx" ON "restore_verifications" USING btree ("verified_at","id");--> statement-breakpoint
CREATE INDEX "restore_verifications_database_verified_idx" ON "restore_verifications" USING btree ("database","verified_at");--> statement-breakpoint
CREATE INDEX "restore_verifications_snapshot_idx" ON "restore_verifications" USING btree ("snapshot_id");--> statement-breakpoint
CREATE INDEX "audit_facts_source_seq_idx" ON "audit_facts" USING btree ("source","seq_no");--> statement-breakpoint
CREATE INDEX "audit_facts_kind_seq_idx" ON "audit_facts" USING btree ("kind","seq_no");--> statement-breakpoint
CREATE INDEX "audit_facts_actor_seq_idx" ON "audit_facts" USING btree ("actor","seq_no");--> statement-breakpoint
CREATE INDEX "audit_facts_ts_idx" ON "audit_facts" USING btree ("ts");