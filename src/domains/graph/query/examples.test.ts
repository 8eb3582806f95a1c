import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkQuery } from './check.ts';
import { GRAPH_QUERY_EXAMPLES } from './examples.ts';
import { parseQueryText } from './parser.ts';

/**
 * The worked examples the registry and the console offer are the ones docs/graph/query.md shows,
 * word for word (whitespace aside), and each is a query the service accepts.
 */
const doc = readFileSync(new URL('../../../../docs/graph/query.md', import.meta.url), 'utf8');
const words = (text: string) => text.split(/\s+/).filter(Boolean).join(' ');

/** The code block under "n. …" of the worked examples, as the doc shows it. */
function documented(n: number): string {
  const section = doc.slice(doc.indexOf('## Worked examples'), doc.indexOf('## The AST'));
  const start = section.indexOf(`\n${n}. `);
  expect(start, `example ${n} in docs/graph/query.md`).toBeGreaterThan(-1);
  return /```\n([\s\S]*?)```/.exec(section.slice(start))![1]!;
}

describe('the graph query examples', () => {
  it('are the docs\' worked examples, in their order', () => {
    const section = doc.slice(doc.indexOf('## Worked examples'), doc.indexOf('## The AST'));
    const numbered = [...section.matchAll(/\n(\d+)\. /g)].map((m) => Number(m[1]));
    expect(GRAPH_QUERY_EXAMPLES.map((e) => e.n)).toEqual(numbered);
    for (const example of GRAPH_QUERY_EXAMPLES) expect(words(example.query), `example ${example.n}`).toBe(words(documented(example.n)));
  });

  it('each parses and passes the checks', () => {
    for (const example of GRAPH_QUERY_EXAMPLES) expect(() => checkQuery(parseQueryText(example.query)), `example ${example.n}`).not.toThrow();
  });

  it('have distinct titles short enough for a button', () => {
    const titles = GRAPH_QUERY_EXAMPLES.map((e) => e.title);
    expect(new Set(titles).size).toBe(titles.length);
    for (const title of titles) expect(title.length).toBeLessThanOrEqual(48);
  });
});
