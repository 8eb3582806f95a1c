import { DataTable } from '../../../components';
import { FingerprintLink } from './links';
import type { Investigation } from './types';

type Drift = NonNullable<Investigation['ja4Drift']>;

/** The other TLS fingerprints (JA4) the same normalised user agent presents: one UA, many clients. */
export function Ja4Drift({ drift, ownJa4, fingerprintId }: { drift: Drift | null; ownJa4: string | null; fingerprintId: string }) {
  if (!drift) return <p className="empty">No JA4 was sent with this fingerprint's events, so drift cannot be judged.</p>;
  return (
    <div>
      <p>
        {drift.drifting ? <span className="badge warn">drifting</span> : <span className="badge ok">stable</span>}{' '}
        {drift.drifting
          ? `This user agent presents ${drift.ja4s.length} JA4s over ${drift.eventsWithJa4.toLocaleString()} events: more than one client sends it.`
          : `One JA4 over ${drift.eventsWithJa4.toLocaleString()} events.`}
      </p>
      <p className="muted">
        Normalised UA: <code>{drift.uaNormalized}</code>
      </p>
      <ul className="hp-chips" aria-label="JA4s of this user agent">
        {drift.ja4s.map((j) => (
          <li key={j} className={j === ownJa4 ? 'hp-own' : undefined} title={j === ownJa4 ? "This fingerprint's own JA4" : 'Another JA4 of the same UA'}>
            <code>{j}</code>
          </li>
        ))}
      </ul>
      <DataTable
        caption="Fingerprints with this user agent"
        rows={drift.fingerprints}
        rowKey={(f) => f.fingerprintId}
        initialSort={{ key: 'eventCount', direction: 'desc' }}
        columns={[
          {
            key: 'fingerprintId',
            label: 'Fingerprint',
            sortValue: (f) => f.fingerprintId,
            render: (f) => (f.fingerprintId === fingerprintId ? <><code>{f.fingerprintId}</code> <span className="muted">(this one)</span></> : <FingerprintLink id={f.fingerprintId} />),
          },
          { key: 'ja4', label: 'JA4', sortValue: (f) => f.ja4, render: (f) => (f.ja4 ? <code>{f.ja4}</code> : '—') },
          { key: 'eventCount', label: 'Events', align: 'right', sortValue: (f) => f.eventCount },
        ]}
      />
    </div>
  );
}
