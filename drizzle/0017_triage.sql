CREATE TABLE "triage_agents" (
	"agent" text PRIMARY KEY NOT NULL,
	"active_version" text NOT NULL,
	"previous_version" text,
	"latest_known_version" text NOT NULL,
	"changed_at" timestamp with time zone NOT NULL,
	"change_reason" text NOT NULL,
	"rolled_back_from" text
);
--> statement-breakpoint
CREATE TABLE "triage_budgets" (
	"month" text NOT NULL,
	"toolset" text NOT NULL,
	"budget_usd_cents" bigint NOT NULL,
	"degraded_until" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL,
	"updated_by" text NOT NULL,
	CONSTRAINT "triage_budgets_month_toolset_pk" PRIMARY KEY("month","toolset")
);
--> statement-breakpoint
CREATE TABLE "triage_postmortems" (
	"incident_id" uuid PRIMARY KEY NOT NULL,
	"draft" jsonb NOT NULL,
	"run_id" uuid,
	"source" text NOT NULL,
	"stripped_event_ids" jsonb NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"updated_by" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "triage_proposals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"run_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"status" text NOT NULL,
	"agent" text NOT NULL,
	"agent_version" text NOT NULL,
	"toolset" text,
	"title" text NOT NULL,
	"payload" jsonb,
	"backtest" jsonb,
	"dedupe_key" text,
	"auto_reject_reason" text,
	"evidence_event_ids" jsonb NOT NULL,
	"window_start" timestamp with time zone,
	"window_end" timestamp with time zone,
	"focal_event_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone,
	"decided_by" text,
	"decision_notes" text,
	"opened_incident_id" uuid,
	"created_saved_view_id" uuid,
	"created_alert_rule_id" uuid
);
--> statement-breakpoint
CREATE TABLE "triage_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"agent" text NOT NULL,
	"agent_version" text NOT NULL,
	"engine" text NOT NULL,
	"model" text NOT NULL,
	"toolset" text NOT NULL,
	"toolsets" jsonb NOT NULL,
	"outcome" text NOT NULL,
	"error_text" text,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone NOT NULL,
	"window_start" timestamp with time zone,
	"window_end" timestamp with time zone,
	"params" jsonb NOT NULL,
	"system_prompt_hash" text NOT NULL,
	"user_message" text NOT NULL,
	"model_text" text NOT NULL,
	"prompt_tokens" integer NOT NULL,
	"completion_tokens" integer NOT NULL,
	"attempts" smallint NOT NULL,
	"digest" text NOT NULL,
	"proposal_ids" jsonb NOT NULL,
	"auto_rejected" integer NOT NULL,
	"schema_version" smallint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "triage_saved_views" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"toolset" text,
	"rationale" jsonb NOT NULL,
	"filters" jsonb NOT NULL,
	"proposal_id" uuid NOT NULL,
	"created_by" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "triage_proposals_list_idx" ON "triage_proposals" USING btree ("kind","status","created_at","id");--> statement-breakpoint
CREATE INDEX "triage_proposals_created_idx" ON "triage_proposals" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "triage_proposals_agent_idx" ON "triage_proposals" USING btree ("agent","agent_version","decided_at");--> statement-breakpoint
CREATE UNIQUE INDEX "triage_proposals_pending_key_idx" ON "triage_proposals" USING btree ("dedupe_key") WHERE "triage_proposals"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "triage_runs_started_idx" ON "triage_runs" USING btree ("started_at");--> statement-breakpoint
CREATE INDEX "triage_runs_agent_idx" ON "triage_runs" USING btree ("agent","started_at");--> statement-breakpoint
CREATE INDEX "triage_saved_views_created_idx" ON "triage_saved_views" USING btree ("created_at","id");