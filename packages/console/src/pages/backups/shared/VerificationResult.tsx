import { Time } from '../../../components';
import { OutcomeBadge, short, type Verification } from './api';

/** What one restore verification found. */
export function VerificationResult({ v }: { v: Verification }) {
  return (
    <section className="panel" role="status" aria-label="Verification result">
      <p>
        Verification of the snapshot taken <Time at={v.takenAt} />: <OutcomeBadge outcome={v.outcome} /> in {(v.durationMs / 1000).toLocaleString(undefined, { maximumFractionDigits: 1 })} s
        {v.outcome === 'ok' ? ' — it restores, and every table recounts and re-hashes as recorded.' : '.'}
      </p>
      {v.errorText && <p className="error-note">{v.errorText}</p>}
      <dl className="facts">
        {v.driftTables.length > 0 && (
          <>
            <dt>Tables that differ</dt>
            <dd>{v.driftTables.join(', ')}</dd>
          </>
        )}
        <dt>File SHA-256 as read</dt>
        <dd>
          <code title={v.fileSha256 ?? ''}>{short(v.fileSha256)}</code>
        </dd>
        <dt>Determinism digest</dt>
        <dd>
          <code title={v.determinismDigest}>{short(v.determinismDigest)}</code>
        </dd>
      </dl>
    </section>
  );
}
