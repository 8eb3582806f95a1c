import { useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { DataTable, Panel, Time } from '../../../components';
import { Badge } from './badges';
import { CursorPager, useCursorStack } from './cursor';

const DECISIONS = {
  '': { label: 'Every decision', query: {} },
  signed: { label: 'Admitted, signature verified', query: { compatMode: 'false', rejected: 'false' } },
  compat: { label: 'Admitted unsigned (compatibility)', query: { compatMode: 'true' } },
  rejected: { label: 'Rejected', query: { rejected: 'true' } },
} as const;
type Decision = keyof typeof DECISIONS;

/** Every admission decision of the empire ingest, newest first. */
export function Attestations({ toolset }: { toolset: string }) {
  const [decision, setDecision] = useState<Decision>('');
  const pager = useCursorStack();
  const state = useQuery(
    () =>
      unwrap(
        api.GET('/api/observatory/v1/provenance/attestations', {
          params: { query: { ...(toolset ? { toolset } : {}), ...DECISIONS[decision].query, ...(pager.cursor ? { cursor: pager.cursor } : {}) } },
        }),
      ),
    [toolset, decision, pager.cursor],
    { refreshMs: 60_000 },
  );
  return (
    <Panel
      title="Attestations"
      state={state}
      minHeight={160}
      isEmpty={(d) => d.attestations.length === 0}
      empty="No admission decision matches: attestations are written as the empire ingest admits or refuses events."
      actions={
        <select
          aria-label="Decision"
          value={decision}
          onChange={(e) => {
            setDecision(e.target.value as Decision);
            pager.reset();
          }}
        >
          {Object.entries(DECISIONS).map(([value, d]) => (
            <option key={value} value={value}>
              {d.label}
            </option>
          ))}
        </select>
      }
    >
      {(d) => (
        <>
          <DataTable
            caption="Attestations"
            rows={d.attestations}
            rowKey={(r) => r.id}
            pageSize={50}
            columns={[
              { key: 'acceptedAt', label: 'Decided', sortValue: (r) => r.acceptedAt, render: (r) => <Time at={r.acceptedAt} /> },
              { key: 'toolset', label: 'Toolset', sortValue: (r) => r.toolset },
              { key: 'sourceId', label: 'Event', sortValue: (r) => r.sourceId, render: (r) => <code>{r.sourceId}</code> },
              { key: 'kind', label: 'Type', sortValue: (r) => r.kind },
              {
                key: 'decision',
                label: 'Decision',
                render: (r) =>
                  r.rejectionReason ? (
                    <Badge tone="bad">{`rejected: ${r.rejectionReason}`}</Badge>
                  ) : r.compatMode ? (
                    <Badge tone="warn">unsigned (compat)</Badge>
                  ) : (
                    <Badge tone="ok">signature verified</Badge>
                  ),
              },
              { key: 'key', label: 'Key', render: (r) => (r.toolsetKeyId ? <code title={r.toolsetKeyId}>{r.toolsetKeyId.slice(0, 8)}</code> : <span className="muted">—</span>) },
              { key: 'eventHash', label: 'Event hash (SHA-256)', render: (r) => <code title={r.eventHash}>{r.eventHash.slice(0, 16)}…</code> },
            ]}
          />
          <CursorPager pager={pager} nextCursor={d.nextCursor} label="Attestation pages" />
        </>
      )}
    </Panel>
  );
}
