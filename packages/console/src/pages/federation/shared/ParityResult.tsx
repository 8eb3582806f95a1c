import { DataTable, Time } from '../../../components';
import type { Parity } from './api';
import { FailedRegions, ParityBadge, RegionKeys } from './badges';
import { TupleTable } from './TupleTable';

/** A parity check's answer: who took part, who failed and why, the federation digest, migration parity and its drift. */
export function ParityResult({ parity, at, current, onPin, onDismiss }: { parity: Parity; at: string; current: string; onPin: () => void; onDismiss: () => void }) {
  return (
    <section className="panel" role="region" aria-label="Parity check">
      <header className="panel-head">
        <h2>
          Parity check: <ParityBadge parity={parity.migrationParity} />
        </h2>
        <div className="panel-actions">
          <button type="button" onClick={onPin}>
            Pin this digest for a replay
          </button>
          <button type="button" onClick={onDismiss}>
            Close
          </button>
        </div>
      </header>
      <dl className="facts">
        <dt>Checked</dt>
        <dd>
          <Time at={at} />
        </dd>
        <dt>Federation digest</dt>
        <dd>
          <code className="hash" data-testid="federation-digest">
            {parity.federationDigest}
          </code>
        </dd>
        <dt>Migration parity</dt>
        <dd data-testid="migration-parity">{parity.migrationParity}</dd>
        <dt>Participating</dt>
        <dd data-testid="participating">
          <RegionKeys keys={parity.participating} label="Participating regions" />
        </dd>
        <dt>Failed</dt>
        <dd data-testid="failed">
          <FailedRegions failed={parity.failed} label="Failed regions" />
        </dd>
      </dl>
      {parity.migrationDriftDetails.length > 0 && (
        <>
          <h3>Migration drift</h3>
          <DataTable
            caption="Regions whose migrations differ from this deployment's"
            rows={parity.migrationDriftDetails}
            rowKey={(d) => d.regionKey}
            columns={[
              { key: 'regionKey', label: 'Region', sortValue: (d) => d.regionKey },
              { key: 'migrationDigest', label: 'Its migration digest', render: (d) => <code className="hash">{d.migrationDigest}</code> },
            ]}
          />
        </>
      )}
      <h3>Tuples</h3>
      <TupleTable tuples={parity.tuples} caption="Digest tuples of the participating regions" current={current} />
    </section>
  );
}
