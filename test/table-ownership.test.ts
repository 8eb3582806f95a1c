import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Each domain's SQL names only its own tables (docs/architecture.md, "Dependency rules"): what a
 * domain reads of another goes through the reads that domain lends (its `index.ts`), never a
 * statement over its tables. The import rules (`npm run depcheck`) keep a domain from importing
 * another's schema; this catches what they cannot see, a table named in SQL text. Platform tables
 * (jobs, audit, outbound) are shared and may be read by any domain.
 */

const root = join(import.meta.dirname, '..');

type Files = ReadonlyMap<string, string>;

/** Who owns each table: the domain (or `platform`) whose schema.ts declares it. */
export function tableOwners(files: Files): Map<string, string> {
  const owners = new Map<string, string>();
  for (const [path, text] of files) {
    if (!path.endsWith('schema.ts') || path.endsWith('.test.ts')) continue;
    for (const match of text.matchAll(/pgTable\(\s*['"]([a-z_0-9]+)['"]/g)) owners.set(match[1]!, areaOf(path));
  }
  return owners;
}

/** `src/domains/<d>/…` → d; anything else under src → platform. */
function areaOf(path: string): string {
  const parts = path.split('/');
  return parts[1] === 'domains' ? parts[2]! : 'platform';
}

/** Every place a domain's non-test source names another domain's table after FROM, JOIN, INTO, UPDATE, TABLE or EXISTS. */
export function foreignTableUses(files: Files): string[] {
  const owners = tableOwners(files);
  const found: string[] = [];
  for (const [path, text] of files) {
    if (!path.startsWith('src/domains/') || path.endsWith('.test.ts')) continue;
    const area = areaOf(path);
    for (const match of text.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE|EXISTS)\s+\(?\s*([a-z_][a-z_0-9]*)\b/gi)) {
      const owner = owners.get(match[1]!);
      if (owner !== undefined && owner !== area && owner !== 'platform') found.push(`${path}: ${match[1]} (${owner})`);
    }
  }
  return found;
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) files.set(relative(root, full).split(sep).join('/'), readFileSync(full, 'utf8'));
    }
  };
  walk(join(root, 'src'));
  return files;
}

describe('table ownership', () => {
  it('no domain names another domain’s table in its SQL', () => {
    const files = sourceFiles();
    // The scan sees the tables (a rename of pgTable would otherwise make this pass on nothing).
    expect(tableOwners(files).get('honeypot_events')).toBe('honeypot');
    expect(tableOwners(files).get('empire_incidents')).toBe('empire');
    expect(foreignTableUses(files)).toEqual([]);
  });

  it('reports a statement over another domain’s table, and not one over its own or a platform table', () => {
    const files = new Map([
      ['src/domains/a/schema.ts', "export const t = pgTable('a_rows', {});"],
      ['src/domains/b/schema.ts', "export const t = pgTable('b_rows', {});"],
      ['src/platform/jobs/schema.ts', "export const t = pgTable('job_runs', {});"],
      ['src/domains/b/repository.ts', 'sql`SELECT 1 FROM b_rows r JOIN a_rows x ON true WHERE EXISTS (SELECT 1 FROM job_runs)`'],
      ['src/domains/b/other.ts', 'sql`UPDATE a_rows SET n = 1`; const label = "a_rows"'],
      ['src/domains/b/b.test.ts', 'sql`SELECT * FROM a_rows`'],
    ]);
    expect(foreignTableUses(files)).toEqual(['src/domains/b/repository.ts: a_rows (a)', 'src/domains/b/other.ts: a_rows (a)']);
  });
});
