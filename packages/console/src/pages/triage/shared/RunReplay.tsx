import { useEffect, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from '../../../app/useQuery';
import { Field, Panel, Time } from '../../../components';
import { listProposals, replayRun } from './api';
import { proposalHref } from './labels';

/** The runs that made proposals (there is no list of runs itself), newest first, to pick one to replay. */
function useRecentRuns(generation: number) {
  const all = useQuery(() => listProposals({ status: 'all', limit: 200 }), [generation]);
  return useMemo(() => {
    const runs = new Map<string, { runId: string; agentVersion: string; createdAt: string; proposals: number }>();
    for (const p of all.data?.proposals ?? []) {
      const known = runs.get(p.runId);
      if (known) known.proposals += 1;
      else runs.set(p.runId, { runId: p.runId, agentVersion: p.agentVersion, createdAt: p.createdAt, proposals: 1 });
    }
    return [...runs.values()];
  }, [all.data]);
}

/** A run's stored envelope (`run` in the address): what the agent read and answered, and whether it still hashes to its digest. */
export function RunReplay({ runId, onRunId, generation }: { runId: string; onRunId: (runId: string | null) => void; /** Changes when a run was started, so its run is listed. */ generation: number }) {
  const recent = useRecentRuns(generation);
  const [draft, setDraft] = useState(runId);
  useEffect(() => setDraft(runId), [runId]);
  const replay = useQuery(() => replayRun(runId), [runId], { enabled: runId !== '' });

  return (
    <section className="panel" style={{ minHeight: 160 }}>
      <h2>Replay a run</h2>
      <form
        className="toolbar"
        aria-label="Pick a run to replay"
        onSubmit={(e) => {
          e.preventDefault();
          onRunId(draft.trim() || null);
        }}
      >
        {recent.length > 0 && (
          <Field label="Recent runs with proposals">
            <select value={recent.some((r) => r.runId === runId) ? runId : ''} onChange={(e) => onRunId(e.target.value || null)}>
              <option value="">Pick a run…</option>
              {recent.map((r) => (
                <option key={r.runId} value={r.runId}>
                  {r.agentVersion} · {new Date(r.createdAt).toLocaleString()} · {r.proposals} proposal{r.proposals === 1 ? '' : 's'}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field label="Run id">
          <input value={draft} onChange={(e) => setDraft(e.target.value)} size={38} maxLength={64} placeholder="the runId a run answered" />
        </Field>
        <button type="submit">Replay</button>
      </form>
      {runId === '' ? (
        <p className="empty">Pick a run above, or start one: its result has a Replay button.</p>
      ) : (
        <Panel state={replay} minHeight={160}>
          {(r) => (
            <>
              <p>
                <span className={`badge ${r.matches ? 'ok' : 'bad'}`}>{r.matches ? 'digest matches' : 'digest differs'}</span>{' '}
                {r.matches ? 'The stored prompt, input and answer still hash to the run’s digest.' : 'The stored parts no longer hash to the run’s digest: the record was changed.'}
              </p>
              <dl className="facts">
                <dt>Agent</dt>
                <dd>
                  {r.agentVersion} ({r.engine}, model {r.model})
                </dd>
                <dt>Outcome</dt>
                <dd>
                  <span className={`badge ${r.outcome === 'ok' ? 'ok' : 'bad'}`}>{r.outcome}</span> {r.errorText}
                </dd>
                <dt>Ran</dt>
                <dd>
                  <Time at={r.startedAt} /> – <Time at={r.finishedAt} />
                </dd>
                <dt>Tokens</dt>
                <dd>
                  {r.promptTokens.toLocaleString()} in, {r.completionTokens.toLocaleString()} out
                </dd>
                <dt>Digest</dt>
                <dd>
                  <code>{r.digest}</code>
                </dd>
                <dt>Proposals</dt>
                <dd>
                  {r.proposalIds.length === 0 ? (
                    <span className="muted">none</span>
                  ) : (
                    <ul className="ids">
                      {r.proposalIds.map((id) => (
                        <li key={id}>
                          <Link to={proposalHref(id)}>
                            <code>{id.slice(0, 8)}</code>
                          </Link>
                        </li>
                      ))}
                    </ul>
                  )}
                </dd>
              </dl>
              <details>
                <summary>What the agent read ({r.userMessageBytes.toLocaleString()} bytes)</summary>
                <pre>{r.userMessage}</pre>
              </details>
              <details>
                <summary>What it answered ({r.llmResponseBytes.toLocaleString()} bytes)</summary>
                <pre>{r.llmResponse}</pre>
              </details>
            </>
          )}
        </Panel>
      )}
    </section>
  );
}
