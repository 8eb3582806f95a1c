import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Busy, ErrorNote } from '../../../components';
import { type ChainVerification, verifyChain } from './api';

/** Walks the whole chain on the server (POST {v1}/audit/chain/verify) and shows what it found. */
export function ChainVerify({ onDone }: { onDone: () => void }) {
  const action = useAction(verifyChain);
  const [result, setResult] = useState<ChainVerification | null>(null);
  const run = async () => {
    setResult(null);
    const answer = await action.execute();
    if (answer) {
      setResult(answer);
      onDone();
    }
  };
  return (
    <Can scope="write:alerts">
      <section className="panel">
        <header className="panel-head">
          <h2>Whole-chain check</h2>
          <button type="button" disabled={action.busy} onClick={() => void run()}>
            Verify the whole chain
          </button>
        </header>
        <p className="muted">
          The service re-hashes every fact from the first, checks each link and the stored Merkle nodes, and says what it found. A single fact&apos;s proof (open a fact) is checked in this
          browser instead.
        </p>
        {action.busy && <Busy label="Walking the chain: re-hashing every fact and its links…" />}
        {action.error && <ErrorNote error={action.error} />}
        {result && (
          <p role="status">
            {result.intact ? <span className="badge ok">Chain intact</span> : <span className="badge bad">Chain broken</span>} {result.walkedCount.toLocaleString()} facts walked in{' '}
            {result.durationMs} ms
            {result.divergence ? `; first divergence at fact ${result.divergence.seqNo} (${result.divergence.reason})` : ''}. Merkle nodes:{' '}
            {result.merkle.intact ? (
              <span className="badge ok">intact</span>
            ) : (
              <span className="badge bad">
                {result.merkle.divergence ? `${result.merkle.divergence.reason} at level ${result.merkle.divergence.level}, index ${result.merkle.divergence.index}` : 'broken'}
              </span>
            )}{' '}
            ({result.merkle.checkedLeaves.toLocaleString()} leaves).
          </p>
        )}
      </section>
    </Can>
  );
}
