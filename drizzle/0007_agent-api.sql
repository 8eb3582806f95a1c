CREATE TABLE "agent_api_keys" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"plan" text NOT NULL,
	"prefix" text NOT NULL,
	"key_hash" text NOT NULL,
	"created_by" text,
	"created_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "agent_api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "agent_api_markers" (
	"key" text PRIMARY KEY NOT NULL,
	"done_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "agent_topics" (
	"slug" text PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"category" text NOT NULL,
	"summary" text NOT NULL,
	"body" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	"search" "tsvector" GENERATED ALWAYS AS (setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, summary), 'B') || setweight(to_tsvector('english'::regconfig, body), 'C')) STORED NOT NULL
);
--> statement-breakpoint
CREATE INDEX "agent_topics_search_idx" ON "agent_topics" USING gin ("search");--> statement-breakpoint
CREATE INDEX "agent_topics_created_idx" ON "agent_topics" USING btree ("created_at","slug");--> statement-breakpoint
CREATE INDEX "agent_topics_category_created_idx" ON "agent_topics" USING btree ("category","created_at","slug");--> statement-breakpoint
CREATE INDEX "agent_topics_title_idx" ON "agent_topics" USING btree ("title","slug");