import type { ReactNode } from 'react';

/** How a value of a query row reads in a table cell: nodes and edges by kind and key, lists by size. */

interface NodeLike {
  id: number;
  kind: string;
  key: string;
}
interface EdgeLike {
  id: number;
  kind: string;
  src: number;
  dst: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isNode = (v: unknown): v is NodeLike => isObject(v) && typeof v.kind === 'string' && typeof v.key === 'string';
export const isEdge = (v: unknown): v is EdgeLike => isObject(v) && typeof v.kind === 'string' && typeof v.src === 'number' && typeof v.dst === 'number';

/** The cell's text, also what a column sorts by when the value is not a number. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (isNode(value)) return `${value.kind} ${value.key}`;
  if (isEdge(value)) return `${value.kind} ${value.src}→${value.dst}`;
  if (Array.isArray(value) && value.every(isEdge)) return `${value.length} edge${value.length === 1 ? '' : 's'}: ${value.map((e) => e.kind).join(', ')}`;
  return JSON.stringify(value);
}

export function cellSortValue(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  return cellText(value);
}

export function Cell({ value }: { value: unknown }): ReactNode {
  if (value === null || value === undefined) return <span className="muted">null</span>;
  if (typeof value === 'number') return value.toLocaleString();
  if (isNode(value))
    return (
      <span>
        <span className="badge">{value.kind}</span> <code>{value.key}</code>
      </span>
    );
  const text = cellText(value);
  if (typeof value === 'object') return <code title={JSON.stringify(value)}>{text.length > 160 ? `${text.slice(0, 160)}…` : text}</code>;
  return text;
}
