import { DataTable, Time } from '../../../components';
import { FingerprintLink, ReplayLink } from './links';
import type { HoneypotEvent } from './types';
import { UaClassBadge } from './uaClasses';

/** Stored events, newest first: time, where, what the verdict was and who sent it. */
export function EventsTable({ events, empty, caption = 'Events' }: { events: readonly HoneypotEvent[]; empty?: string; caption?: string }) {
  return (
    <DataTable
      caption={caption}
      rows={events}
      rowKey={(e) => e.id}
      initialSort={{ key: 'ts', direction: 'desc' }}
      empty={empty}
      columns={[
        {
          key: 'ts',
          label: 'Time',
          sortValue: (e) => e.ts,
          render: (e) => (
            <span className="hp-nowrap">
              <Time at={e.ts} />
            </span>
          ),
        },
        { key: 'tenant', label: 'Tenant', sortValue: (e) => e.tenant },
        {
          key: 'path',
          label: 'Request',
          sortValue: (e) => e.path,
          render: (e) => (
            <code>
              {e.method} {e.path}
              {e.query ? `?${e.query}` : ''}
            </code>
          ),
        },
        { key: 'uaClass', label: 'Verdict', sortValue: (e) => e.uaClass, render: (e) => <UaClassBadge value={e.uaClass} /> },
        {
          key: 'vendor',
          label: 'Vendor and proof',
          sortValue: (e) => e.vendorId,
          render: (e) =>
            e.vendorId ? (
              <>
                {e.vendorId}
                {e.proof ? <div className="muted">{e.proof}</div> : null}
              </>
            ) : (
              <span className="muted">—</span>
            ),
        },
        { key: 'fingerprintId', label: 'Fingerprint', sortValue: (e) => e.fingerprintId, render: (e) => <FingerprintLink id={e.fingerprintId} tenant={e.tenant} /> },
        { key: 'country', label: 'Country', sortValue: (e) => e.country, render: (e) => e.country ?? '—' },
        { key: 'asn', label: 'AS', align: 'right', sortValue: (e) => e.asn, render: (e) => (e.asn === null ? '—' : `AS${e.asn}`) },
        {
          key: 'uaRaw',
          label: 'User agent',
          sortValue: (e) => e.uaRaw,
          render: (e) => (
            <code className="hp-ua" title={e.uaRaw}>
              {e.uaRaw || '(empty)'}
            </code>
          ),
        },
        { key: 'replay', label: 'Replay', render: (e) => <ReplayLink eventId={e.id} /> },
      ]}
    />
  );
}
