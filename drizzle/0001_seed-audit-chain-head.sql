-- The audit chain's single head row: appenders lock it, so appends stay strictly serial.
INSERT INTO "audit_chain_head" ("id", "seq_no", "head_hash", "updated_at")
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000', now())
ON CONFLICT ("id") DO NOTHING;
