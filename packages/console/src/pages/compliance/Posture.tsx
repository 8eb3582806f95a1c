import { useState } from 'react';
import { Link } from 'react-router';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { DataTable, ErrorNote, Panel, Time } from '../../components';
import { Elapsed } from '../ops/shared/Elapsed';
import { RunResult } from '../ops/shared/RunResult';
import type { JobRun } from '../ops/shared/types';
import { controlsPath, EVALUATE_JOB, loadPosture, type PostureRow, runEvaluation } from './shared/api';
import { PostureBadge } from './shared/badges';

const rate = (r: PostureRow) => (r.ratePct === null ? '—' : `${r.ratePct.toLocaleString(undefined, { maximumFractionDigits: 1 })}%`);

/** Posture per framework (badge, pass rate, counts, as of), the evaluation run now, and each framework's controls. */
export default function Posture() {
  const state = useQuery(loadPosture, []);
  const run = useAction(runEvaluation);
  const [result, setResult] = useState<JobRun | null>(null);

  const onRun = async () => {
    setResult(null);
    const answer = await run.execute();
    if (answer) setResult(answer.run);
    state.reload();
  };

  return (
    <>
      <div className="page-head">
        <h1>Compliance posture</h1>
        <div className="toolbar">
          <Link to="/compliance/narrator">Read it as a paragraph</Link>
          <Can scope="write:alerts">
            <button type="button" className="primary" disabled={run.busy} onClick={() => void onRun()}>
              Run the evaluation now
            </button>
          </Can>
        </div>
      </div>
      {run.busy && <Elapsed label={`Running ${EVALUATE_JOB}: observing the live system and evaluating every control…`} />}
      {run.error && <ErrorNote error={run.error} />}
      {result && <RunResult run={result} onDismiss={() => setResult(null)} />}
      <Panel
        title="Frameworks"
        state={state}
        minHeight={180}
        isEmpty={(d) => d.frameworks.length === 0}
        empty="This deployment ships no frameworks."
      >
        {(d) => (
          <>
            {d.frameworks.every((f) => f.asOf === null) && (
              <p className="empty">No evaluation yet: the compliance-evaluate job runs hourly at :11 UTC, or run it now.</p>
            )}
            <DataTable
              caption="Posture per framework"
              rows={d.frameworks}
              rowKey={(f) => f.framework}
              columns={[
                {
                  key: 'framework',
                  label: 'Framework',
                  sortValue: (f) => f.title,
                  render: (f) => (
                    <>
                      {f.title} <code>{f.framework}</code>
                      <div className="muted">{f.version}</div>
                    </>
                  ),
                },
                { key: 'badge', label: 'Badge', sortValue: (f) => f.badge, render: (f) => <PostureBadge badge={f.badge} /> },
                { key: 'ratePct', label: 'Pass rate', align: 'right', sortValue: (f) => f.ratePct, render: rate },
                { key: 'passing', label: 'Passing', align: 'right', sortValue: (f) => f.passing },
                { key: 'failing', label: 'Failing', align: 'right', sortValue: (f) => f.failing },
                { key: 'manualReview', label: 'Manual review', align: 'right', sortValue: (f) => f.manualReview },
                { key: 'nA', label: 'Not applicable', align: 'right', sortValue: (f) => f.nA },
                { key: 'totalControls', label: 'Controls', align: 'right', sortValue: (f) => f.totalControls },
                { key: 'asOf', label: 'As of', sortValue: (f) => f.asOf, render: (f) => <Time at={f.asOf} /> },
                {
                  key: 'links',
                  label: 'Open',
                  render: (f) => (
                    <span className="chips">
                      <Link to={controlsPath(f.framework)} aria-label={`Controls of ${f.title}`}>
                        Controls
                      </Link>
                      <Link to={`/compliance/bundles?framework=${encodeURIComponent(f.framework)}`} aria-label={`Evidence bundles of ${f.title}`}>
                        Bundles
                      </Link>
                    </span>
                  ),
                },
              ]}
            />
          </>
        )}
      </Panel>
    </>
  );
}
