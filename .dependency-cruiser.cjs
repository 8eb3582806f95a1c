/**
 * The dependency rules of the code base (docs/architecture.md, "Dependency rules"), checked by
 * dependency-cruiser in CI (`npm run depcheck`, .ci/run).
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'platform-imports-no-domain',
      comment: 'src/platform is what every domain uses; it imports no domain.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/domains/' },
    },
    {
      name: 'domain-face-only',
      comment:
        "A domain uses another domain only through its index.ts (its face); another domain's services, repositories and tables are internals. Tests may arrange their preconditions through another domain's internals.",
      severity: 'error',
      from: { path: '^src/domains/([^/]+)/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/domains/([^/]+)/', pathNot: ['^src/domains/$1/', '^src/domains/[^/]+/index\\.ts$'] },
    },
    {
      name: 'no-cycle',
      comment: 'Modules form no import cycle (type-only imports included).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)node_modules/' },
  },
};
