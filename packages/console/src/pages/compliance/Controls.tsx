import { useState } from 'react';
import { Link } from 'react-router';
import { useUrlState } from '../../app/urlState';
import { useQuery } from '../../app/useQuery';
import { DataTable, FilterSelect, Panel, Time } from '../../components';
import { Severity } from '../empire/shared/badges';
import { type Control, loadFramework, loadManifest, OUTCOMES } from './shared/api';
import { OutcomeBadge } from './shared/badges';
import { ControlDetail } from './shared/ControlDetail';
import { EvidenceLink } from './shared/EvidenceLink';
import { FrameworkPicker, useFrameworkParam } from './shared/FrameworkPicker';
import './shared/compliance.css';

const NOT_EVALUATED = 'not evaluated';

/** A framework's controls with the outcome in force and its evidence; one control opened (`?control=`) with its replay and the override form. */
export default function Controls() {
  const { get, set, params } = useUrlState();
  const framework = useFrameworkParam();
  const outcome = get('outcome');
  const opened = get('control');
  const [changes, setChanges] = useState(0);
  const state = useQuery(() => loadFramework(framework), [framework, changes]);
  // The manifest says which console page shows each evidence URL's endpoint.
  const manifest = useQuery(loadManifest, []);
  const endpoints = manifest.data?.endpoints ?? null;

  const control = opened && state.data ? state.data.controls.find((c) => c.controlId === opened || c.id === opened) : undefined;
  // Opening or closing a control keeps the framework and the filter.
  const withControl = (controlId: string | null) => {
    const next = new URLSearchParams(params);
    if (controlId) next.set('control', controlId);
    else next.delete('control');
    return `?${next}`;
  };
  const shown = (c: Control) => outcome === '' || (outcome === NOT_EVALUATED ? c.latestOutcome === null : c.latestOutcome === outcome);

  return (
    <>
      <div className="page-head">
        <h1>Controls</h1>
        <div className="toolbar">
          <FrameworkPicker />
          <FilterSelect label="Outcome" value={outcome} options={[...OUTCOMES, NOT_EVALUATED]} anyLabel="Every outcome" onChange={(v) => set({ outcome: v })} />
        </div>
      </div>
      {opened && state.data && !control && (
        <p className="error-note" role="alert">
          {state.data.title} has no control {opened}.
        </p>
      )}
      {control && state.data && <ControlDetail control={control} framework={state.data.framework} endpoints={endpoints} closeTo={withControl(null)} onOverridden={() => setChanges((n) => n + 1)} />}
      <Panel title={state.data ? `${state.data.title} (${state.data.version})` : 'Controls'} state={state} minHeight={320}>
        {(d) => (
              <DataTable
                caption={`Controls of ${d.framework} with the outcome in force`}
                rows={d.controls.filter(shown)}
                rowKey={(c) => c.id}
                pageSize={50}
                empty={`No control of ${d.framework} has the outcome ${outcome}.`}
                columns={[
                  {
                    key: 'controlId',
                    label: 'Control',
                    sortValue: (c) => c.controlId,
                    render: (c) => (
                      <Link to={withControl(c.controlId)} aria-label={`Open ${c.controlId}`} aria-current={c === control ? 'true' : undefined}>
                        {c.controlId}
                      </Link>
                    ),
                  },
                  { key: 'title', label: 'Title', sortValue: (c) => c.title },
                  { key: 'category', label: 'Category', sortValue: (c) => c.category },
                  { key: 'severity', label: 'Severity', sortValue: (c) => ['critical', 'major', 'minor'].indexOf(c.severity), render: (c) => <Severity severity={c.severity} /> },
                  { key: 'latestOutcome', label: 'Outcome', sortValue: (c) => c.latestOutcome, render: (c) => <OutcomeBadge outcome={c.latestOutcome} /> },
                  { key: 'latestSummary', label: 'Summary', render: (c) => (c.latestSummary ? <span className="summary">{c.latestSummary}</span> : <span className="muted">—</span>) },
                  { key: 'latestEvaluatedBy', label: 'Evaluated by', sortValue: (c) => c.latestEvaluatedBy, render: (c) => c.latestEvaluatedBy ?? <span className="muted">—</span> },
                  { key: 'latestRunAt', label: 'Run', sortValue: (c) => c.latestRunAt, render: (c) => <Time at={c.latestRunAt} /> },
                  { key: 'evidence', label: 'Evidence', render: (c) => <EvidenceLink control={c} framework={d.framework} endpoints={endpoints} /> },
                ]}
              />
        )}
      </Panel>
    </>
  );
}
