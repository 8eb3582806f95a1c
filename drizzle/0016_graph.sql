CREATE TABLE "graph_edges" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"src" bigint NOT NULL,
	"dst" bigint NOT NULL,
	"props" jsonb NOT NULL,
	"first_run" bigint NOT NULL,
	"removed_run" bigint,
	"materialised_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "graph_kind_state" (
	"kind" text PRIMARY KEY NOT NULL,
	"watermark_at" timestamp with time zone,
	"watermark_id" text,
	"materialised_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "graph_nodes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"key" text NOT NULL,
	"toolset" text,
	"tenant" text,
	"props" jsonb NOT NULL,
	"first_run" bigint NOT NULL,
	"removed_run" bigint,
	"materialised_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "graph_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"trigger" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"outcome" text NOT NULL,
	"duration_ms" integer,
	"error_text" text,
	"stats" jsonb NOT NULL,
	"digest" text,
	"digest_acc" text,
	"node_count" bigint,
	"edge_count" bigint,
	"watermarks" jsonb NOT NULL,
	CONSTRAINT "graph_runs_seq_unique" UNIQUE("seq")
);
--> statement-breakpoint
CREATE TABLE "graph_saved_queries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"owner_user_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"query" text NOT NULL,
	"visibility" text NOT NULL,
	"run_count" integer NOT NULL,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "graph_edges_kind_src_dst_idx" ON "graph_edges" USING btree ("kind","src","dst");--> statement-breakpoint
CREATE INDEX "graph_edges_src_idx" ON "graph_edges" USING btree ("src","kind");--> statement-breakpoint
CREATE INDEX "graph_edges_dst_idx" ON "graph_edges" USING btree ("dst","kind");--> statement-breakpoint
CREATE INDEX "graph_edges_first_run_idx" ON "graph_edges" USING btree ("first_run");--> statement-breakpoint
CREATE INDEX "graph_edges_removed_run_idx" ON "graph_edges" USING btree ("removed_run") WHERE "graph_edges"."removed_run" is not null;--> statement-breakpoint
CREATE UNIQUE INDEX "graph_nodes_kind_key_idx" ON "graph_nodes" USING btree ("kind","key");--> statement-breakpoint
CREATE INDEX "graph_nodes_first_run_idx" ON "graph_nodes" USING btree ("first_run");--> statement-breakpoint
CREATE INDEX "graph_nodes_removed_run_idx" ON "graph_nodes" USING btree ("removed_run") WHERE "graph_nodes"."removed_run" is not null;--> statement-breakpoint
CREATE INDEX "graph_runs_started_idx" ON "graph_runs" USING btree ("started_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "graph_saved_queries_owner_name_idx" ON "graph_saved_queries" USING btree ("owner_user_id","name");--> statement-breakpoint
CREATE INDEX "graph_saved_queries_name_idx" ON "graph_saved_queries" USING btree ("name");--> statement-breakpoint
CREATE INDEX "empire_events_received_idx" ON "empire_events" USING btree ("received_at","event_id");