import { useState } from 'react';
import { Link } from 'react-router';
import { useUrlState } from '../../app/urlState';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { DataTable, ErrorNote, FilterSelect, Panel, Time } from '../../components';
import { Severity } from '../empire/shared/badges';
import { CursorPager, useCursorStack } from '../empire/shared/cursor';
import { CHAOS_KINDS, type ChaosKind, EXPERIMENT_STATUSES, type Experiment, type ExperimentStatus as Status, loadExperiments, type Move, moveExperiment, type Run, runExperimentNow } from './shared/api';
import { ExperimentStatus } from './shared/badges';
import { ExperimentActions } from './shared/ExperimentActions';
import { FreezeBanner } from './shared/FreezeBanner';
import { RegisterForm } from './shared/RegisterForm';
import '../empire/shared/empire.css';
import './shared/chaos.css';

const oneOf = <T extends string>(values: readonly T[], value: string): T | null => ((values as readonly string[]).includes(value) ? (value as T) : null);
const MOVED: Record<Move, string> = { pause: 'paused', resume: 'resumed', retire: 'retired' };

/** What the latest action did, in a sentence, with the run it started when there is one. */
type Done = { message: string; run?: Run };

/** The experiments: a list by kind and status, paged newest first; register, pause, resume, retire, run now. */
export default function Experiments() {
  const { get, set } = useUrlState();
  const kind = oneOf<ChaosKind>(CHAOS_KINDS, get('kind'));
  const status = oneOf<Status>(EXPERIMENT_STATUSES, get('status'));
  const pager = useCursorStack();
  const [changes, setChanges] = useState(0);
  const state = useQuery(() => loadExperiments({ kind, status, cursor: pager.cursor }), [kind, status, pager.cursor, changes], { refreshMs: 60_000 });
  const move = useAction(moveExperiment);
  const run = useAction(runExperimentNow);
  const [pending, setPending] = useState<string | null>(null);
  const [done, setDone] = useState<Done | null>(null);

  const filter = (next: Record<string, string | null>) => {
    pager.reset();
    set(next);
  };
  const act = async <T,>(e: Experiment, action: () => Promise<T | null>, message: (answer: T) => Done) => {
    move.clearError();
    run.clearError();
    setDone(null);
    setPending(e.id);
    const answer = await action();
    setPending(null);
    if (answer) {
      setDone(message(answer));
      setChanges((n) => n + 1);
    }
  };
  const onMove = (e: Experiment, m: Move) => void act(e, () => move.execute(e.id, m), () => ({ message: `Experiment ${e.slug} ${MOVED[m]}.` }));
  const onRun = (e: Experiment) =>
    void act(e, () => run.execute(e.id), (answer) => ({ message: `Run of ${e.slug} started: the fault is held until the window ends.`, ...(answer.run ? { run: answer.run } : {}) }));

  return (
    <>
      <div className="page-head">
        <h1>Chaos experiments</h1>
        <div className="toolbar">
          <FilterSelect label="Kind" value={kind ?? ''} options={CHAOS_KINDS} anyLabel="Every kind" onChange={(v) => filter({ kind: v || null })} />
          <FilterSelect label="Status" value={status ?? ''} options={EXPERIMENT_STATUSES} anyLabel="Every status" onChange={(v) => filter({ status: v || null })} />
          <Link to="/chaos/runs">Runs</Link>
          <Link to="/chaos/freeze">Freeze</Link>
        </div>
      </div>
      <FreezeBanner changes={changes} />
      {(move.error ?? run.error) && <ErrorNote error={(move.error ?? run.error)!} />}
      {done && (
        <p className="badge ok" role="status" data-testid="done">
          {done.message}{' '}
          {done.run && (
            <Link to={`/chaos/runs?experiment=${done.run.experimentId}`} aria-label="See the run">
              See the run
            </Link>
          )}
        </p>
      )}
      <Panel
        title={`Experiments${kind ? `: ${kind}` : ''}${status ? `, ${status}` : ''}`}
        state={state}
        minHeight={200}
        isEmpty={(d) => d.experiments.length === 0}
        empty={kind || status ? 'No experiment matches these filters.' : 'No experiment registered yet. Register one with the form: nothing runs until one is registered and OBSERVATORY_CHAOS_ALLOW lets its blast radius run.'}
      >
        {(d) => (
          <>
            <DataTable
              caption="Chaos experiments, newest first"
              rows={d.experiments}
              rowKey={(e) => e.id}
              pageSize={50}
              columns={[
                { key: 'slug', label: 'Slug', sortValue: (e) => e.slug, render: (e) => <code>{e.slug}</code> },
                { key: 'kind', label: 'Kind', sortValue: (e) => e.kind },
                { key: 'target', label: 'Target', sortValue: (e) => e.target, render: (e) => <code className="summary">{e.target}</code> },
                { key: 'description', label: 'Description', render: (e) => (e.description ? <span className="summary">{e.description}</span> : <span className="muted">—</span>) },
                { key: 'blastRadius', label: 'Blast radius', sortValue: (e) => e.blastRadius },
                { key: 'recoverySloSec', label: 'Recovery SLO', align: 'right', sortValue: (e) => e.recoverySloSec, render: (e) => `${e.recoverySloSec} s` },
                { key: 'cooldownMinutes', label: 'Cooldown', align: 'right', sortValue: (e) => e.cooldownMinutes, render: (e) => `${e.cooldownMinutes} min` },
                { key: 'severity', label: 'Severity', sortValue: (e) => e.severity, render: (e) => <Severity severity={e.severity} /> },
                { key: 'status', label: 'Status', sortValue: (e) => e.status, render: (e) => <ExperimentStatus status={e.status} /> },
                { key: 'createdAt', label: 'Registered', sortValue: (e) => e.createdAt, render: (e) => <Time at={e.createdAt} /> },
                {
                  key: 'runs',
                  label: 'Runs',
                  render: (e) => (
                    <Link to={`/chaos/runs?experiment=${e.id}`} aria-label={`Runs of ${e.slug}`}>
                      Runs
                    </Link>
                  ),
                },
                {
                  key: 'actions',
                  label: 'Actions',
                  render: (e) => <ExperimentActions experiment={e} busy={pending !== null} working={pending === e.id} onMove={onMove} onRun={onRun} />,
                },
              ]}
            />
            <CursorPager pager={pager} nextCursor={d.nextCursor} label="Experiment pages" />
          </>
        )}
      </Panel>
      <Can scope="write:alerts">
        <RegisterForm
          onRegistered={(e) => {
            setDone({ message: `Experiment ${e.slug} registered (${e.kind}, blast radius ${e.blastRadius}, recovery SLO ${e.recoverySloSec} s).` });
            pager.reset();
            setChanges((n) => n + 1);
          }}
        />
      </Can>
    </>
  );
}
