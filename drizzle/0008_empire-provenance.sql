CREATE TABLE "empire_events" (
	"event_id" uuid PRIMARY KEY NOT NULL,
	"toolset" text NOT NULL,
	"sender_id" text NOT NULL,
	"event_type" text NOT NULL,
	"ts" timestamp with time zone NOT NULL,
	"tenant" text,
	"caused_by" text,
	"payload" jsonb NOT NULL,
	"event_hash" text NOT NULL,
	"key_id" uuid,
	"compat_mode" boolean NOT NULL,
	"schema_version" integer NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"body_bytes" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "empire_ingest_samples" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"toolset" text,
	"received_at" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	"latency_ms" real NOT NULL,
	"event_count" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "provenance_attestations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"toolset" text NOT NULL,
	"source" text NOT NULL,
	"source_id" text NOT NULL,
	"kind" text NOT NULL,
	"event_hash" text NOT NULL,
	"signature_b64" text,
	"toolset_key_id" uuid,
	"attested_at" timestamp with time zone,
	"accepted_at" timestamp with time zone NOT NULL,
	"compat_mode" boolean NOT NULL,
	"rejection_reason" text
);
--> statement-breakpoint
CREATE TABLE "provenance_keys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"toolset" text NOT NULL,
	"public_key_b64" text NOT NULL,
	"status" text NOT NULL,
	"owner_user_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"retired_at" timestamp with time zone
);
--> statement-breakpoint
CREATE UNIQUE INDEX "empire_events_toolset_sender_idx" ON "empire_events" USING btree ("toolset","sender_id");--> statement-breakpoint
CREATE INDEX "empire_events_toolset_ts_idx" ON "empire_events" USING btree ("toolset","ts");--> statement-breakpoint
CREATE INDEX "empire_events_caused_by_idx" ON "empire_events" USING btree ("toolset","caused_by");--> statement-breakpoint
CREATE INDEX "empire_events_received_idx" ON "empire_events" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "empire_ingest_samples_received_idx" ON "empire_ingest_samples" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "empire_ingest_samples_toolset_idx" ON "empire_ingest_samples" USING btree ("toolset","received_at");--> statement-breakpoint
CREATE INDEX "provenance_attestations_accepted_idx" ON "provenance_attestations" USING btree ("accepted_at","id");--> statement-breakpoint
CREATE INDEX "provenance_attestations_toolset_accepted_idx" ON "provenance_attestations" USING btree ("toolset","accepted_at","id");--> statement-breakpoint
CREATE INDEX "provenance_keys_toolset_created_idx" ON "provenance_keys" USING btree ("toolset","created_at","id");--> statement-breakpoint
CREATE INDEX "provenance_keys_created_idx" ON "provenance_keys" USING btree ("created_at","id");