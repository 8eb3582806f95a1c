CREATE TABLE "empire_alert_rules" (
	"id" uuid PRIMARY KEY NOT NULL,
	"toolset" text,
	"tenant" text,
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
CREATE INDEX "empire_alert_rules_toolset_idx" ON "empire_alert_rules" USING btree ("toolset","created_at","id");