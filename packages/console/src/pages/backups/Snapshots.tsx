import { useState } from 'react';
import { LadderPanel } from './shared/LadderPanel';
import { SnapshotsPanel } from './shared/SnapshotsPanel';

/** Backup snapshots (take one, verify one by restoring it) and the restore verification ladder. */
export default function Snapshots() {
  const [verified, setVerified] = useState(0);
  return (
    <>
      <div className="page-head">
        <h1>Backups</h1>
      </div>
      <SnapshotsPanel onVerified={() => setVerified((n) => n + 1)} />
      <LadderPanel refreshKey={verified} />
    </>
  );
}
