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

export function parseQueryText(text: string): QueryAst {
  if (text.length > MAX_QUERY_LENGTH) {
    throw badRequest('invalid-query', `The query is ${text.length} characters long; at most ${MAX_QUERY_LENGTH} are accepted.`);
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
