import fc from 'fast-check';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import type { Database } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import { EDGE_KIND_NAMES, FULL_VISIBILITY, NODE_KINDS } from '../kinds.ts';
import { createGraphQueryService, type GraphQueryService } from './service.ts';

/**
 * Whatever text arrives, the query language answers rows or a 400: never another error (which
 * the HTTP layer would render as a 500). Random text and token soups are parsed; queries built
 * from the grammar's own parts (often valid, often not) are also run on a database.
 */

let testDb: TestDatabase;
let database: Database;
let graph: GraphQueryService;

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
  await database.db.execute(sql`INSERT INTO graph_nodes (id, kind, key, toolset, props, first_run, materialised_at) VALUES
    (1, 'EmpireEvent', 'ev-1', 'alpha', '{"n": 1, "s": "x"}', 1, now()), (2, 'EmpireEvent', 'ev-2', 'beta', '{"n": "2", "l": [1, 2]}', 1, now()),
    (3, 'Key', 'key-1', NULL, '{"m": {"a": 1}}', 1, now()), (4, 'Tenant', 'acme', NULL, '{}', 1, now())`);
  await database.db.execute(sql`INSERT INTO graph_edges (id, kind, src, dst, props, first_run, materialised_at) VALUES
    (1, 'CAUSED_BY', 2, 1, '{}', 1, now()), (2, 'CAUSED_BY', 1, 2, '{"w": 1}', 1, now()), (3, 'SIGNED_BY', 1, 3, '{}', 1, now())`);
  await database.db.execute(sql`ANALYZE graph_nodes, graph_edges`);
  graph = createGraphQueryService({ db: database.db });
});
afterAll(() => testDb.drop());

function expectOnly400(error: unknown): void {
  if (!(error instanceof ServiceError) || error.status !== 400) {
    throw new Error(`expected a 400 ServiceError, got ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
  }
  expect(error.human.length).toBeGreaterThan(0);
}

function parsesOr400(text: string): void {
  try {
    graph.parse(text);
  } catch (error) {
    expectOnly400(error);
  }
}

const TOKENS = [
  'MATCH', 'match', 'WHERE', 'RETURN', 'DISTINCT', 'ORDER', 'BY', 'ASC', 'DESC', 'SKIP', 'LIMIT', 'AND', 'OR', 'XOR', 'NOT', 'IN', 'IS', 'NULL',
  'STARTS', 'ENDS', 'WITH', 'CONTAINS', 'AS', 'count', 'CREATE', 'DELETE', 'SET', 'MERGE', 'CALL', 'UNWIND', 'true', 'false',
  '(', ')', '[', ']', '{', '}', ':', ',', '.', '..', '*', '|', '-', '->', '<-', '--', '-->', '<--', '=', '<>', '<', '<=', '>', '>=', ';', '`', "'", '"',
  'n', 'm', 'r', 'n.key', 'n.kind', 'm.n', '0', '1', '3', '-1', '1.5', '99999999999999999999', "'x'", '"y"', "'\\u0000'", "'\\ud800'", "'it\\'s'",
  ...NODE_KINDS, ...EDGE_KIND_NAMES, 'Bogus', '//', '/*', '*/', '\n',
];

describe('random text never fails with anything but a 400', () => {
  it('arbitrary strings', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 120 }), parsesOr400), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 120 }), parsesOr400), { numRuns: 300 });
  });

  it('token soups of the grammar\'s own words and symbols', () => {
    const soup = fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 30 }).map((tokens) => tokens.join(' '));
    fc.assert(fc.property(soup, parsesOr400), { numRuns: 1500 });
    fc.assert(fc.property(soup, (tail) => parsesOr400(`MATCH (n)-[r]->(m) ${tail}`)), { numRuns: 1500 });
  });

  it('over-long text', () => {
    fc.assert(fc.property(fc.integer({ min: 4001, max: 9000 }), (length) => parsesOr400(`MATCH (n) RETURN n ${' '.repeat(length)}`)), { numRuns: 5 });
  });
});

// Queries assembled from the grammar's parts: valid ones run, invalid ones must be 400s.
const variable = fc.constantFrom('a', 'b', 'c', 'r', 's');
const literal = fc.oneof(
  { arbitrary: fc.constantFrom("'x'", "'ev-1'", '"it\\"s"', "'🙂'", "'\\'; DROP TABLE graph_nodes; --'", '1', '2', '-1.5', '1e308', 'true', 'false', 'null'), weight: 16 },
  // Values the database cannot take: each must be a 400.
  { arbitrary: fc.constantFrom("'\\u0000'", "'\\ud800'", '1e999', '9007199254740993'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 8 }).map((s) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`), weight: 2 },
  { arbitrary: fc.integer().map(String), weight: 1 },
);
const property = fc.tuple(variable, fc.constantFrom('key', 'kind', 'id', 'n', 's', 'l', 'm', 'w', 'src', 'missing')).map(([v, p]) => `${v}.${p}`);
const operand = fc.oneof(property, literal, variable);
const predicate = fc.oneof(
  fc.tuple(operand, fc.constantFrom('=', '<>', '<', '<=', '>', '>='), operand).map((p) => p.join(' ')),
  fc.tuple(operand, fc.constantFrom('STARTS WITH', 'ENDS WITH', 'CONTAINS'), operand).map((p) => p.join(' ')),
  fc.tuple(operand, fc.array(literal, { maxLength: 4 })).map(([o, items]) => `${o} IN [${items.join(', ')}]`),
  fc.tuple(operand, fc.constantFrom('IS NULL', 'IS NOT NULL')).map((p) => p.join(' ')),
);
const { expression } = fc.letrec<{ expression: string }>((tie) => ({
  expression: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    predicate,
    fc.tuple(tie('expression'), fc.constantFrom('AND', 'OR', 'XOR'), tie('expression')).map(([l, op, r]) => `(${l} ${op} ${r})`),
    tie('expression').map((e) => `NOT ${e}`),
  ),
}));
const nodePattern = fc
  .tuple(fc.option(fc.constantFrom('a', 'b', 'c')), fc.option(fc.oneof({ arbitrary: fc.constantFrom(...NODE_KINDS), weight: 12 }, { arbitrary: fc.constant('Bogus'), weight: 1 })), fc.option(fc.tuple(fc.constantFrom('key', 'n', 'kind'), literal)))
  .map(([v, label, props]) => `(${v ?? ''}${label ? `:${label}` : ''}${props ? ` {${props[0]}: ${props[1]}}` : ''})`);
const relationshipPattern = fc
  .tuple(
    fc.oneof({ arbitrary: fc.constant(null), weight: 5 }, { arbitrary: fc.constantFrom('t', 'u', 'a'), weight: 1 }),
    fc.option(fc.array(fc.oneof({ arbitrary: fc.constantFrom(...EDGE_KIND_NAMES), weight: 12 }, { arbitrary: fc.constant('BOGUS'), weight: 1 }), { minLength: 1, maxLength: 2 })),
    fc.oneof({ arbitrary: fc.constantFrom('', '', '', '*', '*2', '*1..3', '*..2', '*0..1'), weight: 12 }, { arbitrary: fc.constantFrom('*3..1', '*1..9'), weight: 1 }),
    fc.option(fc.tuple(fc.constantFrom('w', 'key'), literal)),
    fc.constantFrom(['-', '->'], ['<-', '-'], ['-', '-'], ['<-', '->']),
  )
  .map(([v, types, range, props, [left, right]]) => `${left}[${v ?? ''}${types ? `:${types.join('|')}` : ''}${range}${props ? ` {${props[0]}: ${props[1]}}` : ''}]${right}`);
const path = fc.tuple(nodePattern, fc.array(fc.tuple(relationshipPattern, nodePattern), { maxLength: 3 })).map(([start, hops]) => start + hops.map(([r, n]) => r + n).join(''));
const returnItem = fc.oneof(
  variable,
  property,
  fc.constantFrom('count(*)', 'count(a)', 'count(DISTINCT b)', 'count(a.n)', 'count(r)'),
  fc.tuple(property, fc.constantFrom('x', 'y', 'z')).map(([p, alias]) => `${p} AS ${alias}`),
);
const orderItem = fc.tuple(fc.oneof(variable, property, fc.constantFrom('x', 'count(*)')), fc.constantFrom('', ' ASC', ' DESC')).map(([e, d]) => e + d);
const query = fc
  .tuple(
    fc.array(path, { minLength: 1, maxLength: 2 }),
    fc.option(expression),
    fc.boolean(),
    fc.oneof(fc.constant(['*']), fc.array(returnItem, { minLength: 1, maxLength: 3 })),
    fc.array(orderItem, { maxLength: 2 }),
    fc.option(fc.nat(5)),
    fc.option(fc.nat(20)),
  )
  .map(
    ([paths, where, distinct, items, order, skip, limit]) =>
      // The first pattern defines every variable the other parts name, so many queries are valid.
      `MATCH (a)-[r]->(b)-[s]->(c), ${paths.join(', ')}${where ? ` WHERE ${where}` : ''} RETURN ${distinct ? 'DISTINCT ' : ''}${items.join(', ')}` +
      `${order.length ? ` ORDER BY ${order.join(', ')}` : ''}${skip !== null ? ` SKIP ${skip}` : ''}${limit !== null ? ` LIMIT ${limit}` : ''}`,
  );

describe('queries built from the grammar run or answer 400', () => {
  it('never throws anything else on the database', async () => {
    let ran = 0;
    const refusals = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(query, async (text) => {
        try {
          const answer = await graph.execute({ query: text, visibility: FULL_VISIBILITY, limit: 50 });
          expect(answer.rowCount).toBe(answer.rows.length);
          ran += 1;
        } catch (error) {
          expectOnly400(error);
          refusals.set((error as ServiceError).human.slice(0, 40), (refusals.get((error as ServiceError).human.slice(0, 40)) ?? 0) + 1);
        }
      }),
      { numRuns: 400 },
    );
    // The generator must reach the database often enough to mean something.
    expect(ran, JSON.stringify([...refusals].sort((x, y) => y[1] - x[1]).slice(0, 8))).toBeGreaterThan(20);
  }, 120_000);
});
