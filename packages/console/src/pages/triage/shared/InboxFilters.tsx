import { useEffect, useState } from 'react';
import { PROPOSAL_KINDS, type ProposalKind, type ProposalStatusFilter, STATUS_FILTERS } from './api';
import { kindText } from './labels';

/** The inbox's filters; each change goes to the address (`kind`, `status`, `toolset`). */
export function InboxFilters({
  kind,
  status,
  toolset,
  onFilter,
}: {
  kind: ProposalKind | undefined;
  status: ProposalStatusFilter;
  toolset: string;
  onFilter: (changes: Record<string, string | null>) => void;
}) {
  const [toolsetDraft, setToolsetDraft] = useState(toolset);
  useEffect(() => setToolsetDraft(toolset), [toolset]);
  return (
    <div className="toolbar" role="group" aria-label="Filters">
      <label className="field inline">
        <span className="field-label">Kind</span>
        <select aria-label="Kind" value={kind ?? ''} onChange={(e) => onFilter({ kind: e.target.value || null })}>
          <option value="">Every kind</option>
          {PROPOSAL_KINDS.map((k) => (
            <option key={k} value={k}>
              {kindText(k)}
            </option>
          ))}
        </select>
      </label>
      <label className="field inline">
        <span className="field-label">Status</span>
        <select aria-label="Status" value={status} onChange={(e) => onFilter({ status: e.target.value === 'pending' ? null : e.target.value })}>
          {STATUS_FILTERS.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      <form
        className="field inline"
        onSubmit={(e) => {
          e.preventDefault();
          onFilter({ toolset: toolsetDraft.trim() || null });
        }}
      >
        <label className="field inline">
          <span className="field-label">Toolset</span>
          <input aria-label="Toolset" value={toolsetDraft} onChange={(e) => setToolsetDraft(e.target.value)} placeholder="any" size={14} />
        </label>
        <button type="submit">Filter</button>
      </form>
    </div>
  );
}
