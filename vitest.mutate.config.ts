import { defineConfig } from 'vitest/config';

/**
 * The test files StrykerJS runs against mutants of the rule modules (stryker.config.mjs,
 * docs/testing.md "Mutation testing"). Only files that exercise those modules: every mutant is run
 * against the tests that cover it, and a smaller set makes the initial dry run and each mutant's
 * run cheaper. PGlite only (the mutate script unsets DATABASE_URL): a mutant's behaviour does not
 * depend on the driver, and an in-process database needs no server per run.
 */
export const MUTATION_TEST_FILES = [
  // Pure rules: fast unit tests.
  'src/domains/honeypot/ingest/signature.test.ts',
  'src/domains/honeypot/ingest/signature.rules.test.ts',
  'src/domains/honeypot/ingest/tarpit.rules.test.ts',
  'src/domains/honeypot/alerts/predicates.rules.test.ts',
  'src/domains/honeypot/alerts/predicates.load.rules.test.ts',
  'src/domains/honeypot/ingest/ingest.schema.rules.test.ts',
  'src/domains/empire/forecast/model.test.ts',
  'src/domains/empire/forecast/model.rules.test.ts',
  'src/domains/empire/alerts/predicates.rules.test.ts',
  'src/domains/empire/alerts/predicates.load.rules.test.ts',
  'src/domains/provenance/admission.rules.test.ts',
  'src/platform/alerting/plan.rules.test.ts',
  'src/platform/alerting/checks.rules.test.ts',
  'src/platform/alerting/engine.rules.test.ts',
  'src/platform/rate-limit.test.ts',
  'src/platform/rate-limit.rules.test.ts',
  // Redis outages through a loopback TCP proxy (REDIS_URL; skipped without it).
  'src/platform/rate-limit.outage.rules.test.ts',
  // Rules bound to the database (each file opens one PGlite database).
  'src/domains/empire/forecast/forecast.rules.test.ts',
  'src/domains/honeypot/ingest/ingest.rules.test.ts',
  'src/domains/honeypot/ingest/ingest.service.rules.test.ts',
  'src/domains/honeypot/ingest/ingest.test.ts',
  'src/domains/honeypot/ingest/ingest-body.test.ts',
  'src/domains/honeypot/ingest/group-ingest.test.ts',
  'src/domains/empire/ingest/ingest.rules.test.ts',
  'src/domains/empire/ingest/ingest.schema.rules.test.ts',
  // The alert-rule engine over both kinds' real tables, through HTTP.
  'src/platform/alerting/lifecycle.test.ts',

  // Graph queries (check.ts, compile.ts): the pure tests, and the ones that run compiled queries
  // on one PGlite database (execute.test.ts, the documented examples).
  'src/domains/graph/query/compile.test.ts',
  'src/domains/graph/query/parser.test.ts',
  'src/domains/graph/query/*.rules.test.ts',
  'src/domains/graph/query/execute.test.ts',
  'src/domains/graph/query/examples.test.ts',

  // Triage output checks, the postmortem strip (triage), cost budgets. Not the per-agent tests
  // (their long property runs cover these modules only in passing and add no kills).
  'src/domains/triage/agents/output.test.ts',
  'src/domains/triage/agents/output.rules.test.ts',
  'src/domains/triage/postmortems/strip.test.ts',
  'src/domains/triage/postmortems/strip.rules.test.ts',
  'src/domains/cost/budgets/percent.test.ts',
  'src/domains/cost/budgets/percent.rules.test.ts',

  // Backups' hashing, the audit chain's Merkle proofs.
  'src/platform/audit/merkle.rules.test.ts',
  'src/domains/audit-chain/*.rules.test.ts',
  'src/domains/backups/hashing.rules.test.ts',
];

// PGlite only, whatever the shell has set.
delete process.env.DATABASE_URL;

export default defineConfig({
  test: {
    include: MUTATION_TEST_FILES,
    // Test files share their worker, so the database-bound ones reuse one migrated PGlite
    // (test/helpers/database.ts) instead of starting one per file and per mutant.
    isolate: false,
    env: { OBSERVATORY_TEST_DB_REUSE: '1' },
    // …but every module is imported afresh for each file, as with isolation.
    setupFiles: ['test/helpers/fresh-modules.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
