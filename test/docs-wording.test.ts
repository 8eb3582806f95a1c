import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * User docs speak of the product: no references to the internal specification's sections
 * ("spec B group 4", "D6", "§3") or to issue numbers. Standards keep their section signs
 * ("RFC 9162 §2.1.3.2").
 */

const root = new URL('..', import.meta.url).pathname;
const files = ['README.md', ...readdirSync(`${root}docs`, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

const FORBIDDEN: [string, RegExp][] = [
  ['an issue number', /\bissues? #?\d+/gi],
  ['a spec section', /\bspec(?:'s)? [A-D]\b|\bspec [A-D]\d|\b(?:group \d+|Errors item|Events item|Authentication item)\b/gi],
  ['a bare spec reference', /\((?:spec|[A-D]\d)[^)]*\)|\bD[1-8] (?:upsert|API key)/g],
  ['a section sign outside a standard', /(?<!RFC \d+ )§/g],
];

describe('user docs wording', () => {
  it.each(files)('%s names no spec section or issue number', (file) => {
    const text = readFileSync(`${root}${file}`, 'utf8');
    const found: string[] = [];
    for (const [what, pattern] of FORBIDDEN) {
      for (const match of text.matchAll(pattern)) {
        const line = text.slice(0, match.index).split('\n').length;
        found.push(`${file}:${line}: ${what}: "${match[0]}"`);
      }
    }
    expect(found).toEqual([]);
  });
});
