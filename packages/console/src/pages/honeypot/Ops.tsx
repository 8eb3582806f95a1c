import { useState } from 'react';
import { Link } from 'react-router';
import { Can } from '../../auth/session';
import { IngestSlo } from './shared/IngestSlo';
import { DbHealth, Heartbeat } from './shared/OpsHealth';
import { TestEvent } from './shared/TestEvent';
import './shared/honeypot.css';

/** The honeypot's running health: ingest SLO, silent tenants, the store; and a test event to check the path end to end. */
export default function Ops() {
  // A sent test event shows in the SLO at once instead of at its next refresh.
  const [sent, setSent] = useState(0);
  return (
    <>
      <div className="page-head">
        <h1>Honeypot ops</h1>
        <Link to="/honeypot/ops/replay">Replay an event</Link>
      </div>
      <IngestSlo refreshKey={sent} />
      <div className="grid">
        <Heartbeat />
        <DbHealth refreshKey={sent} />
      </div>
      <Can scope="write:test-event">
        <section className="panel">
          <h2>Send a test event</h2>
          <p className="muted">Signs one synthetic event with the tenant's current secret and sends it through ingest; it then shows in Recent events and in the SLO above.</p>
          <TestEvent onSent={() => setSent((n) => n + 1)} />
        </section>
      </Can>
    </>
  );
}
