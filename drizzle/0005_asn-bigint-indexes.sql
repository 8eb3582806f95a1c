ALTER TABLE "honeypot_events" ALTER COLUMN "asn" SET DATA TYPE bigint;--> statement-breakpoint
ALTER TABLE "honeypot_fingerprints" ALTER COLUMN "asn" SET DATA TYPE bigint;--> statement-breakpoint
CREATE INDEX "honeypot_events_tenant_received_idx" ON "honeypot_events" USING btree ("tenant_id","received_at");--> statement-breakpoint
CREATE INDEX "honeypot_tarpits_history_idx" ON "honeypot_tarpits" USING btree ("tenant_id","triggered_at");