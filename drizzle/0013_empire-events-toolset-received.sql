DROP INDEX "empire_events_received_idx";--> statement-breakpoint
CREATE INDEX "empire_events_toolset_received_idx" ON "empire_events" USING btree ("toolset","received_at");