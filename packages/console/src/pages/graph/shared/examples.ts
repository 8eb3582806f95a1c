/**
 * The query language's worked examples: the same list the registry shows as the query endpoint's
 * body examples and docs/graph/query.md prints (held together by the server's examples.test.ts).
 * That module is plain data without imports, so the console's build reads it where it is.
 */
export { GRAPH_QUERY_EXAMPLES, type GraphQueryExample } from '../../../../../../src/domains/graph/query/examples.ts';
