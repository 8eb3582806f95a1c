CREATE TABLE "agent_topic_revision" (
	"id" smallint PRIMARY KEY NOT NULL,
	"token" uuid NOT NULL,
	"changed_at" timestamp with time zone NOT NULL
);
