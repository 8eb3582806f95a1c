import { useState } from 'react';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Busy, DataTable, ErrorNote, Panel, Time } from '../../../components';
import { bytes, loadSnapshots, short, type Snapshot, takeSnapshot, type Verification, verifySnapshot } from './api';
import { VerificationResult } from './VerificationResult';

/** Snapshots newest first; take one now, or verify one by restoring it. */
export function SnapshotsPanel({ onVerified }: { onVerified: () => void }) {
  const [changes, setChanges] = useState(0);
  const state = useQuery(loadSnapshots, [changes]);
  const take = useAction(takeSnapshot);
  const verify = useAction(verifySnapshot);
  const [verifying, setVerifying] = useState<Snapshot | null>(null);
  const [taken, setTaken] = useState<Snapshot | null>(null);
  const [result, setResult] = useState<Verification | null>(null);
  const busy = take.busy || verify.busy;

  const onTake = async () => {
    setTaken(null);
    const answer = await take.execute();
    if (answer) {
      setTaken(answer.snapshot);
      setChanges((n) => n + 1);
    }
  };
  const onVerify = async (snapshot: Snapshot) => {
    setVerifying(snapshot);
    setResult(null);
    const answer = await verify.execute(snapshot.id);
    if (answer) {
      setResult(answer.verification);
      onVerified();
    }
  };

  return (
    <>
      <div className="progress-area" aria-live="polite">
        {take.busy && <Busy label="Taking a snapshot: dumping the database, counting and hashing every table…" />}
        {take.error && <ErrorNote error={take.error} />}
        {taken && (
          <p className="badge ok" role="status">
            Snapshot taken: {bytes(taken.sizeBytes)}, {Object.keys(taken.byTable).length} tables.
          </p>
        )}
        {verify.busy && verifying && (
          <Busy label={`Verifying the snapshot of ${new Date(verifying.takenAt).toLocaleString()}: restoring it into a scratch database and re-hashing every table…`} />
        )}
        {verify.error && <ErrorNote error={verify.error} />}
        {result && <VerificationResult v={result} />}
      </div>
      <Panel
        title="Snapshots"
        state={state}
        minHeight={220}
        isEmpty={(d) => d.snapshots.length === 0}
        empty="No snapshots yet. Take one now, or let the backup-snapshot job take them on its schedule."
        actions={
          <Can scope="write:alerts">
            <button type="button" className="primary" disabled={busy} onClick={() => void onTake()}>
              Take a snapshot now
            </button>
          </Can>
        }
      >
        {(d) => (
          <>
            <DataTable
              caption="Backup snapshots, newest first"
              rows={d.snapshots}
              rowKey={(s) => s.id}
              initialSort={{ key: 'takenAt', direction: 'desc' }}
              columns={[
                { key: 'takenAt', label: 'Taken', sortValue: (s) => s.takenAt, render: (s) => <Time at={s.takenAt} /> },
                { key: 'database', label: 'Database', sortValue: (s) => s.database },
                { key: 'source', label: 'Source', sortValue: (s) => s.source },
                { key: 'format', label: 'Format', render: (s) => `${s.format} (${s.storage})` },
                { key: 'sizeBytes', label: 'Size', align: 'right', sortValue: (s) => s.sizeBytes, render: (s) => bytes(s.sizeBytes) },
                { key: 'rows', label: 'Rows', align: 'right', sortValue: (s) => rowsOf(s), render: (s) => `${rowsOf(s).toLocaleString()} in ${Object.keys(s.byTable).length} tables` },
                { key: 'fileSha256', label: 'File SHA-256', render: (s) => <code title={s.fileSha256}>{short(s.fileSha256)}</code> },
                { key: 'retentionUntil', label: 'Kept until', sortValue: (s) => s.retentionUntil, render: (s) => <Time at={s.retentionUntil} /> },
                {
                  key: 'verify',
                  label: 'Verify',
                  render: (s) => (
                    <Can scope="write:alerts">
                      <button type="button" disabled={busy} onClick={() => void onVerify(s)} aria-label={`Verify the snapshot taken ${new Date(s.takenAt).toISOString()}`}>
                        Verify
                      </button>
                    </Can>
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

const rowsOf = (s: Snapshot) => Object.values(s.byTable).reduce((a, b) => a + b, 0);
