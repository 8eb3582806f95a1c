import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storageFreeTestFiles, storageReachOf, testFilesUnder } from './storage-files.ts';

/**
 * The PostgreSQL pass of CI skips the files storage-files.ts finds cannot reach a database, so a
 * file it wrongly calls storage-free would lose its PostgreSQL run: every way of loading code
 * must be followed, and whatever cannot be followed must count as reaching a database.
 */
const root = mkdtempSync(join(tmpdir(), 'observatory-storage-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function files(tree: Record<string, string>): void {
  for (const [name, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(root, name)), { recursive: true });
    writeFileSync(join(root, name), text);
  }
}

files({
  'driver.ts': "import pg from 'pg';\nexport type Row = { n: number };\nexport const open = () => new pg.Pool();\n",
  'pure.ts': "export const add = (a: number, b: number) => a + b;\n",
  'via-index/index.ts': "export { open } from '../driver.ts';\n",
  'worker.mjs': "import { PGlite } from '@electric-sql/pglite';\nnew PGlite();\n",
  'check.cjs': "module.exports = (x) => x;\n",
});

const cases: [string, string, boolean][] = [
  ['a pure module', "import { add } from './pure.ts';\n", false],
  ['a driver two imports away', "import { open } from './via-index';\n", true],
  ['only types of a driver module (erased)', "import type { Row } from './driver.ts';\n", false],
  ['a type-only name in a value import (the module is still loaded)', "import { type Row } from './driver.ts';\n", true],
  ['a re-export', "export * from './driver.ts';\n", true],
  ['a type-only re-export (erased)', "export type { Row } from './driver.ts';\n", false],
  ['a dynamic import of a literal', "await import('./driver.ts');\n", true],
  ['a dynamic import of a computed name', "const name = './pure.ts';\nawait import(name);\n", true],
  ['a require', "require('./driver.ts');\n", true],
  ["a computed require of a package's package.json", 'const name = "x";\nrequire(`${name}/package.json`);\n', false],
  ['a mocked module', "vi.mock('./driver.ts', () => ({}));\n", true],
  ['a worker script named next to the module', "import { Worker } from 'node:worker_threads';\nnew Worker(new URL('./worker.mjs', import.meta.url));\n", true],
  ['a harmless script named next to the module', "import { createRequire } from 'node:module';\ncreateRequire(import.meta.url)(new URL('./check.cjs', import.meta.url).pathname);\n", false],
  ['a worker from a computed path', "import { Worker } from 'node:worker_threads';\nconst file = process.argv[2]!;\nnew Worker(file);\n", true],
  ['a child process', "import { spawn } from 'node:child_process';\nspawn('true');\n", true],
  ['an import that does not resolve', "import './missing.ts';\n", true],
];

describe('which test files can reach a database', () => {
  it.each(cases)('%s', (_, source, reaches) => {
    const name = `case-${cases.findIndex((c) => c[1] === source)}.test.ts`;
    files({ [name]: source });
    expect(storageReachOf(name, root) !== null, String(storageReachOf(name, root))).toBe(reaches);
  });

  it('names the chain to the driver', () => {
    files({ 'chain.test.ts': "import { open } from './via-index';\n" });
    expect(storageReachOf('chain.test.ts', root)).toEqual(['chain.test.ts', 'via-index/index.ts', 'driver.ts', 'pg']);
  });

  it('on this repository: the database helper reaches one, a pure rule test does not', () => {
    const repo = resolve(import.meta.dirname, '..');
    const all = testFilesUnder(repo, ['src', 'test']);
    const free = storageFreeTestFiles(all, repo);
    expect(all).toContain('src/platform/alerting/plan.rules.test.ts');
    expect(free).toContain('src/platform/alerting/plan.rules.test.ts');
    expect(free).not.toContain('src/platform/audit/audit.test.ts');
    expect(free).not.toContain('test/contract.test.ts');
    // Database-bound rule tests follow the same naming as pure ones: names decide nothing.
    expect(free).not.toContain('src/domains/empire/forecast.rules.test.ts');
  });
});
