CREATE TABLE "honeypot_rollup_clusters" (
	"tenant_id" uuid NOT NULL,
	"cluster_key" uuid NOT NULL,
	"fingerprint_id" text NOT NULL,
	"ua_class" text NOT NULL,
	"asn" bigint NOT NULL,
	"ja4" text NOT NULL,
	"events_24h" bigint NOT NULL,
	"events_7d" bigint NOT NULL,
	"events_30d" bigint NOT NULL,
	CONSTRAINT "honeypot_rollup_clusters_pk" PRIMARY KEY("tenant_id","cluster_key","fingerprint_id","ua_class","asn","ja4")
);
--> statement-breakpoint
CREATE TABLE "honeypot_rollup_dims" (
	"tenant_id" uuid NOT NULL,
	"dim" text NOT NULL,
	"key" uuid NOT NULL,
	"value" text NOT NULL,
	"events_24h" bigint NOT NULL,
	"events_7d" bigint NOT NULL,
	"events_30d" bigint NOT NULL,
	CONSTRAINT "honeypot_rollup_dims_pk" PRIMARY KEY("tenant_id","dim","key")
);
--> statement-breakpoint
CREATE TABLE "honeypot_rollup_hourly" (
	"hour" timestamp with time zone NOT NULL,
	"tenant_id" uuid NOT NULL,
	"events" bigint NOT NULL,
	CONSTRAINT "honeypot_rollup_hourly_pk" PRIMARY KEY("hour","tenant_id")
);
--> statement-breakpoint
CREATE TABLE "honeypot_rollup_seen" (
	"tenant_id" uuid NOT NULL,
	"fingerprint_id" text NOT NULL,
	"ua_class" text NOT NULL,
	"asn" bigint NOT NULL,
	"ja4" text NOT NULL,
	"first_seen" timestamp with time zone NOT NULL,
	"last_seen" timestamp with time zone NOT NULL,
	"ua_sample" text NOT NULL,
	CONSTRAINT "honeypot_rollup_seen_pk" PRIMARY KEY("tenant_id","fingerprint_id","ua_class","asn","ja4")
);
--> statement-breakpoint
CREATE TABLE "honeypot_rollup_state" (
	"id" smallint PRIMARY KEY NOT NULL,
	"from_24h" timestamp with time zone NOT NULL,
	"from_7d" timestamp with time zone NOT NULL,
	"from_30d" timestamp with time zone NOT NULL,
	"advanced_at" timestamp with time zone NOT NULL
);
