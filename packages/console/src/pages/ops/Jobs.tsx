import { useCallback, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useUrlState } from '../../app/urlState';
import { useAction, useQuery } from '../../app/useQuery';
import { useSession } from '../../auth/session';
import { type Column, DataTable, ErrorNote, Panel, Time } from '../../components';
import { Elapsed } from './shared/Elapsed';
import { duration, RunOutcome, Stats } from './shared/RunOutcome';
import { RunResult } from './shared/RunResult';
import type { JobHealth, JobRun } from './shared/types';
import './shared/ops.css';

const RECENT = ['20', '50', '200'] as const;

/** Scheduled jobs: schedule, next and last run, recent runs; run one now and see its result. */
export default function Jobs() {
  const { can } = useSession();
  const { get, set } = useUrlState();
  const recent = (RECENT as readonly string[]).includes(get('recent')) ? Number(get('recent')) : 20;
  const health = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/ops/cron-health', { params: { query: { limit: recent } } })),
    [recent],
    { refreshMs: 30_000 },
  );
  const [running, setRunning] = useState<string | null>(null);
  const [result, setResult] = useState<JobRun | null>(null);
  const run = useAction(
    useCallback((job: string) => unwrap(api.POST('/api/observatory/v1/ops/jobs/{job}/run', { params: { path: { job } }, body: {} })), []),
  );
  const runNow = async (job: string) => {
    setRunning(job);
    setResult(null);
    const answer = await run.execute(job);
    setRunning(null);
    if (answer) setResult(answer.run);
    health.reload();
  };

  const jobColumns: Column<JobHealth>[] = [
    {
      key: 'job',
      label: 'Job',
      sortValue: (j) => j.job,
      render: (j) => (
        <>
          <code>{j.job}</code>
          <div className="muted">{j.description}</div>
        </>
      ),
    },
    { key: 'schedule', label: 'Schedule (UTC)', render: (j) => (j.schedule ? <code>{j.schedule}</code> : <span className="muted">on demand only</span>) },
    { key: 'nextRunAt', label: 'Next run', sortValue: (j) => j.nextRunAt, render: (j) => <Time at={j.nextRunAt} /> },
    {
      key: 'lastRun',
      label: 'Last run',
      sortValue: (j) => j.lastRun?.startedAt,
      render: (j) =>
        j.lastRun ? (
          <>
            <RunOutcome outcome={j.lastRun.outcome} /> <Time at={j.lastRun.startedAt} /> <span className="muted">({duration(j.lastRun.durationMs)})</span>
          </>
        ) : (
          <span className="muted">never</span>
        ),
    },
  ];
  if (can('write:alerts'))
    jobColumns.push({
      key: 'run',
      label: 'Run',
      render: (j) =>
        running === j.job ? (
          <Elapsed label={`Running ${j.job}…`} />
        ) : (
          // Named in full for screen readers; an absolutely placed hidden span would widen a scrolled table's page.
          <button type="button" aria-label={`Run now ${j.job}`} onClick={() => void runNow(j.job)} disabled={running !== null}>
            Run now
          </button>
        ),
    });

  const runColumns: Column<JobRun>[] = [
    { key: 'job', label: 'Job', sortValue: (r) => r.job, render: (r) => <code>{r.job}</code> },
    { key: 'trigger', label: 'Trigger', sortValue: (r) => r.trigger },
    { key: 'outcome', label: 'Outcome', sortValue: (r) => r.outcome, render: (r) => <RunOutcome outcome={r.outcome} /> },
    { key: 'startedAt', label: 'Started', sortValue: (r) => r.startedAt, render: (r) => <Time at={r.startedAt} /> },
    { key: 'durationMs', label: 'Duration', align: 'right', sortValue: (r) => r.durationMs, render: (r) => duration(r.durationMs) },
    { key: 'stats', label: 'Stats', render: (r) => (r.errorText ? <span className="error-text">{r.errorText}</span> : <Stats stats={r.stats} />) },
  ];

  return (
    <>
      <div className="page-head">
        <h1>Scheduled jobs</h1>
        <div className="segmented" role="group" aria-label="Recent runs shown">
          {RECENT.map((n) => (
            <button key={n} type="button" aria-pressed={recent === Number(n)} onClick={() => set({ recent: n === '20' ? null : n })}>
              {n} runs
            </button>
          ))}
        </div>
      </div>
      {run.error && <ErrorNote error={run.error} />}
      {result && <RunResult run={result} onDismiss={() => setResult(null)} />}
      <Panel title="Jobs" state={health} minHeight={240} isEmpty={(d) => d.latestPerJob.length === 0} empty="This instance has no scheduled jobs.">
        {(d) => <DataTable caption="Every job, with its schedule and latest run" columns={jobColumns} rows={d.latestPerJob} rowKey={(j) => j.job} />}
      </Panel>
      <Panel title="Recent runs" state={health} minHeight={200}>
        {(d) => (
          <DataTable
            caption="The latest runs of all jobs, newest first"
            columns={runColumns}
            rows={d.recent}
            rowKey={(r) => r.id}
            empty="No job has run yet: jobs run on their schedule, or now with “Run now”."
          />
        )}
      </Panel>
    </>
  );
}
