import type { AuditRow } from './types';

const compact = (value: unknown) => (value === null || value === undefined ? '—' : JSON.stringify(value, null, 2));

/** An audit row's before and after, folded so the table stays readable. */
export function Change({ row }: { row: AuditRow }) {
  if ((row.before === null || row.before === undefined) && (row.after === null || row.after === undefined)) return <span className="muted">—</span>;
  return (
    <details>
      <summary>Before and after</summary>
      <div className="change">
        <div>
          <div className="muted">Before</div>
          <pre>{compact(row.before)}</pre>
        </div>
        <div>
          <div className="muted">After</div>
          <pre>{compact(row.after)}</pre>
        </div>
      </div>
    </details>
  );
}
