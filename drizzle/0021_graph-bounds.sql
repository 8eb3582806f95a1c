CREATE SEQUENCE "public"."graph_change_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1;--> statement-breakpoint
ALTER TABLE "graph_edges" ADD COLUMN "change_seq" bigint DEFAULT nextval('graph_change_seq') NOT NULL;--> statement-breakpoint
ALTER TABLE "graph_nodes" ADD COLUMN "named_by" text[];--> statement-breakpoint
ALTER TABLE "graph_nodes" ADD COLUMN "change_seq" bigint DEFAULT nextval('graph_change_seq') NOT NULL;--> statement-breakpoint
CREATE INDEX "graph_edges_change_seq_idx" ON "graph_edges" USING btree ("change_seq");--> statement-breakpoint
CREATE INDEX "graph_nodes_change_seq_idx" ON "graph_nodes" USING btree ("change_seq");--> statement-breakpoint
-- A shared name belongs to one operator from now on: where several operators shared one name,
-- the earliest keeps it shared and the others become private to their owners (nothing is lost).
UPDATE "graph_saved_queries" q SET "visibility" = 'private'
  WHERE q."visibility" <> 'private' AND EXISTS (SELECT 1 FROM "graph_saved_queries" o
    WHERE o."name" = q."name" AND o."visibility" <> 'private' AND (o."created_at", o."id") < (q."created_at", q."id"));--> statement-breakpoint
CREATE UNIQUE INDEX "graph_saved_queries_shared_name_idx" ON "graph_saved_queries" USING btree ("name") WHERE "graph_saved_queries"."visibility" <> 'private';--> statement-breakpoint
-- Tenants and fingerprints that only toolsets' events name (no honeypot tenant or event has them)
-- are seen only by callers reaching one of those toolsets (docs/graph.md, "Who sees what").
UPDATE "graph_nodes" n SET "named_by" = coalesce((
    SELECT array_agg(DISTINCT ev."toolset" ORDER BY ev."toolset") FROM "graph_edges" e JOIN "graph_nodes" ev ON ev."id" = e."src"
    WHERE e."dst" = n."id" AND e."kind" IN ('FROM_TENANT', 'ABOUT') AND e."removed_run" IS NULL AND ev."toolset" IS NOT NULL), '{}')
  WHERE (n."kind" = 'Tenant' AND coalesce(n."props" ->> 'registered', 'false') <> 'true'
         AND NOT EXISTS (SELECT 1 FROM "graph_edges" s WHERE s."dst" = n."id" AND s."kind" = 'SEEN_ON' AND s."removed_run" IS NULL))
     OR (n."kind" = 'Fingerprint'
         AND NOT EXISTS (SELECT 1 FROM "graph_edges" s WHERE s."src" = n."id" AND s."kind" IN ('SEEN_ON', 'IN_CLUSTER', 'CLAIMS') AND s."removed_run" IS NULL));
