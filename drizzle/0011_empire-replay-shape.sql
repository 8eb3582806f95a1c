ALTER TABLE "empire_events" ADD COLUMN "signed_members" smallint;--> statement-breakpoint
ALTER TABLE "empire_events" ADD COLUMN "ts_sent" text;--> statement-breakpoint
ALTER TABLE "empire_events" ADD COLUMN "attestation_id" uuid;