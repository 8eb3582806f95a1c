import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every environment variable the service reads is in the README's configuration table, and every
 * variable the table lists is read somewhere: an operator who sets a documented variable gets its
 * effect, and nothing that changes behaviour is missing from the table.
 *
 * "Read" means, in any non-test source file under src/: `process.env.NAME` or
 * `process.env['NAME']`; `env.NAME` or `env['NAME']` (not an assignment); or a config helper call
 * `helper(env, 'NAME', …)` (src/platform/config.ts reads every variable through those).
 */

const root = new URL('..', import.meta.url).pathname;

/** Variables a test rig reads or sets; they are no configuration of the service. */
const TEST_ONLY: Record<string, string> = {};

/** Variables written, not read: handed to a child process. */
const WRITTEN_FOR_CHILDREN: Record<string, string> = {
  PGPASSWORD: 'set for pg_dump and pg_restore from DATABASE_URL\'s password (src/domains/backups/engines.ts), never read',
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) && !/\.test\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

const NAME = '[A-Z][A-Z0-9_]*';
const READS = [
  new RegExp(`\\bprocess\\.env\\.(${NAME})\\b(?!\\s*=[^=])`, 'g'),
  new RegExp(`\\bprocess\\.env\\[\\s*['"\`](${NAME})['"\`]\\s*\\](?!\\s*=[^=])`, 'g'),
  new RegExp(`\\benv\\.(${NAME})\\b(?!\\s*=[^=])`, 'g'),
  new RegExp(`\\benv\\[\\s*['"\`](${NAME})['"\`]\\s*\\](?!\\s*=[^=])`, 'g'),
  new RegExp(`\\(\\s*env\\s*,\\s*['"\`](${NAME})['"\`]`, 'g'),
];

/** Every variable name read in the given source text. */
export function readsIn(text: string): string[] {
  const names = new Set<string>();
  for (const pattern of READS) for (const match of text.matchAll(pattern)) names.add(match[1]!);
  return [...names];
}

/** name -> files (relative) that read it. */
function readVariables(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles(join(root, 'src'))) {
    for (const name of readsIn(readFileSync(file, 'utf8'))) {
      found.set(name, [...(found.get(name) ?? []), relative(root, file)]);
    }
  }
  return found;
}

/** Every variable named in the first cell of a row of the README's "Configuration" table. */
function documentedVariables(): Set<string> {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('Configuration'));
  if (!section) throw new Error('README.md has no "## Configuration" section');
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const firstCell = line.split('|')[1]!;
    for (const match of firstCell.matchAll(new RegExp(`\`(${NAME})\``, 'g'))) names.add(match[1]!);
  }
  return names;
}

describe('environment variables in the README', () => {
  const read = readVariables();
  const documented = documentedVariables();
  const ignored = new Set([...Object.keys(TEST_ONLY), ...Object.keys(WRITTEN_FOR_CHILDREN)]);

  it('finds the reads it should (the extractor is not blind)', () => {
    expect(readsIn(`const a = process.env.FOO_BAR; const b = process.env['BAZ'];`).sort()).toEqual(['BAZ', 'FOO_BAR']);
    expect(readsIn(`integer(env, 'PORT', 8080); text(env, "HOST"); const t = env.TENANT;`).sort()).toEqual(['HOST', 'PORT', 'TENANT']);
    expect(readsIn(`env.PGPASSWORD = password; env['X'] = 1;`)).toEqual([]);
    expect(read.has('OBSERVATORY_ADMIN_TOKEN')).toBe(true);
    expect(read.has('OBSERVATORY_AGENT_API_TENANT')).toBe(true);
    expect(read.size).toBeGreaterThan(60);
  });

  it('every variable the code reads is documented', () => {
    const missing = [...read.keys()].filter((name) => !documented.has(name) && !ignored.has(name)).sort();
    expect(missing.map((name) => `${name} (read in ${read.get(name)!.join(', ')})`)).toEqual([]);
  });

  it('every documented variable is read by the code', () => {
    const unread = [...documented].filter((name) => !read.has(name)).sort();
    expect(unread).toEqual([]);
  });

  it('the exclusions are still needed', () => {
    for (const name of Object.keys(TEST_ONLY)) expect(read.has(name), `${name} is no longer read: drop it from TEST_ONLY`).toBe(true);
    for (const name of Object.keys(WRITTEN_FOR_CHILDREN)) expect(documented.has(name), `${name} is written for children, not configuration`).toBe(false);
  });
});
