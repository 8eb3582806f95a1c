CREATE TABLE "chaos_experiments" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"slug" text NOT NULL,
	"kind" text NOT NULL,
	"target" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"blast_radius" text NOT NULL,
	"recovery_slo_sec" integer NOT NULL,
	"cooldown_minutes" integer NOT NULL,
	"severity" text NOT NULL,
	"status" text NOT NULL,
	"owner_user_id" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chaos_freeze" (
	"scope" text PRIMARY KEY NOT NULL,
	"frozen" boolean NOT NULL,
	"reason" text DEFAULT '' NOT NULL,
	"updated_by" text,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chaos_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"experiment_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"target" text NOT NULL,
	"recovery_slo_sec" integer NOT NULL,
	"trigger" text NOT NULL,
	"phase" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"window_ends_at" timestamp with time zone NOT NULL,
	"undone_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"heartbeat_at" timestamp with time zone NOT NULL,
	"instance_id" text NOT NULL,
	"ended_at" timestamp with time zone,
	"outcome" text NOT NULL,
	"observed_recovery_sec" double precision,
	"error_text" text,
	"abort_reason" text,
	"measurements" jsonb NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "chaos_experiments_slug_idx" ON "chaos_experiments" USING btree ("slug");--> statement-breakpoint
CREATE INDEX "chaos_experiments_created_idx" ON "chaos_experiments" USING btree ("created_at","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "chaos_runs_one_open_idx" ON "chaos_runs" USING btree (("ended_at" IS NULL)) WHERE "chaos_runs"."ended_at" IS NULL;--> statement-breakpoint
CREATE INDEX "chaos_runs_started_idx" ON "chaos_runs" USING btree ("started_at","seq");--> statement-breakpoint
CREATE INDEX "chaos_runs_experiment_idx" ON "chaos_runs" USING btree ("experiment_id","started_at");--> statement-breakpoint
INSERT INTO "chaos_freeze" ("scope", "frozen", "reason", "updated_by", "updated_at") VALUES ('global', false, '', NULL, now());
