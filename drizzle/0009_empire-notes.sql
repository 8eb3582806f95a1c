CREATE TABLE "empire_notes" (
	"id" uuid PRIMARY KEY NOT NULL,
	"target_kind" text NOT NULL,
	"event_id" text NOT NULL,
	"tenant" text NOT NULL,
	"note" text NOT NULL,
	"pinned" boolean NOT NULL,
	"color" text,
	"user_id" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "empire_notes_target_idx" ON "empire_notes" USING btree ("target_kind","event_id","tenant");