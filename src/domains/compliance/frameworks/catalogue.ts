import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Static, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { PREDICATE_KEYS } from '../evaluation/predicates.ts';

/**
 * The shipped frameworks (docs/compliance/README.md): one JSON data file each, read and checked once at
 * start. A control names the predicate that decides it; several controls (of one framework or
 * of both) may share a predicate, which is then observed once per evaluation pass.
 */

export const OUTCOMES = ['pass', 'fail', 'manual-review', 'n/a'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export const SEVERITIES = ['critical', 'major', 'minor'] as const;
export type Severity = (typeof SEVERITIES)[number];

const ControlFile = Type.Object(
  {
    controlId: Type.String({ minLength: 1, maxLength: 32 }),
    category: Type.String({ minLength: 1 }),
    title: Type.String({ minLength: 1 }),
    description: Type.String({ minLength: 1 }),
    predicateKey: Type.String({ minLength: 1 }),
    severity: Type.Union(SEVERITIES.map((s) => Type.Literal(s))),
  },
  { additionalProperties: false },
);

const FrameworkFile = Type.Object(
  {
    framework: Type.String({ pattern: '^[a-z0-9-]{2,32}$' }),
    title: Type.String({ minLength: 1 }),
    version: Type.String({ minLength: 1 }),
    status: Type.String({ minLength: 1 }),
    source: Type.String({ minLength: 1 }),
    controls: Type.Array(ControlFile, { minItems: 1 }),
  },
  { additionalProperties: false },
);

export interface Control extends Static<typeof ControlFile> {
  /** `<framework>/<controlId>`, unique across frameworks. */
  id: string;
  framework: string;
}

export interface Framework extends Omit<Static<typeof FrameworkFile>, 'controls'> {
  controls: Control[];
}

export const FRAMEWORK_FILES = ['soc2.json', 'iso27001.json'] as const;

/** Reads and checks the framework files; throws naming the file and the fault. */
export function loadFrameworks(files: readonly string[] = FRAMEWORK_FILES.map((f) => fileURLToPath(new URL(`./${f}`, import.meta.url)))): Framework[] {
  const frameworks: Framework[] = [];
  for (const file of files) {
    const data: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!Value.Check(FrameworkFile, data)) {
      const first = [...Value.Errors(FrameworkFile, data)][0];
      throw new Error(`framework file ${file}: ${first?.path ?? ''} ${first?.message ?? 'is not a framework'}`);
    }
    const seen = new Set<string>();
    for (const c of data.controls) {
      if (seen.has(c.controlId)) throw new Error(`framework file ${file}: control ${c.controlId} is listed twice`);
      seen.add(c.controlId);
      if (!(PREDICATE_KEYS as readonly string[]).includes(c.predicateKey)) throw new Error(`framework file ${file}: control ${c.controlId} names unknown predicate ${c.predicateKey}`);
    }
    if (frameworks.some((f) => f.framework === data.framework)) throw new Error(`framework file ${file}: framework ${data.framework} is defined twice`);
    frameworks.push({ ...data, controls: data.controls.map((c) => ({ ...c, id: `${data.framework}/${c.controlId}`, framework: data.framework })) });
  }
  return frameworks;
}

/** The frameworks with lookups by key and by control. */
export interface Catalogue {
  frameworks: readonly Framework[];
  framework(key: string): Framework | null;
  /**
   * The control a caller names: its id (`soc2/CC6.1`), or its controlId (`CC6.1`) when only one
   * framework has it or `framework` says which. `ambiguous` lists the ids a bare controlId matches.
   */
  control(ref: string, framework?: string): { control: Control } | { control: null; ambiguous: string[] };
}

export function createCatalogue(frameworks: readonly Framework[] = loadFrameworks()): Catalogue {
  const byKey = new Map(frameworks.map((f) => [f.framework, f]));
  const all = frameworks.flatMap((f) => f.controls);
  return {
    frameworks,
    framework: (key) => byKey.get(key) ?? null,
    control(ref, framework) {
      const candidates = all.filter((c) => (c.id === ref || c.controlId === ref) && (framework === undefined || c.framework === framework));
      if (candidates.length === 1) return { control: candidates[0]! };
      return { control: null, ambiguous: candidates.map((c) => c.id) };
    },
  };
}
