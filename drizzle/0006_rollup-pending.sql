CREATE TABLE "honeypot_rollup_pending" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"event_ids" uuid[] NOT NULL,
	"fingerprints" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
