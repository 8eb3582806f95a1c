import { readFileSync } from 'node:fs';
import peggy from 'peggy';
import { badRequest, type ServiceError } from '../../../platform/errors.ts';
import type { QueryAst } from './ast.ts';

/**
 * Text → AST (syntax only; check.ts adds the rules that need the kinds and the variables).
 *
 * The parser is generated from cypher.peggy when this module is first imported rather than
 * checked in as generated JavaScript: there is no build step (tsx runs the sources), the grammar
 * is the single source of truth, and generating takes a few tens of milliseconds once.
 */

export const GRAMMAR_SOURCE = readFileSync(new URL('./cypher.peggy', import.meta.url), 'utf8');

const generated = peggy.generate(GRAMMAR_SOURCE, { output: 'parser' });

/** The longest query text accepted (characters). */
export const MAX_QUERY_LENGTH = 4000;

/** Where a parse failed and what would have been accepted there; the `details` of the 400. */
export interface SyntaxProblem {
  line: number;
  column: number;
  /** What the grammar accepts at that point, e.g. `")"`, `variable`, `RETURN`. */
  expected: string[];
  /** The word or character found there, or null at the end of the text. */
  found: string | null;
}

/** Words of Cypher that write or call procedures; none is in the grammar, so they can only fail to parse. */
const WRITING_WORDS = new Set(['CREATE', 'MERGE', 'DELETE', 'DETACH', 'SET', 'REMOVE', 'CALL', 'LOAD', 'FOREACH', 'UNWIND', 'DROP', 'WITH', 'OPTIONAL', 'UNION', 'USE']);

/**
 * The deepest nesting a query may have: brackets ( [ { inside one another, and NOT operators in
 * the whole text (each nests what follows it). The parser, the checks and the compiler recurse
 * once per level, so without this bound 1,900 parentheses would overflow the stack (a 500 instead
 * of a 400); no useful query comes near it.
 */
export const MAX_NESTING = 64;

/** The text's deepest bracket nesting and its count of NOT words, outside strings, backquoted names and comments. */
export function nestingOf(text: string): { brackets: number; nots: number } {
  let depth = 0;
  let brackets = 0;
  let nots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      // A string: up to the same quote not escaped by a backslash.
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
    } else if (c === '`') {
      // A backquoted name: `` inside stands for one backquote.
      for (i++; i < text.length; i++) if (text[i] === '`') { if (text[i + 1] === '`') i++; else break; }
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '(' || c === '[' || c === '{') {
      brackets = Math.max(brackets, ++depth);
    } else if (c === ')' || c === ']' || c === '}') {
      depth--;
    } else if (/[A-Za-z_]/.test(c)) {
      let end = i;
      while (end < text.length && /[A-Za-z0-9_]/.test(text[end]!)) end++;
      if (text.slice(i, end).toUpperCase() === 'NOT') nots++;
      i = end - 1;
    }
  }
  return { brackets, nots };
}

export function parseQueryText(text: string): QueryAst {
  if (text.length > MAX_QUERY_LENGTH) {
    throw badRequest('invalid-query', `The query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are accepted.`);
  }
  const nesting = nestingOf(text);
  if (nesting.brackets > MAX_NESTING || nesting.nots > MAX_NESTING) {
    throw badRequest(
      'invalid-query',
      nesting.brackets > MAX_NESTING
        ? `The query nests brackets ${nesting.brackets} deep; at most ${MAX_NESTING} levels are accepted.`
        : `The query has ${nesting.nots} NOT operators; at most ${MAX_NESTING} are accepted.`,
    );
  }
  try {
    return generated.parse(text) as QueryAst;
  } catch (error) {
    if (error instanceof generated.SyntaxError) throw syntaxErrorOf(text, error);
    throw error;
  }
}

interface PeggyExpectation {
  type: 'literal' | 'class' | 'any' | 'end' | 'other';
  text?: string;
  description?: string;
}

function describeExpectation(expectation: PeggyExpectation): string | null {
  switch (expectation.type) {
    case 'literal':
      return JSON.stringify(expectation.text);
    case 'end':
      return 'end of input';
    case 'any':
      return 'any character';
    default:
      // Named rules (`variable`, `RETURN`, …); whitespace is allowed nearly everywhere, so naming
      // it would only hide what is really missing.
      return expectation.description === 'whitespace' ? null : (expectation.description ?? null);
  }
}

function syntaxErrorOf(text: string, error: InstanceType<typeof generated.SyntaxError>): ServiceError {
  const { line, column, offset } = error.location.start;
  const expected = [...new Set((error.expected as PeggyExpectation[] | null ?? []).map(describeExpectation).filter((e): e is string => e !== null))].sort();
  const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(offset))?.[0];
  const found = offset >= text.length ? null : (word ?? String.fromCodePoint(text.codePointAt(offset)!));
  const problem: SyntaxProblem = { line, column, expected, found };
  if (error.expected === null) {
    // A rule's own refusal (peggy's error()), such as an integer too large to keep exactly.
    return badRequest('invalid-query', `line ${line}, column ${column}: ${error.message}.`, { ...problem });
  }
  let human = `line ${line}, column ${column}: expected ${listOr(expected)} but ${found === null ? 'end of input' : JSON.stringify(found)} found.`;
  if (word && WRITING_WORDS.has(word.toUpperCase())) {
    human += ` The graph query language is read-only: it has MATCH, WHERE, RETURN, ORDER BY, SKIP and LIMIT, and no ${word.toUpperCase()}.`;
  }
  return badRequest('invalid-query', human, { ...problem });
}

function listOr(items: string[]): string {
  if (items.length === 0) return 'something else';
  if (items.length === 1) return items[0]!;
  return `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}
