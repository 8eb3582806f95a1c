import { Link } from 'react-router';
import { useQuery } from '../../app/useQuery';
import { DataTable, Panel } from '../../components';
import { Kpi } from '../empire/shared/Kpi';
import { type Dimension, loadSnapshot } from './shared/api';
import { TrustBadge } from './shared/badges';
import { consolePath } from './shared/drillIn';
import './shared/trust.css';


const number = (v: number, digits = 0) => v.toLocaleString(undefined, { maximumFractionDigits: digits });

function DimensionCard({ d }: { d: Dimension }) {
  return (
    <li className="dimension" aria-label={`${d.title}: ${d.badge}`} data-testid={`dimension-${d.key}`}>
      <h2>
        {d.title} <TrustBadge badge={d.badge} />
      </h2>
      <p className="summary">{d.summary}</p>
      <p>
        <Link to={consolePath(d.drillIn)} aria-label={`Drill into ${d.title}`}>
          Drill in
        </Link>
      </p>
      <p className="api muted">
        API: <code>{d.apiDrillIn}</code>
      </p>
    </li>
  );
}

/** The trust snapshot: an overall badge, six dimensions with their drill-ins, the numbers under them and the weighted score. */
export default function Snapshot() {
  const state = useQuery(loadSnapshot, [], { refreshMs: 60_000 });
  return (
    <>
      <div className="page-head">
        <h1>Trust snapshot</h1>
        <div className="toolbar">
          <Link to="/trust/drift">Drift inbox</Link>
          <Link to="/federation/regions">Regions</Link>
        </div>
      </div>
      <Panel title="Overall" state={state} minHeight={120}>
        {(s) => (
          <>
            <p>
              Overall{' '}
              <span data-testid="overall-badge">
                <TrustBadge badge={s.overallBadge} />
              </span>{' '}
              · score <strong data-testid="score">{number(s.score.score, 1)}</strong> of 100 <TrustBadge badge={s.score.badge} />
            </p>
            <ul className="dimensions" aria-label="Dimensions">
              {s.dimensions.map((d) => (
                <DimensionCard key={d.key} d={d} />
              ))}
            </ul>
          </>
        )}
      </Panel>
      <Panel title="Numbers" state={state} minHeight={120}>
        {(s) => (
          <>
            <div className="kpis" aria-label="Trust numbers">
              <Kpi label="Controls passing" value={s.numbers.postureGreen} />
              <Kpi label="Controls failing" value={s.numbers.postureFailing} />
              <Kpi label="Migration parity" value={s.numbers.migrationParity} />
              <Kpi label="Graph lag" value={s.numbers.graphLagSec} unit="s" />
              <Kpi label="Open incidents" value={s.numbers.openIncidents} />
              <Kpi label="Operator audits 24 h" value={s.numbers.recentAudits24h} />
              <Kpi label="Drift events 24 h" value={s.numbers.driftEvents24h} />
            </div>
            <p className="muted">
              Federation digest: {s.numbers.federationDigest ? <code className="hash">{s.numbers.federationDigest}</code> : <span>none</span>}
            </p>
          </>
        )}
      </Panel>
      <Panel title="Score" state={state} minHeight={160}>
        {(s) => (
          <DataTable
            caption="Score breakdown by dimension"
            rows={s.score.breakdown}
            rowKey={(b) => b.dimension}
            initialSort={{ key: 'weight', direction: 'desc' }}
            columns={[
              { key: 'dimension', label: 'Dimension', sortValue: (b) => b.dimension },
              { key: 'weight', label: 'Weight', align: 'right', sortValue: (b) => b.weight, render: (b) => number(b.weight) },
              { key: 'badge', label: 'Badge', sortValue: (b) => b.badge, render: (b) => <TrustBadge badge={b.badge} /> },
              { key: 'contribution', label: 'Contribution', align: 'right', sortValue: (b) => b.contribution, render: (b) => number(b.contribution, 2) },
            ]}
          />
        )}
      </Panel>
    </>
  );
}
