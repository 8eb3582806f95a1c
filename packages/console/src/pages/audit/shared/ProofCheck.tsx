import { useEffect, useState } from 'react';
import { Busy, Field } from '../../../components';
import { type ProofVerdict, verifyInclusionProof } from '../verify';
import type { FactAnswer } from './api';
import './audit.css';

/**
 * The fact's inclusion proof, checked here with WebCrypto: the leaf recomputed from the fact's
 * fields, the siblings folded, the result compared with the published root. The service's own
 * word on validity is never asked for.
 */
export function ProofCheck({ answer }: { answer: FactAnswer }) {
  const [verdict, setVerdict] = useState<ProofVerdict | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [trusted, setTrusted] = useState('');

  useEffect(() => {
    let current = true;
    setVerdict(null);
    setFailure(null);
    verifyInclusionProof(answer)
      .then((v) => current && setVerdict(v))
      .catch((cause: unknown) => current && setFailure(`This browser could not run the check (${String(cause)}); WebCrypto needs a secure context (https or localhost).`));
    return () => {
      current = false;
    };
  }, [answer]);

  if (failure) return <p className="error-note" role="alert">{failure}</p>;
  if (!verdict) return <Busy label="Checking the proof in this browser…" />;
  const trustedRoot = trusted.trim().toLowerCase();
  return (
    <div className="proof-check">
      {verdict.ok ? (
        <p className="proof-verdict ok" role="status">
          <strong>Proof verified in this browser</strong> Fact {verdict.seqNo} is leaf {verdict.leafIndex} of the {verdict.leafCount}-fact tree: its fields hash to its entryHash, and the
          siblings fold to the published root.
        </p>
      ) : (
        <p className="proof-verdict bad" role="alert">
          <strong>Proof does NOT verify</strong> {verdict.reason}.
        </p>
      )}
      <dl className="facts">
        <dt>Entry hash recomputed here</dt>
        <dd>
          <code>{verdict.entryHash ?? '—'}</code>
        </dd>
        <dt>Root recomputed here</dt>
        <dd>
          <code data-testid="recomputed-root">{verdict.recomputedRoot ?? '— (not reached)'}</code>
        </dd>
        <dt>Published root</dt>
        <dd>
          <code data-testid="published-root">{verdict.publishedRoot ?? '—'}</code>
        </dd>
      </dl>
      <Field label="A root you trust for this tree size (optional)" hint="From an earlier answer, another instance or a published value: the proof shows the fact is in that tree only if they are equal.">
        <input value={trusted} onChange={(e) => setTrusted(e.target.value)} spellCheck={false} placeholder="64 hex digits" />
      </Field>
      {trustedRoot !== '' &&
        (verdict.recomputedRoot !== null && trustedRoot === verdict.recomputedRoot ? (
          <p className="badge ok" role="status">
            The recomputed root equals the root you trust.
          </p>
        ) : (
          <p className="badge bad" role="status">
            The recomputed root differs from the root you trust.
          </p>
        ))}
    </div>
  );
}
