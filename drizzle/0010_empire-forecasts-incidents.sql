CREATE TABLE "empire_forecasts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"run_id" uuid NOT NULL,
	"toolset" text NOT NULL,
	"score" real NOT NULL,
	"level" text NOT NULL,
	"direction" text NOT NULL,
	"details" jsonb NOT NULL,
	"computed_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "empire_incidents" (
	"id" uuid PRIMARY KEY NOT NULL,
	"toolset" text NOT NULL,
	"severity" text NOT NULL,
	"title" text NOT NULL,
	"status" text NOT NULL,
	"source" text NOT NULL,
	"event_ids" jsonb NOT NULL,
	"details" jsonb NOT NULL,
	"opened_at" timestamp with time zone NOT NULL,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "empire_forecasts_toolset_idx" ON "empire_forecasts" USING btree ("toolset","computed_at");--> statement-breakpoint
CREATE INDEX "empire_incidents_opened_idx" ON "empire_incidents" USING btree ("opened_at","id");--> statement-breakpoint
CREATE INDEX "empire_incidents_toolset_idx" ON "empire_incidents" USING btree ("toolset","status");