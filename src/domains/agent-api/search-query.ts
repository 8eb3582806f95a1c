/**
 * Turns what a caller typed into a PostgreSQL tsquery text (docs/agent-api/README.md, "Search"). Pure.
 *
 * Every run of letters or digits is a term; each term is matched as a prefix (`term:*`), so
 * `kube` finds "Kubernetes", and every term must match (`&`). `to_tsquery('english', …)` then
 * stems each term and drops stop words. Nothing the caller sends reaches the tsquery syntax: the
 * operators `& | ! ( ) : *` and quotes are separators here, never operators.
 */

/** Terms a query keeps at most; the rest are ignored (a search is a few words, not a document). */
export const MAX_QUERY_TERMS = 12;
/** Longest term kept; longer runs are cut (PostgreSQL drops lexemes over 2 KiB anyway). */
export const MAX_TERM_LENGTH = 64;

const TERM = /[\p{L}\p{N}]+/gu;

/** The lower-cased terms of a query, in order, without repeats. */
export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  for (const match of query.normalize('NFKC').toLowerCase().matchAll(TERM)) {
    const term = match[0].slice(0, MAX_TERM_LENGTH);
    if (!terms.includes(term)) terms.push(term);
    if (terms.length === MAX_QUERY_TERMS) break;
  }
  return terms;
}

/** `kubernetes:* & pods:*` from the terms queryTerms gave; null when there are none. */
export function prefixTsqueryOf(terms: readonly string[]): string | null {
  return terms.length === 0 ? null : terms.map((term) => `${term}:*`).join(' & ');
}

/** `kubernetes:* & pods:*`; null when the query holds no term at all. */
export function toPrefixTsquery(query: string): string | null {
  return prefixTsqueryOf(queryTerms(query));
}
