import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/errors.md promises clients every `reason` the service can answer, with its status. This
 * reads the source for every place a reason is produced and fails when one is missing from the
 * table (or listed under another status), so a new refusal cannot ship undocumented.
 */
const root = fileURLToPath(new URL('..', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** status → reasons, from the table rows `| 400 | `a`, `b` | when |`. */
export function documentedReasons(markdown: string): Map<number, Set<string>> {
  const documented = new Map<number, Set<string>>();
  for (const line of markdown.split('\n')) {
    const row = /^\|\s*(\d{3})\s*\|([^|]*)\|/.exec(line);
    if (!row) continue;
    const status = Number(row[1]);
    const reasons = documented.get(status) ?? new Set<string>();
    for (const match of row[2]!.matchAll(/`([a-z][a-z0-9-]*)`/g)) reasons.add(match[1]!);
    documented.set(status, reasons);
  }
  return documented;
}

interface ProducedReason {
  reason: string;
  /** null where the source does not say the status next to the reason (a refusal envelope, a lookup table). */
  status: number | null;
  file: string;
}

/** Every reason a source file produces, with its status where the code states it beside it. */
export function producedReasons(file: string, source: string): ProducedReason[] {
  const found: ProducedReason[] = [];
  const add = (reason: string, status: number | null) => found.push({ reason, status, file });
  for (const m of source.matchAll(/new ServiceError\(\s*(\d{3}),\s*'([a-z][a-z0-9-]*)'/g)) add(m[2]!, Number(m[1]));
  for (const m of source.matchAll(/\bbadRequest\(\s*'([a-z][a-z0-9-]*)'/g)) add(m[1]!, 400);
  for (const m of source.matchAll(/\bexpected\(\s*(\d{3}),\s*'([a-z][a-z0-9-]*)'/g)) add(m[2]!, Number(m[1]));
  // Refusal envelopes (`ok: false, reason`), parser problems and tables of refusal sentences.
  for (const m of source.matchAll(/\b(?:reason|problem):\s*'([a-z][a-z0-9-]*)'/g)) add(m[1]!, null);
  for (const table of source.matchAll(/const [A-Z_]*REFUSALS = \{([^}]*)\}/g)) {
    for (const m of table[1]!.matchAll(/'([a-z][a-z0-9-]*)':/g)) add(m[1]!, null);
  }
  return found;
}

describe('docs/errors.md', () => {
  const documented = documentedReasons(readFileSync(join(root, 'docs/errors.md'), 'utf8'));
  const produced = sourceFiles(join(root, 'src')).flatMap((file) => producedReasons(file.slice(root.length), readFileSync(file, 'utf8')));

  it('finds the reasons the service produces (the scan is not blind)', () => {
    const reasons = new Set(produced.map((p) => p.reason));
    for (const known of ['unauthorized', 'forbidden', 'not-found', 'conflict', 'unavailable', 'invalid-body', 'bad-signature', 'key-already-registered', 'payload-too-large']) {
      expect(reasons, known).toContain(known);
    }
  });

  it('lists every produced reason under the status it is answered with', () => {
    const missing: string[] = [];
    for (const { reason, status, file } of produced) {
      const listed = status === null ? [...documented.values()].some((set) => set.has(reason)) : documented.get(status)?.has(reason) === true;
      if (!listed) missing.push(`${status ?? 'any status'} ${reason} (${file})`);
    }
    expect([...new Set(missing)]).toEqual([]);
  });

  it('reads the table and the source forms it relies on', () => {
    const table = documentedReasons('| Status | reason | When |\n|---|---|---|\n| 401 | `a-b`, `c` | x |\n| 503 | `d` | y |');
    expect([...table.get(401)!]).toEqual(['a-b', 'c']);
    expect(producedReasons('f.ts', "throw new ServiceError(\n  429,\n  'too-many', 'x');")).toEqual([{ reason: 'too-many', status: 429, file: 'f.ts' }]);
    expect(producedReasons('f.ts', "const INGEST_REFUSALS = {\n  'gone-away': 'x',\n} as const;").map((p) => p.reason)).toEqual(['gone-away']);
  });
});
