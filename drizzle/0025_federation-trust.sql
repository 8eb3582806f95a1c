CREATE TABLE "federation_regions" (
	"key" text PRIMARY KEY NOT NULL,
	"display_name" text NOT NULL,
	"base_url" text NOT NULL,
	"host_project_slug" text,
	"database_host" text,
	"latency_tier_sec" integer NOT NULL,
	"status" text NOT NULL,
	"is_primary" boolean NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"updated_by" text
);
--> statement-breakpoint
CREATE TABLE "trust_drift_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"kind" text NOT NULL,
	"source" text NOT NULL,
	"source_id" text NOT NULL,
	"description" text NOT NULL,
	"severity" text NOT NULL,
	"status" text NOT NULL,
	"opened_at" timestamp with time zone NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"resolved_at" timestamp with time zone,
	"resolved_by" text,
	"resolution_notes" text DEFAULT '' NOT NULL,
	"payload" jsonb NOT NULL,
	"cleared_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "trust_drift_events_open_slot_idx" ON "trust_drift_events" USING btree ("kind","source","source_id") WHERE "trust_drift_events"."status" = 'open';--> statement-breakpoint
CREATE INDEX "trust_drift_events_status_seq_idx" ON "trust_drift_events" USING btree ("status","seq");--> statement-breakpoint
CREATE INDEX "trust_drift_events_opened_idx" ON "trust_drift_events" USING btree ("opened_at");--> statement-breakpoint
CREATE INDEX "trust_drift_events_slot_seq_idx" ON "trust_drift_events" USING btree ("kind","source","source_id","seq");