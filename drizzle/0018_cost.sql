CREATE TABLE "cost_alerts" (
	"id" uuid PRIMARY KEY NOT NULL,
	"budget_id" uuid NOT NULL,
	"scope" text NOT NULL,
	"scope_key" text NOT NULL,
	"month_bucket" text NOT NULL,
	"threshold_pct" integer NOT NULL,
	"monthly_micro_usd" bigint NOT NULL,
	"observed_micro_usd" bigint NOT NULL,
	"status" text NOT NULL,
	"fired_at" timestamp with time zone NOT NULL,
	"acked_at" timestamp with time zone,
	"acked_by" text,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "cost_budgets" (
	"id" uuid PRIMARY KEY NOT NULL,
	"scope" text NOT NULL,
	"scope_key" text NOT NULL,
	"monthly_micro_usd" bigint NOT NULL,
	"alert_at_pct" jsonb NOT NULL,
	"destinations" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cost_records" (
	"day" date NOT NULL,
	"toolset" text NOT NULL,
	"vendor" text NOT NULL,
	"sku" text NOT NULL,
	"workspace" text NOT NULL,
	"region" text NOT NULL,
	"amount_micro_usd" bigint NOT NULL,
	"units_micro" bigint NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "cost_alerts_threshold_idx" ON "cost_alerts" USING btree ("budget_id","month_bucket","threshold_pct");--> statement-breakpoint
CREATE INDEX "cost_alerts_status_idx" ON "cost_alerts" USING btree ("status","fired_at","id");--> statement-breakpoint
CREATE INDEX "cost_alerts_fired_idx" ON "cost_alerts" USING btree ("fired_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "cost_budgets_scope_idx" ON "cost_budgets" USING btree ("scope","scope_key");--> statement-breakpoint
CREATE UNIQUE INDEX "cost_records_key_idx" ON "cost_records" USING btree ("day","toolset","vendor","sku","workspace","region") INCLUDE ("amount_micro_usd","units_micro");--> statement-breakpoint
CREATE INDEX "cost_records_toolset_day_idx" ON "cost_records" USING btree ("toolset","day") INCLUDE ("vendor","sku","workspace","region","amount_micro_usd","units_micro");