CREATE TABLE "toolset_policies" (
	"toolset" text PRIMARY KEY NOT NULL,
	"require_signed" boolean NOT NULL,
	"updated_by" text,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "toolsets" jsonb;--> statement-breakpoint
ALTER TABLE "passkeys" ADD COLUMN "scopes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "scopes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "webauthn_challenges" ADD COLUMN "client_ip" text;--> statement-breakpoint
CREATE INDEX "webauthn_challenges_client_ip_idx" ON "webauthn_challenges" USING btree ("client_ip","expires_at");--> statement-breakpoint
CREATE INDEX "webauthn_challenges_expires_idx" ON "webauthn_challenges" USING btree ("expires_at");