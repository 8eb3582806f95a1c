CREATE TABLE "honeypot_alert_rules" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"name" text NOT NULL,
	"enabled" boolean NOT NULL,
	"predicate" jsonb NOT NULL,
	"destinations" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_fired_at" timestamp with time zone,
	"silence_until" timestamp with time zone,
	"evaluated_until" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "honeypot_events" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"sender_id" text,
	"ts" timestamp with time zone NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"query" text,
	"ua_raw" text NOT NULL,
	"ip_hash" text NOT NULL,
	"ja4" text,
	"asn" integer,
	"country" text,
	"attribution_source" text,
	"referer" text,
	"headers" jsonb NOT NULL,
	"ua_class" text NOT NULL,
	"vendor_id" text,
	"proof" text,
	"evidence" jsonb NOT NULL,
	"fingerprint_id" text NOT NULL,
	"schema_version" smallint NOT NULL,
	"body_bytes" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "honeypot_fingerprints" (
	"tenant_id" uuid NOT NULL,
	"fingerprint_id" text NOT NULL,
	"ja4" text,
	"ua_normalized" text NOT NULL,
	"ua_sample" text NOT NULL,
	"last_ua_class" text NOT NULL,
	"asn" integer,
	"first_seen" timestamp with time zone NOT NULL,
	"last_seen" timestamp with time zone NOT NULL,
	"event_count" bigint NOT NULL,
	"liar_count" bigint NOT NULL,
	CONSTRAINT "honeypot_fingerprints_tenant_id_fingerprint_id_pk" PRIMARY KEY("tenant_id","fingerprint_id")
);
--> statement-breakpoint
CREATE TABLE "honeypot_settings" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "honeypot_tarpits" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" uuid NOT NULL,
	"fingerprint_id" text NOT NULL,
	"triggered_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"delay_ms" integer NOT NULL,
	"reason" text NOT NULL,
	"liar_event_count" integer NOT NULL,
	"active" boolean NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "honeypot_tenants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"notes" text,
	"signing_secret" text NOT NULL,
	"previous_secret" text,
	"previous_valid_until" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"disabled_at" timestamp with time zone,
	CONSTRAINT "honeypot_tenants_slug_unique" UNIQUE("slug")
);
--> statement-breakpoint
CREATE TABLE "ingest_samples" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_slug" text,
	"received_at" timestamp with time zone NOT NULL,
	"outcome" text NOT NULL,
	"latency_ms" real NOT NULL,
	"event_count" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vendor_range_snapshots" (
	"vendor_id" text PRIMARY KEY NOT NULL,
	"source_url" text NOT NULL,
	"creation_time" text,
	"fetched_at" timestamp with time zone NOT NULL,
	"cidrs" jsonb NOT NULL,
	"sha256" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "honeypot_alert_rules_tenant_idx" ON "honeypot_alert_rules" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "honeypot_events_sender_idx" ON "honeypot_events" USING btree ("tenant_id","sender_id");--> statement-breakpoint
CREATE INDEX "honeypot_events_tenant_ts_idx" ON "honeypot_events" USING btree ("tenant_id","ts");--> statement-breakpoint
CREATE INDEX "honeypot_events_fingerprint_idx" ON "honeypot_events" USING btree ("tenant_id","fingerprint_id","ts");--> statement-breakpoint
CREATE INDEX "honeypot_events_received_idx" ON "honeypot_events" USING btree ("received_at");--> statement-breakpoint
CREATE INDEX "honeypot_fingerprints_ua_idx" ON "honeypot_fingerprints" USING btree ("ua_normalized");--> statement-breakpoint
CREATE UNIQUE INDEX "honeypot_tarpits_active_idx" ON "honeypot_tarpits" USING btree ("tenant_id","fingerprint_id") WHERE "honeypot_tarpits"."active";--> statement-breakpoint
CREATE INDEX "honeypot_tarpits_expiry_idx" ON "honeypot_tarpits" USING btree ("active","expires_at");--> statement-breakpoint
CREATE INDEX "ingest_samples_received_idx" ON "ingest_samples" USING btree ("received_at");