import { vi } from 'vitest';

// Mutation runs (vitest.mutate.config.ts) keep one worker without isolation, so the database-bound
// test files can reuse one PGlite (database.ts). Without isolation vitest would also keep
// every imported module between test files and between runs; importing them afresh for each file
// keeps module-level code (schemas, constants: Stryker's "static" mutants) under test.
vi.resetModules();
