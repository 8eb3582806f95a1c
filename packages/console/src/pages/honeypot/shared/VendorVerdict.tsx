import { Time } from '../../../components';
import { ReplayLink } from './links';
import type { Investigation } from './types';
import { UaClassBadge } from './uaClasses';

type Verdict = NonNullable<Investigation['verifiedVendorVerdict']>;

/** A stored proof (`ip-range:<cidr>`, `web-bot-auth:<keyid>`, `fcrdns:<name>`) in words, its value kept verbatim. */
export function describeProof(proof: string): { kind: string; value: string } {
  const colon = proof.indexOf(':');
  const kind = colon < 0 ? proof : proof.slice(0, colon);
  const value = colon < 0 ? '' : proof.slice(colon + 1);
  if (kind === 'ip-range') return { kind: 'Client IP inside the published range', value };
  if (kind === 'web-bot-auth') return { kind: 'Web Bot Auth signature verified with key', value };
  if (kind === 'fcrdns') return { kind: 'Reverse DNS name under the vendor\'s domain, resolving back to the client IP', value };
  return { kind, value };
}

/** The verified-vendor verdict of the fingerprint's newest event, with the proof that held or each one that failed. */
export function VendorVerdict({ verdict }: { verdict: Verdict | null }) {
  if (!verdict) return <p className="empty">No event to judge.</p>;
  const proof = verdict.proof ? describeProof(verdict.proof) : null;
  return (
    <div className="vendor-verdict">
      <p>
        {verdict.verified ? <span className="badge ok">verified</span> : <span className="badge bad">not verified</span>} <UaClassBadge value={verdict.uaClass} />
      </p>
      <p>{verdict.summary}.</p>
      <dl className="facts hp-facts">
        <dt>Claims</dt>
        <dd>{verdict.claimed.length > 0 ? verdict.claimed.join(', ') : 'no registry vendor'}</dd>
        <dt>Vendor</dt>
        <dd>{verdict.vendorId ? `${verdict.vendorName ?? verdict.vendorId} (${verdict.vendorId})` : '—'}</dd>
        {verdict.vendorId && (
          <>
            <dt>Publishes</dt>
            <dd>{verdict.proofSources.length > 0 ? verdict.proofSources.join(', ') : <span className="muted">none published: the claim can never be verified or refuted</span>}</dd>
          </>
        )}
        <dt>Proof</dt>
        <dd className="hp-proof">
          {proof ? (
            <>
              {proof.kind} <code>{proof.value}</code>
            </>
          ) : (
            <span className="muted">none held</span>
          )}
        </dd>
        {verdict.failed.length > 0 && (
          <>
            <dt>Failed</dt>
            <dd>
              <ul aria-label="Proofs that failed">
                {verdict.failed.map((f) => (
                  <li key={f}>{f}</li>
                ))}
              </ul>
            </dd>
          </>
        )}
        <dt>Judged event</dt>
        <dd>
          <Time at={verdict.ts} /> · <ReplayLink eventId={verdict.eventId}>replay it</ReplayLink>
        </dd>
      </dl>
    </div>
  );
}
