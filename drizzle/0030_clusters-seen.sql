-- Cluster members carry their first and last seen time and latest UA; honeypot_rollup_seen keeps
-- what leaves the clusters table (docs/honeypot/dashboard.md, "Rollups"). Every existing clusters
-- row has a seen row with its whole history, so the existing rows start neutral (the merge takes
-- the seen row's values) and no row is rewritten: a constant default makes ADD COLUMN instant.
ALTER TABLE "honeypot_rollup_clusters" ADD COLUMN "first_seen" timestamp with time zone NOT NULL DEFAULT 'infinity';--> statement-breakpoint
ALTER TABLE "honeypot_rollup_clusters" ADD COLUMN "last_seen" timestamp with time zone NOT NULL DEFAULT '-infinity';--> statement-breakpoint
ALTER TABLE "honeypot_rollup_clusters" ADD COLUMN "ua_sample" text NOT NULL DEFAULT '';--> statement-breakpoint
ALTER TABLE "honeypot_rollup_clusters" ALTER COLUMN "first_seen" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "honeypot_rollup_clusters" ALTER COLUMN "last_seen" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "honeypot_rollup_clusters" ALTER COLUMN "ua_sample" DROP DEFAULT;
