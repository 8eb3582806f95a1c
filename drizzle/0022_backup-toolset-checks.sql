ALTER TABLE "backup_toolsets" ADD COLUMN "last_asked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "backup_toolsets" ADD COLUMN "last_check" jsonb;