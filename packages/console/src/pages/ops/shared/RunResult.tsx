import { Time } from '../../../components';
import { duration, RunOutcome, Stats } from './RunOutcome';
import type { JobRun } from './types';

/** The run a "Run now" started, as the service recorded it. */
export function RunResult({ run, onDismiss }: { run: JobRun; onDismiss: () => void }) {
  return (
    <section className="panel" role="region" aria-label={`Run of ${run.job}`}>
      <header className="panel-head">
        <h2>
          Run of <code>{run.job}</code>: <RunOutcome outcome={run.outcome} />
        </h2>
        <button type="button" onClick={onDismiss}>
          Close
        </button>
      </header>
      <dl className="facts">
        <dt>Started</dt>
        <dd>
          <Time at={run.startedAt} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time at={run.finishedAt} />
        </dd>
        <dt>Duration</dt>
        <dd>{duration(run.durationMs)}</dd>
        <dt>Stats</dt>
        <dd>
          <Stats stats={run.stats} />
        </dd>
        {run.errorText && (
          <>
            <dt>Error</dt>
            <dd>
              <pre>{run.errorText}</pre>
            </dd>
          </>
        )}
      </dl>
    </section>
  );
}
