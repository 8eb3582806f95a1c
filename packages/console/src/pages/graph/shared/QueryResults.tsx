import { useMemo } from 'react';
import { type Column, DataTable, Freshness, type GraphEdge, type GraphNode, GraphView } from '../../../components';
import type { QueryAnswer } from './api';
import { Cell, cellSortValue } from './cells';

type Row = QueryAnswer['rows'][number];
type NodeView = QueryAnswer['nodes'][number];

/** A node's label in the drawing: an event by its type and sender id, anything else by its key. */
function nodeLabel(node: NodeView): string {
  const props = node.props as Record<string, unknown>;
  if (node.kind === 'EmpireEvent') {
    const sender = typeof props.senderId === 'string' ? props.senderId : node.key.slice(0, 8);
    return typeof props.eventType === 'string' ? `${props.eventType} ${sender}` : sender;
  }
  return node.key.length > 32 ? `${node.key.slice(0, 31)}…` : node.key;
}

/** The answer of a query: its rows as a sortable table, and the nodes and edges behind them drawn. */
export function QueryResults({ answer }: { answer: QueryAnswer }) {
  const columns = useMemo<Column<Row>[]>(() => {
    const names: string[] = [];
    for (const row of answer.rows) for (const name of Object.keys(row)) if (!names.includes(name)) names.push(name);
    return names.map((name) => ({ key: name, label: name, sortValue: (row: Row) => cellSortValue(row[name]), render: (row: Row) => <Cell value={row[name]} /> }));
  }, [answer.rows]);
  const nodes = useMemo<GraphNode[]>(() => answer.nodes.map((n) => ({ id: String(n.id), label: nodeLabel(n), kind: n.kind })), [answer.nodes]);
  const edges = useMemo<GraphEdge[]>(() => answer.edges.map((e) => ({ id: `e${e.id}`, source: String(e.src), target: String(e.dst), label: e.kind })), [answer.edges]);
  const byId = useMemo(() => new Map(answer.nodes.map((n) => [n.id, n])), [answer.nodes]);

  return (
    <>
      <Freshness freshness={answer.freshness} />
      <p className="muted" aria-live="polite">
        {answer.rowCount.toLocaleString()} row{answer.rowCount === 1 ? '' : 's'}
        {answer.nodes.length > 0 ? `, ${answer.nodes.length} nodes and ${answer.edges.length} edges` : ''}.
      </p>
      {answer.truncated && (
        <p className="error-note" role="note">
          The answer was cut ({answer.truncatedBy.join(', ')}): rows, counts and order are those of the matches before the cut. Narrow the pattern (a label and key on the
          first node, relationship types, shorter ranges) for a whole answer.
        </p>
      )}
      <DataTable
        caption="Query rows"
        rows={answer.rows}
        rowKey={(_, i) => String(i)}
        columns={columns}
        empty="No rows matched. Check the labels and keys in the pattern, or whether the graph has been materialised since the events arrived."
      />
      {nodes.length > 0 && (
        <div className="graph-drawing">
          <h3>The graph behind the rows</h3>
          <GraphView label="Query graph" nodes={nodes} edges={edges} height={420} />
          <details>
            <summary>Nodes and edges as a list</summary>
            <ul className="plain-list">
              {answer.nodes.map((n) => (
                <li key={`n${n.id}`}>
                  <span className="badge">{n.kind}</span> <code>{n.key}</code>
                </li>
              ))}
              {answer.edges.map((e) => (
                <li key={`e${e.id}`}>
                  <code>{byId.get(e.src)?.key ?? e.src}</code> —{e.kind}→ <code>{byId.get(e.dst)?.key ?? e.dst}</code>
                </li>
              ))}
            </ul>
          </details>
        </div>
      )}
    </>
  );
}
