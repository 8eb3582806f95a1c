import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The dependency rules CI checks (`npm run depcheck`, .dependency-cruiser.cjs; docs/architecture.md
 * "Dependency rules") catch what they name: the real tree has no violation, so this runs the same
 * configuration over a small tree that breaks each rule once and keeps one of each allowed case.
 */
const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'depcheck-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const files: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true } }),
  'src/domains/a/service.ts': 'export const y = 1;',
  'src/domains/a/index.ts': "export { y } from './service.ts';",
  // Platform reaching into a domain.
  'src/platform/p.ts': "import { y } from '../domains/a/service.ts';\nexport const x = y;",
  // A domain reaching past another's face, and a cycle inside a domain.
  'src/domains/b/service.ts': "import { y } from '../a/service.ts';\nimport { z } from './c.ts';\nexport const w = y + z;",
  'src/domains/b/c.ts': "import { w } from './service.ts';\nexport const z = 1;\nexport const v = w;",
  // Allowed: through the face, and a test arranging through internals.
  'src/domains/b/ok.ts': "import { y } from '../a/index.ts';\nexport const ok = y;",
  'src/domains/b/b.test.ts': "import { y } from '../a/service.ts';\nexport const t = y;",
};

describe('the dependency rules', () => {
  it('report platform importing a domain, a domain past another face, and a cycle; nothing else', () => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), text);
    }
    let output = '';
    try {
      output = execFileSync(join(root, 'node_modules/.bin/depcruise'), ['src', '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'], { cwd: work, encoding: 'utf8' });
    } catch (error) {
      // depcruise exits non-zero when it finds errors; its report is still on stdout.
      output = (error as { stdout: string }).stdout;
    }
    const violations = (JSON.parse(output) as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } }).summary.violations;
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    expect(found.filter((f) => !f.startsWith('no-cycle'))).toEqual([
      'domain-face-only: src/domains/b/service.ts → src/domains/a/service.ts',
      'platform-imports-no-domain: src/platform/p.ts → src/domains/a/service.ts',
    ]);
    expect(found.some((f) => f.startsWith('no-cycle: src/domains/b/'))).toBe(true);
  });
});
