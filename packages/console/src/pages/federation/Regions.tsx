import { useState } from 'react';
import { Link } from 'react-router';
import { useUrlState } from '../../app/urlState';
import { type QueryState, useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { DataTable, ErrorNote, Panel, Time } from '../../components';
import { Badge, SloBadge } from '../empire/shared/badges';
import { checkParity, loadLocalDigest, loadRegions, loadRegionSlo, type Parity, type RegionRow, type RegionSloRow } from './shared/api';
import { FailedRegions, ParityBadge, RegionStatusBadge } from './shared/badges';
import { ParityResult } from './shared/ParityResult';
import { RegionForm } from './shared/RegionForm';
import { type Pin, ReplayForm } from './shared/ReplayForm';
import { TupleTable } from './shared/TupleTable';
import './shared/federation.css';

const ms = (v: number | null) => (v === null ? '—' : `${v.toLocaleString(undefined, { maximumFractionDigits: 1 })} ms`);
const pct = (v: number | null) => (v === null ? '—' : `${v.toLocaleString(undefined, { maximumFractionDigits: 2 })}%`);
const sec = (v: number | null) => (v === null ? '—' : `${v.toLocaleString(undefined, { maximumFractionDigits: 0 })} s`);

function Registry({ state, onEdit }: { state: QueryState<Awaited<ReturnType<typeof loadRegions>>>; onEdit: (row: RegionRow) => void }) {
  return (
    <Panel title="Regions registry" state={state} minHeight={160} isEmpty={(d) => d.rows.length === 0} empty="No region is registered.">
      {(d) => (
        <>
          <p className="freshness muted">
            This deployment is <code data-testid="current-region">{d.currentRegion}</code>.
            {d.seeded && ' The registry is empty: this is the built-in seed row (this deployment alone). Add regions below.'}
          </p>
          <DataTable
            caption="Regions, by key"
            rows={d.rows}
            rowKey={(r) => r.key}
            columns={[
              {
                key: 'key',
                label: 'Region',
                sortValue: (r) => r.key,
                render: (r) => (
                  <>
                    <code>{r.key}</code>
                    {r.key === d.currentRegion && (
                      <>
                        {' '}
                        <Badge tone="ok" title="The deployment answering this page">
                          this deployment
                        </Badge>
                      </>
                    )}
                  </>
                ),
              },
              { key: 'displayName', label: 'Name', sortValue: (r) => r.displayName },
              { key: 'baseUrl', label: 'Base URL', render: (r) => <code>{r.baseUrl}</code> },
              { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <RegionStatusBadge status={r.status} /> },
              { key: 'isPrimary', label: 'Primary', sortValue: (r) => (r.isPrimary ? 1 : 0), render: (r) => (r.isPrimary ? 'primary' : '—') },
              { key: 'latencyTierSec', label: 'Latency tier', align: 'right', sortValue: (r) => r.latencyTierSec, render: (r) => sec(r.latencyTierSec) },
              { key: 'hostProjectSlug', label: 'Host project', render: (r) => r.hostProjectSlug ?? <span className="muted">—</span> },
              { key: 'databaseHost', label: 'Database host', render: (r) => r.databaseHost ?? <span className="muted">—</span> },
              { key: 'updatedAt', label: 'Updated', sortValue: (r) => r.updatedAt, render: (r) => (r.updatedAt ? <Time at={r.updatedAt} /> : <span className="muted">seed</span>) },
              {
                key: 'actions',
                label: 'Actions',
                render: (r) => (
                  <Can scope="write:alerts">
                    <button type="button" onClick={() => onEdit(r)} aria-label={`Change ${r.key}`}>
                      Change
                    </button>
                  </Can>
                ),
              },
            ]}
          />
        </>
      )}
    </Panel>
  );
}

function LocalDigest() {
  const state = useQuery(loadLocalDigest, []);
  return (
    <Panel title="This deployment's digest tuple" state={state} minHeight={140}>
      {(d) => (
        <>
          <p className="freshness muted">
            Computed now for <code>{d.region}</code>: {d.inputs.migrationsApplied} migrations applied; graph{' '}
            {d.inputs.graphMaterialisedAt ? (
              <>
                materialised <Time at={d.inputs.graphMaterialisedAt} />
              </>
            ) : (
              'never materialised'
            )}
            ; {d.inputs.complianceEvaluated} of {d.inputs.complianceControls} compliance controls with an outcome in force.
          </p>
          <TupleTable tuples={[d.tuple]} caption="Digest tuple of this deployment" />
        </>
      )}
    </Panel>
  );
}

function RegionSlo() {
  const { get, set } = useUrlState();
  const local = get('local') === '1';
  const state = useQuery(() => loadRegionSlo(local), [local], { refreshMs: 60_000 });
  return (
    <Panel
      title="Region SLO"
      state={state}
      minHeight={160}
      isEmpty={(d) => d.rows.length === 0 && d.failed.length === 0}
      empty="No active region to measure."
      actions={
        <label className="check">
          <input type="checkbox" checked={local} onChange={(e) => set({ local: e.target.checked ? '1' : null })} /> This deployment only
        </label>
      }
    >
      {(d) => (
        <>
          <DataTable<RegionSloRow>
            caption="Region SLO per region"
            rows={d.rows}
            rowKey={(r) => r.regionKey}
            columns={[
              {
                key: 'regionKey',
                label: 'Region',
                sortValue: (r) => r.regionKey,
                render: (r) => (
                  <>
                    <code>{r.regionKey}</code> {r.displayName !== r.regionKey && <span className="muted">{r.displayName}</span>}
                    {r.isPrimary && <span className="muted"> (primary)</span>}
                  </>
                ),
              },
              { key: 'badge', label: 'Badge', sortValue: (r) => r.badge, render: (r) => <SloBadge badge={r.badge} /> },
              { key: 'p95LatencyMs', label: 'p95', align: 'right', sortValue: (r) => r.p95LatencyMs, render: (r) => ms(r.p95LatencyMs) },
              { key: 'okRatePct', label: 'ok rate', align: 'right', sortValue: (r) => r.okRatePct, render: (r) => pct(r.okRatePct) },
              { key: 'ingestSamples24h', label: 'Requests 24 h', align: 'right', sortValue: (r) => r.ingestSamples24h, render: (r) => r.ingestSamples24h.toLocaleString() },
              { key: 'graphLagSec', label: 'Graph lag', align: 'right', sortValue: (r) => r.graphLagSec, render: (r) => sec(r.graphLagSec) },
              { key: 'worstLagSec', label: 'Worst lag', align: 'right', sortValue: (r) => r.worstLagSec, render: (r) => `${sec(r.worstLagSec)} of ${sec(r.latencyTierSec)}` },
              { key: 'replayParity', label: 'Replay parity', sortValue: (r) => r.replayParity, render: (r) => <ParityBadge parity={r.replayParity} /> },
              { key: 'status', label: 'Status', sortValue: (r) => r.status, render: (r) => <RegionStatusBadge status={r.status} /> },
            ]}
          />
          <p>
            Failed: <FailedRegions failed={d.failed} label="Regions the SLO could not ask" />
          </p>
        </>
      )}
    </Panel>
  );
}

/** The regions registry with this deployment marked, the digest tuple, a parity check, a federation replay and the region SLO. */
export default function Regions() {
  const [changes, setChanges] = useState(0);
  const [editing, setEditing] = useState<RegionRow | null>(null);
  const [saves, setSaves] = useState(0);
  const [saved, setSaved] = useState<string | null>(null);
  const [parity, setParity] = useState<{ answer: Parity; at: string } | null>(null);
  const [pin, setPin] = useState<{ pin: Pin; n: number } | null>(null);
  const check = useAction(checkParity);
  const registry = useQuery(loadRegions, [changes]);

  const onCheck = async () => {
    setParity(null);
    const answer = await check.execute();
    if (answer) setParity({ answer, at: answer.generatedAt });
  };

  return (
    <>
      <div className="page-head">
        <h1>Regions</h1>
        <div className="toolbar">
          <Link to="/federation/overview">Federated overview</Link>
          <Link to="/trust/drift?kind=region-parity">Region parity drift</Link>
          <button type="button" className="primary" disabled={check.busy} onClick={() => void onCheck()}>
            Check parity
          </button>
        </div>
      </div>
      {check.busy && <p className="muted" role="status">Asking every active region for its digest tuple…</p>}
      {check.error && <ErrorNote error={check.error} />}
      {parity && (
        <ParityResult
          parity={parity.answer}
          at={parity.at}
          current={registry.data?.currentRegion ?? ''}
          onPin={() => setPin((p) => ({ pin: { digest: parity.answer.federationDigest, tuples: parity.answer.tuples }, n: (p?.n ?? 0) + 1 }))}
          onDismiss={() => setParity(null)}
        />
      )}
      {saved && (
        <p className="badge ok" role="status">
          {saved}
        </p>
      )}
      <Registry state={registry} onEdit={setEditing} />
      <Can scope="write:alerts">
        <RegionForm
          key={`${editing?.key ?? 'new'}-${saves}`}
          from={editing}
          onSaved={(row) => {
            setEditing(null);
            setSaves((n) => n + 1);
            setSaved(`${row.key} saved.`);
            setChanges((n) => n + 1);
          }}
        />
      </Can>
      <LocalDigest />
      <ReplayForm key={pin?.n ?? 0} pin={pin?.pin ?? null} />
      <RegionSlo />
    </>
  );
}
