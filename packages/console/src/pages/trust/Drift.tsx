import { useState } from 'react';
import { useUrlState } from '../../app/urlState';
import { useAction, useQuery } from '../../app/useQuery';
import { Can } from '../../auth/session';
import { DataTable, ErrorNote, FilterSelect, Panel, Time } from '../../components';
import { Severity } from '../empire/shared/badges';
import { DRIFT_KINDS, type DriftEvent, type DriftKind, LIST_STATUSES, type ListStatus, loadDrift, type Scan, scanDrift } from './shared/api';
import { DriftStatus } from './shared/badges';
import { DriftDetail } from './shared/DriftDetail';
import '../empire/shared/empire.css';
import './shared/trust.css';

const SINCE = ['24', '168', '720'] as const;
const oneOf = <T extends string>(values: readonly T[], value: string): T | null => ((values as readonly string[]).includes(value) ? (value as T) : null);

function ScanResult({ scan, onDismiss }: { scan: Scan; onDismiss: () => void }) {
  return (
    <section className="panel" role="region" aria-label="Scan result">
      <header className="panel-head">
        <h2>
          Scan of <Time at={scan.scannedAt} />
        </h2>
        <button type="button" onClick={onDismiss}>
          Close
        </button>
      </header>
      <dl className="facts">
        <dt>Opened now</dt>
        <dd data-testid="opened-now">{scan.openedNow.length}</dd>
        <dt>Already open</dt>
        <dd data-testid="already-open">{scan.alreadyOpen}</dd>
        <dt>Accepted as wont-fix</dt>
        <dd data-testid="accepted-wont-fix">{scan.acceptedWontFix}</dd>
        <dt>Detector errors</dt>
        <dd data-testid="detector-errors">
          {scan.detectorErrors.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <ul>
              {scan.detectorErrors.map((e) => (
                <li key={e.detector}>
                  <code>{e.detector}</code>: {e.error}
                </li>
              ))}
            </ul>
          )}
        </dd>
      </dl>
      {scan.openedNow.length > 0 && (
        <ul aria-label="Events opened by the scan">
          {scan.openedNow.map((e) => (
            <li key={e.id}>
              <code>{e.kind}</code> <Severity severity={e.severity} /> {e.description}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The drift inbox: events by status and kind, a scan now, and per event acknowledge and resolve. */
export default function Drift() {
  const { get, set } = useUrlState();
  const status = oneOf<ListStatus>(LIST_STATUSES, get('status')) ?? 'open';
  const kind = oneOf<DriftKind>(DRIFT_KINDS, get('kind'));
  const sinceHours = oneOf(SINCE, get('since'));
  const selected = get('event');
  const [changes, setChanges] = useState(0);
  const state = useQuery(() => loadDrift({ status, kind, sinceHours }), [status, kind, sinceHours, changes], { refreshMs: 60_000 });
  const scan = useAction(scanDrift);
  const [scanned, setScanned] = useState<Scan | null>(null);
  // The answer of the latest move: the event as it is now, even once it has left the filtered list.
  const [moved, setMoved] = useState<{ event: DriftEvent; message: string } | null>(null);

  const onScan = async () => {
    setScanned(null);
    const answer = await scan.execute();
    if (answer) {
      setScanned(answer);
      setChanges((n) => n + 1);
    }
  };

  const listed = state.data?.events.find((e) => e.id === selected) ?? null;
  const shown = moved?.event.id === selected ? moved.event : listed;

  return (
    <>
      <div className="page-head">
        <h1>Drift inbox</h1>
        <div className="toolbar">
          <FilterSelect label="Status" value={status === 'open' ? '' : status} options={LIST_STATUSES.filter((s) => s !== 'open')} anyLabel="open" onChange={(v) => set({ status: v || null })} />
          <FilterSelect label="Kind" value={kind ?? ''} options={DRIFT_KINDS} anyLabel="Every kind" onChange={(v) => set({ kind: v || null })} />
          <FilterSelect label="Opened within (hours)" value={sinceHours ?? ''} options={SINCE} anyLabel="Any time" onChange={(v) => set({ since: v || null })} />
          <Can scope="write:alerts">
            <button type="button" className="primary" disabled={scan.busy} onClick={() => void onScan()}>
              Scan now
            </button>
          </Can>
        </div>
      </div>
      {scan.busy && <p className="muted" role="status">Running the five detectors…</p>}
      {scan.error && <ErrorNote error={scan.error} />}
      {scanned && <ScanResult scan={scanned} onDismiss={() => setScanned(null)} />}
      {moved && (
        <p className="badge ok" role="status">
          {moved.message}
        </p>
      )}
      {selected && shown && (
        <DriftDetail
          key={shown.id}
          event={shown}
          onMoved={(event, message) => {
            setMoved({ event, message });
            setChanges((n) => n + 1);
          }}
          onClose={() => set({ event: null })}
        />
      )}
      {selected && !shown && state.data && (
        <p className="empty">
          Event <code>{selected}</code> is not in this list: widen the filters (status all) to find it.
        </p>
      )}
      <Panel
        title={`Drift events: ${status}${kind ? `, ${kind}` : ''}`}
        state={state}
        minHeight={200}
        isEmpty={(d) => d.events.length === 0}
        empty={
          status === 'open'
            ? 'No open drift. The detectors scan every 5 minutes (drift-auto-open); Scan now runs them at once.'
            : 'No drift event matches these filters.'
        }
      >
        {(d) => (
          <DataTable
            caption="Drift events, newest first"
            rows={d.events}
            rowKey={(e) => e.id}
            pageSize={50}
            columns={[
              {
                key: 'kind',
                label: 'Kind',
                sortValue: (e) => e.kind,
                render: (e) => (
                  <button type="button" className="link" aria-pressed={e.id === selected} aria-label={`Open ${e.kind} ${e.sourceId}`} onClick={() => set({ event: e.id })}>
                    {e.kind}
                  </button>
                ),
              },
              { key: 'severity', label: 'Severity', sortValue: (e) => e.severity, render: (e) => <Severity severity={e.severity} /> },
              { key: 'status', label: 'Status', sortValue: (e) => e.status, render: (e) => <DriftStatus status={e.status} /> },
              { key: 'subject', label: 'Subject', sortValue: (e) => `${e.source} ${e.sourceId}`, render: (e) => <code className="summary">{`${e.source} ${e.sourceId}`}</code> },
              { key: 'description', label: 'Description', render: (e) => <span className="summary">{e.description}</span> },
              { key: 'openedAt', label: 'Opened', sortValue: (e) => e.openedAt, render: (e) => <Time at={e.openedAt} /> },
              { key: 'resolvedAt', label: 'Resolved', sortValue: (e) => e.resolvedAt, render: (e) => (e.resolvedAt ? <Time at={e.resolvedAt} /> : <span className="muted">—</span>) },
            ]}
          />
        )}
      </Panel>
    </>
  );
}
