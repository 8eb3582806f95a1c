import { Link } from 'react-router';

/** Where investigate shows a fingerprint (optionally within one tenant). */
export function investigateHref(fingerprintId: string, tenant?: string | null): string {
  const q = new URLSearchParams({ fingerprintId });
  if (tenant) q.set('tenant', tenant);
  return `/honeypot/investigate?${q.toString()}`;
}

/** A fingerprint id that opens investigate. */
export function FingerprintLink({ id, tenant }: { id: string; tenant?: string | null }) {
  return (
    <Link to={investigateHref(id, tenant)} title={`Investigate fingerprint ${id}`}>
      <code>{id}</code>
    </Link>
  );
}

/** An event id that opens replay. */
export function ReplayLink({ eventId, children }: { eventId: string; children?: string }) {
  return (
    <Link to={`/honeypot/ops/replay?eventId=${encodeURIComponent(eventId)}`} title={`Replay event ${eventId}`}>
      {children ?? <code>{eventId.slice(0, 8)}…</code>}
    </Link>
  );
}
