import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { useUrlState } from '../../app/urlState';
import { useQuery } from '../../app/useQuery';
import { DataTable, FilterSelect, Panel, Time } from '../../components';
import { CursorPager, useCursorStack } from '../empire/shared/cursor';
import { loadExperiments, loadRuns, RUN_OUTCOMES, type Run, type RunOutcome as Outcome } from './shared/api';
import { RecoveryBadge, RunOutcome } from './shared/badges';
import { FreezeBanner } from './shared/FreezeBanner';
import { recoveryOf } from './shared/recovery';
import '../empire/shared/empire.css';
import './shared/chaos.css';

const oneOf = <T extends string>(values: readonly T[], value: string): T | null => ((values as readonly string[]).includes(value) ? (value as T) : null);

/** What the run measured (the kind's own figures), folded: it can be long. */
function Measurements({ run }: { run: Run }) {
  const keys = Object.keys(run.measurements ?? {});
  if (keys.length === 0) return <span className="muted">none</span>;
  return (
    <details>
      <summary aria-label={`Measurements of run ${run.id}: ${keys.join(', ')}`}>{keys.join(', ')}</summary>
      <pre className="measurements" data-testid={`measurements-${run.id}`}>
        {JSON.stringify(run.measurements, null, 2)}
      </pre>
    </details>
  );
}

/** Why a run ended as it did: the abort's reason, or the error it met. */
function Why({ run }: { run: Run }) {
  if (!run.abortReason && !run.errorText) return <span className="muted">—</span>;
  return (
    <span className="summary">
      {run.abortReason && <span data-testid={`abort-${run.id}`}>{run.abortReason}</span>}
      {run.abortReason && run.errorText && ' · '}
      {run.errorText && <span className="muted">{run.errorText}</span>}
    </span>
  );
}

/** The runs, newest first: outcome, observed recovery against the SLO, phase, why, measurements; by experiment and outcome. */
export default function Runs() {
  const { get, set } = useUrlState();
  const experimentId = get('experiment') || null;
  const outcome = oneOf<Outcome>(RUN_OUTCOMES, get('outcome'));
  const pager = useCursorStack();
  // A run in progress changes phase within seconds: refresh often while one is listed.
  const [open, setOpen] = useState(false);
  const state = useQuery(() => loadRuns({ experimentId, outcome, cursor: pager.cursor }), [experimentId, outcome, pager.cursor], { refreshMs: open ? 5_000 : 60_000 });
  useEffect(() => setOpen(state.data?.runs.some((r) => r.endedAt === null) ?? false), [state.data]);
  // The experiment filter's choices: the experiments registered (the newest 200), with the chosen one kept even when older.
  const experiments = useQuery(() => loadExperiments({ kind: null, status: null, cursor: undefined, limit: 200 }), []);
  const slugs = new Map((experiments.data?.experiments ?? []).map((e) => [e.id, e.slug]));
  const choices = [...slugs.keys(), ...(experimentId && !slugs.has(experimentId) ? [experimentId] : [])];

  const filter = (next: Record<string, string | null>) => {
    pager.reset();
    set(next);
  };
  const chosen = experimentId ? (slugs.get(experimentId) ?? experimentId) : null;

  return (
    <>
      <div className="page-head">
        <h1>Chaos runs</h1>
        <div className="toolbar">
          <label className="field inline">
            <span className="sr-only">Experiment</span>
            <select aria-label="Experiment" value={experimentId ?? ''} onChange={(e) => filter({ experiment: e.target.value || null })}>
              <option value="">Every experiment</option>
              {choices.map((id) => (
                <option key={id} value={id}>
                  {slugs.get(id) ?? id}
                </option>
              ))}
            </select>
          </label>
          <FilterSelect label="Outcome" value={outcome ?? ''} options={RUN_OUTCOMES} anyLabel="Every outcome" onChange={(v) => filter({ outcome: v || null })} />
          <Link to="/chaos/experiments">Experiments</Link>
          <Link to="/chaos/freeze">Freeze</Link>
        </div>
      </div>
      <FreezeBanner />
      <Panel
        title={`Runs${chosen ? ` of ${chosen}` : ''}${outcome ? `, ${outcome}` : ''}`}
        state={state}
        minHeight={200}
        isEmpty={(d) => d.runs.length === 0}
        empty={
          experimentId || outcome
            ? 'No run matches these filters.'
            : 'No run yet. The chaos-schedule job runs an eligible experiment when OBSERVATORY_CHAOS_ALLOW allows its blast radius; Run now on the experiments page starts one at once.'
        }
      >
        {(d) => (
          <>
            <DataTable
              caption="Chaos runs, newest first"
              rows={d.runs}
              rowKey={(r) => r.id}
              pageSize={50}
              columns={[
                { key: 'startedAt', label: 'Started', sortValue: (r) => r.startedAt, render: (r) => <Time at={r.startedAt} /> },
                {
                  key: 'experiment',
                  label: 'Experiment',
                  sortValue: (r) => r.experimentSlug ?? r.experimentId,
                  render: (r) => (
                    <button type="button" className="link" aria-label={`Runs of ${r.experimentSlug ?? r.experimentId}`} onClick={() => filter({ experiment: r.experimentId })}>
                      {r.experimentSlug ?? <span className="muted">{r.experimentId} (gone)</span>}
                    </button>
                  ),
                },
                { key: 'kind', label: 'Kind', sortValue: (r) => r.experimentKind, render: (r) => r.experimentKind ?? <span className="muted">—</span> },
                { key: 'target', label: 'Target', sortValue: (r) => r.target, render: (r) => <code className="summary">{r.target}</code> },
                { key: 'trigger', label: 'Trigger', sortValue: (r) => r.trigger },
                { key: 'phase', label: 'Phase', sortValue: (r) => r.phase },
                { key: 'outcome', label: 'Outcome', sortValue: (r) => r.outcome, render: (r) => <RunOutcome outcome={r.outcome} open={r.endedAt === null} /> },
                {
                  key: 'recovery',
                  label: 'Recovery vs SLO',
                  sortValue: (r) => r.observedRecoverySec,
                  render: (r) => {
                    const recovery = recoveryOf(r);
                    return <RecoveryBadge verdict={recovery.verdict} text={recovery.text} />;
                  },
                },
                { key: 'endedAt', label: 'Ended', sortValue: (r) => r.endedAt, render: (r) => <Time at={r.endedAt} /> },
                { key: 'why', label: 'Abort reason or error', render: (r) => <Why run={r} /> },
                { key: 'measurements', label: 'Measurements', render: (r) => <Measurements run={r} /> },
              ]}
            />
            <CursorPager pager={pager} nextCursor={d.nextCursor} label="Run pages" />
          </>
        )}
      </Panel>
    </>
  );
}
