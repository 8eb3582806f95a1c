// The embedded database's graph query replica (docs/graph/query.md, "Where a query runs"): a
// worker thread with its own in-memory PGlite holding the live rows of graph_nodes and
// graph_edges. PGlite cannot cancel a running statement and runs on the thread that calls it, so
// graph queries run here: however long one runs, the HTTP thread keeps answering, and a query
// past its time is stopped by terminating this thread (replica.ts starts a fresh one).
//
// Plain JavaScript, not TypeScript: a worker thread loads its file with Node's own loader, also
// under the test runner, which transforms only the main thread's modules.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

// The columns the compiled statements read (compile.ts), with the indexes they rely on: the
// (kind, key) lookup of an anchor and the (src, kind) / (dst, kind) hops. Only live rows are
// copied, so removed_run is always null here; it stays so the statements run unchanged.
const SCHEMA = `
  CREATE TABLE graph_nodes (id bigint PRIMARY KEY, kind text NOT NULL, key text NOT NULL, toolset text, tenant text,
    named_by text[], props jsonb NOT NULL, removed_run bigint);
  CREATE INDEX graph_nodes_kind_key_idx ON graph_nodes (kind, key);
  CREATE TABLE graph_edges (id bigint PRIMARY KEY, kind text NOT NULL, src bigint NOT NULL, dst bigint NOT NULL,
    props jsonb NOT NULL, removed_run bigint);
  CREATE INDEX graph_edges_kind_src_dst_idx ON graph_edges (kind, src, dst);
  CREATE INDEX graph_edges_src_idx ON graph_edges (src, kind);
  CREATE INDEX graph_edges_dst_idx ON graph_edges (dst, kind);
`;

const UPSERT = {
  nodes: `INSERT INTO graph_nodes (id, kind, key, toolset, tenant, named_by, props)
    SELECT (v ->> 0)::bigint, v ->> 1, v ->> 2, v ->> 3, v ->> 4,
      CASE WHEN jsonb_typeof(v -> 5) = 'array' THEN ARRAY(SELECT jsonb_array_elements_text(v -> 5)) END, v -> 6
    FROM jsonb_array_elements($1::jsonb) AS v
    ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, key = EXCLUDED.key, toolset = EXCLUDED.toolset,
      tenant = EXCLUDED.tenant, named_by = EXCLUDED.named_by, props = EXCLUDED.props`,
  edges: `INSERT INTO graph_edges (id, kind, src, dst, props)
    SELECT (v ->> 0)::bigint, v ->> 1, (v ->> 2)::bigint, (v ->> 3)::bigint, v -> 4
    FROM jsonb_array_elements($1::jsonb) AS v
    ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, src = EXCLUDED.src, dst = EXCLUDED.dst, props = EXCLUDED.props`,
};
const REMOVE = {
  nodes: 'DELETE FROM graph_nodes WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint)',
  edges: 'DELETE FROM graph_edges WHERE id IN (SELECT jsonb_array_elements_text($1::jsonb)::bigint)',
};

// A fresh PGlite spends most of its start-up (seconds) creating its data directory; the first
// worker hands the empty, schema-ready directory to the service, and a worker started after an
// abandoned query loads that instead (under a second).
const emptyDataDir = workerData?.emptyDataDir ?? null;
let db;
let madeDataDir = null;
if (emptyDataDir) {
  db = await PGlite.create({ loadDataDir: new Blob([emptyDataDir]) });
} else {
  db = await PGlite.create();
  await db.exec(SCHEMA);
  madeDataDir = await (await db.dumpDataDir('none')).arrayBuffer();
}

// PGlite has no autovacuum: planner statistics are taken before the first query and refreshed
// before a later one once the rows written since pass a fifth of those there were (and 500).
let rowsAtAnalyze = 0;
let writtenSinceAnalyze = 0;

async function handle(message) {
  switch (message.type) {
    case 'apply': {
      const { table, live, removed } = message;
      if (live.length > 0) await db.query(UPSERT[table], [JSON.stringify(live)]);
      if (removed.length > 0) await db.query(REMOVE[table], [JSON.stringify(removed)]);
      writtenSinceAnalyze += live.length + removed.length;
      return { type: 'applied' };
    }
    case 'query': {
      if (writtenSinceAnalyze > 0 && (rowsAtAnalyze === 0 || writtenSinceAnalyze >= Math.max(500, rowsAtAnalyze / 5))) {
        await db.exec('ANALYZE graph_nodes, graph_edges');
        rowsAtAnalyze += writtenSinceAnalyze;
        writtenSinceAnalyze = 0;
      }
      const results = await db.transaction(async (tx) => {
        const out = [];
        for (const statement of message.statements) out.push((await tx.query(statement.text, statement.params)).rows);
        return out;
      });
      return { type: 'result', results };
    }
    default:
      throw new Error(`unknown message ${message.type}`);
  }
}

parentPort.on('message', async (message) => {
  try {
    parentPort.postMessage({ id: message.id, ...(await handle(message)) });
  } catch (error) {
    parentPort.postMessage({ id: message.id, type: 'failed', code: typeof error?.code === 'string' ? error.code : null, message: String(error?.message ?? error) });
  }
});
parentPort.postMessage({ type: 'ready', emptyDataDir: madeDataDir }, madeDataDir ? [madeDataDir] : []);
