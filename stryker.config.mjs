// Mutation testing of the rule modules with StrykerJS (docs/testing.md, "Mutation testing").
// `npm run mutate` runs every module; `npx stryker run --mutate <file>` runs one. Not part of CI:
// a full run takes long on two cores.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  vitest: {
    // Only the tests that exercise these modules (vitest.mutate.config.ts), and of those only the
    // files that import the mutated module (related mode).
    configFile: 'vitest.mutate.config.ts',
    related: true,
  },
  // Each mutant runs only the tests that covered it in the dry run.
  coverageAnalysis: 'perTest',
  mutate: [
    'src/domains/honeypot/ingest/signature.ts',
    'src/domains/honeypot/ingest/service.ts',
    'src/domains/honeypot/ingest/tarpit.ts',
    'src/domains/honeypot/alerts/predicates.ts',
    'src/domains/empire/ingest/service.ts',
    'src/domains/empire/forecast/service.ts',
    'src/domains/empire/forecast/model.ts',
    'src/domains/empire/alerts/predicates.ts',
    'src/domains/provenance/admission.ts',
    'src/platform/rate-limit.ts',
    'src/platform/alerting/plan.ts',
    'src/platform/alerting/checks.ts',
    'src/platform/alerting/engine.ts',
    // Graph queries: the read check and the SQL compiler.
    'src/domains/graph/query/check.ts',
    'src/domains/graph/query/compile.ts',
    // Triage: the model-output checks and the postmortem strip; cost budgets.
    'src/domains/triage/agents/output.ts',
    'src/domains/triage/postmortems/strip.ts',
    'src/domains/cost/budgets/percent.ts',
    // Backups' table hashing and the audit chain's Merkle proofs.
    'src/domains/backups/hashing.ts',
    'src/platform/audit/merkle.ts',
    'src/domains/audit-chain/verify-proof.ts',
  ],
  ignorePatterns: ['reports', 'data', 'bench/results', '.stryker-tmp'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  // Two cores, shared with other work: one test runner at a time.
  concurrency: 1,
  timeoutMS: 30_000,
  timeoutFactor: 2,
  dryRunTimeoutMinutes: 20,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  // Scores are read per module in the report; a run never fails on them (it is not a CI gate).
  thresholds: { high: 90, low: 80, break: null },
};
