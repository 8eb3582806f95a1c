CREATE TABLE "analytics_daily" (
	"metric" text NOT NULL,
	"day" date NOT NULL,
	"workspace_id" text NOT NULL,
	"toolset" text NOT NULL,
	"severity" text NOT NULL,
	"region" text NOT NULL,
	"value_micro" bigint NOT NULL,
	"count" bigint NOT NULL,
	"rolled_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analytics_daily_pk" PRIMARY KEY("metric","day","workspace_id","toolset","severity","region") INCLUDE ("value_micro","count")
);
--> statement-breakpoint
CREATE TABLE "analytics_sources" (
	"source" text PRIMARY KEY NOT NULL,
	"watermark" timestamp with time zone,
	"rolled_at" timestamp with time zone NOT NULL,
	"days_rolled" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_token_activity" (
	"token_id" uuid NOT NULL,
	"day" date NOT NULL,
	CONSTRAINT "api_token_activity_pk" PRIMARY KEY("token_id","day")
);
--> statement-breakpoint
ALTER TABLE "triage_postmortems" ADD COLUMN "created_at" timestamp with time zone;--> statement-breakpoint
UPDATE "triage_postmortems" SET "created_at" = "updated_at";--> statement-breakpoint
ALTER TABLE "triage_postmortems" ALTER COLUMN "created_at" SET NOT NULL;--> statement-breakpoint
INSERT INTO "api_token_activity" ("token_id", "day") SELECT "id", ("last_used_at" AT TIME ZONE 'UTC')::date FROM "api_tokens" WHERE "last_used_at" IS NOT NULL ON CONFLICT DO NOTHING;--> statement-breakpoint
CREATE INDEX "cost_records_updated_idx" ON "cost_records" USING btree ("updated_at","day");