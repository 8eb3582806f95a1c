import { useState } from 'react';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { BarList, Busy, DataTable, ErrorNote, Freshness, Panel, Time } from '../../../components';
import { materialiseNow, readGraphSlo, readMaterialiser, replayMaterialisation } from './api';

const BADGE_CLASS: Record<string, string> = { green: 'ok', yellow: 'warn', red: 'bad', unknown: '' };

export function LagBadge({ badge }: { badge: string }) {
  return <span className={`badge ${BADGE_CLASS[badge] ?? ''}`}>{badge}</span>;
}

const seconds = (s: number | null) => (s === null ? '—' : s < 120 ? `${s} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${(s / 3600).toFixed(1)} h`);

/** How far behind now each node kind is reflected in the graph, against the lag SLO. */
export function GraphLag({ generation }: { generation: number }) {
  const slo = useQuery(readGraphSlo, [generation], { refreshMs: 60_000 });
  return (
    <Panel title="Graph lag" state={slo} minHeight={180}>
      {(d) => (
        <>
          <p>
            Overall <LagBadge badge={d.overallBadge} />{' '}
            {d.worstLagKind ? (
              <span className="muted">
                worst: {d.worstLagKind}, {seconds(d.worstLagSec)} behind
              </span>
            ) : (
              <span className="muted">Nothing materialised yet: the job graph-materialise runs every minute.</span>
            )}
          </p>
          <DataTable
            caption="Lag per node kind"
            rows={d.perKind}
            rowKey={(r) => r.kind}
            pageSize={12}
            columns={[
              { key: 'kind', label: 'Kind', sortValue: (r) => r.kind },
              { key: 'count', label: 'Nodes', align: 'right', sortValue: (r) => r.count },
              { key: 'lagSec', label: 'Lag', align: 'right', sortValue: (r) => r.lagSec, render: (r) => seconds(r.lagSec) },
              { key: 'badge', label: 'SLO', sortValue: (r) => r.badge, render: (r) => <LagBadge badge={r.badge} /> },
              { key: 'oldestMaterialisedAt', label: 'Up to', sortValue: (r) => r.oldestMaterialisedAt, render: (r) => <Time at={r.oldestMaterialisedAt} /> },
            ]}
          />
        </>
      )}
    </Panel>
  );
}

/**
 * The materialiser: node and edge counts, its latest runs with a replay of each against the
 * sources, and a button that materialises now (the job's own run, as its schedule does).
 */
export function Materialiser({ generation, onMaterialised }: { generation: number; onMaterialised: () => void }) {
  const state = useQuery(() => readMaterialiser(10), [generation], { refreshMs: 60_000 });
  const [replayId, setReplayId] = useState<string | null>(null);
  const run = useAction(materialiseNow);
  const materialise = async () => {
    if (await run.execute()) onMaterialised();
  };
  return (
    <Panel
      title="Materialiser"
      state={state}
      minHeight={260}
      actions={
        <Can scope="write:alerts">
          <button type="button" onClick={() => void materialise()} disabled={run.busy}>
            Materialise now
          </button>
        </Can>
      }
    >
      {(d) => (
        <>
          {run.busy && <Busy label="Materialising the graph…" />}
          {run.error && <ErrorNote error={run.error} />}
          <Freshness
            freshness={{
              asOf: d.oldestMaterialisedAt,
              producer: 'graph-materialise',
              schedule: 'every minute',
              reason: d.oldestMaterialisedAt ? null : 'the graph has not been materialised yet',
            }}
          />
          <div className="kpis">
            <div className="kpi">
              <div className="value">{d.totals.nodes.toLocaleString()}</div>
              <div className="label">Nodes</div>
            </div>
            <div className="kpi">
              <div className="value">{d.totals.edges.toLocaleString()}</div>
              <div className="label">Edges</div>
            </div>
            <div className="kpi">
              <div className="value">{d.latestRun ? d.latestRun.outcome : '—'}</div>
              <div className="label">
                Latest run
                {d.latestRun ? (
                  <>
                    {' '}
                    · <Time at={d.latestRun.startedAt} />
                  </>
                ) : (
                  ''
                )}
              </div>
            </div>
          </div>
          <div className="grid">
            <div>
              <h3>Nodes by kind</h3>
              <BarList label="Nodes by kind" items={d.nodesByKind.filter((k) => k.count > 0).map((k) => ({ name: k.kind, count: k.count }))} />
            </div>
            <div>
              <h3>Edges by kind</h3>
              <BarList label="Edges by kind" items={d.edgesByKind.filter((k) => k.count > 0).map((k) => ({ name: k.kind, count: k.count }))} />
            </div>
          </div>
          <h3>Recent runs</h3>
          <DataTable
            caption="Recent materialiser runs, newest first"
            rows={d.recentRuns}
            rowKey={(r) => r.id}
            pageSize={10}
            empty="No runs yet: the job runs every minute, or press Materialise now."
            columns={[
              { key: 'startedAt', label: 'Started', sortValue: (r) => r.startedAt, render: (r) => <Time at={r.startedAt} /> },
              { key: 'trigger', label: 'Trigger', sortValue: (r) => r.trigger },
              {
                key: 'outcome',
                label: 'Outcome',
                sortValue: (r) => r.outcome,
                render: (r) => <span className={`badge ${r.outcome === 'ok' ? 'ok' : r.outcome === 'error' ? 'bad' : ''}`}>{r.outcome}</span>,
              },
              { key: 'durationMs', label: 'Took', align: 'right', sortValue: (r) => r.durationMs, render: (r) => (r.durationMs === null ? '—' : `${r.durationMs} ms`) },
              { key: 'nodes', label: 'Nodes ±', align: 'right', render: (r) => change(r.stats, 'nodes') },
              { key: 'edges', label: 'Edges ±', align: 'right', render: (r) => change(r.stats, 'edges') },
              {
                key: 'replay',
                label: 'Check',
                render: (r) =>
                  r.outcome === 'ok' ? (
                    <button type="button" onClick={() => setReplayId(r.id)} aria-label={`Replay the run of ${r.startedAt}`}>
                      Replay
                    </button>
                  ) : (
                    <span className="muted">{r.errorText ?? '—'}</span>
                  ),
              },
            ]}
          />
          {replayId && <Replay id={replayId} onClose={() => setReplayId(null)} />}
        </>
      )}
    </Panel>
  );
}

/** `+added / −removed` of a run's stats for nodes or edges. */
function change(stats: Record<string, unknown>, what: 'nodes' | 'edges'): string {
  const added = Number(stats[`${what}Added`] ?? 0);
  const removed = Number(stats[`${what}Removed`] ?? 0);
  return `+${added} / −${removed}`;
}

/** A run rebuilt from the sources and compared with what it stored (long on a large history). */
function Replay({ id, onClose }: { id: string; onClose: () => void }) {
  const replay = useQuery(() => replayMaterialisation(id), [id]);
  return (
    <section className="panel replay" aria-label="Replay of a materialiser run">
      <header className="panel-head">
        <h3>Replay of run {id.slice(0, 8)}</h3>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      {replay.error && <ErrorNote error={replay.error} onRetry={replay.reload} />}
      {!replay.data && !replay.error && <Busy label="Rebuilding the run's graph from its sources…" />}
      {replay.data && <ReplayAnswer answer={replay.data} />}
    </section>
  );
}

function ReplayAnswer({ answer }: { answer: Awaited<ReturnType<typeof replayMaterialisation>> }) {
  const lists = ['addedNodes', 'removedNodes', 'addedEdges', 'removedEdges'] as const;
  return (
    <>
      <p>
        <span className={`badge ${answer.matches ? 'ok' : 'bad'}`}>{answer.matches ? 'matches' : 'differs'}</span>{' '}
        {answer.matches ? 'The sources still give exactly the graph this run stored.' : 'The sources now give a different graph than this run stored.'}
      </p>
      <dl className="facts">
        <dt>Stored digest</dt>
        <dd>
          <code>{answer.storedDigest}</code> (<Time at={answer.storedAt} />)
        </dd>
        <dt>Rebuilt digest</dt>
        <dd>
          <code>{answer.liveDigest}</code> (<Time at={answer.liveAt} />)
        </dd>
      </dl>
      {lists.map((list) =>
        answer[list].length > 0 ? (
          <details key={list}>
            <summary>
              {list} ({answer[list].length})
            </summary>
            <ul className="plain-list">
              {answer[list].map((x) => (
                <li key={x}>
                  <code>{x}</code>
                </li>
              ))}
            </ul>
          </details>
        ) : null,
      )}
    </>
  );
}
