import { useQuery } from '../../../app/useQuery';
import { Panel, Time } from '../../../components';
import { loadReplay } from './api';
import { CheckBadge, OutcomeBadge } from './badges';

/** An evaluation recomputed from its stored input: stored against replayed, and whether the input still hashes as stored. */
export function ReplayPanel({ evaluationId }: { evaluationId: string }) {
  const state = useQuery(() => loadReplay(evaluationId), [evaluationId]);
  return (
    <Panel title="Replay of the evaluation in force" state={state} minHeight={160}>
      {(r) => (
        <section aria-label={`Replay of evaluation ${r.evaluationId}`}>
          <p>
            <CheckBadge ok={r.matches} yes="replay matches" no="replay differs" />{' '}
            <CheckBadge ok={r.digestMatches} yes="digest matches" no="digest differs: the stored input was changed" />
          </p>
          {r.evaluatedBy.startsWith('operator:') && (
            <p className="muted">
              This is an override: its input is the evidence the operator gave, which no predicate decides, so its replay answers manual-review. The digest
              still shows whether that evidence is as stored.
            </p>
          )}
          <dl className="facts">
            <dt>Evaluation</dt>
            <dd>
              <code>{r.evaluationId}</code> by {r.evaluatedBy}, <Time at={r.runAt} />
            </dd>
            <dt>Predicate</dt>
            <dd>
              <code>{r.predicateKey}</code>
            </dd>
            <dt>Stored outcome</dt>
            <dd data-testid="stored-outcome">
              <OutcomeBadge outcome={r.storedOutcome} /> {r.storedSummary}
            </dd>
            <dt>Replayed outcome</dt>
            <dd data-testid="replayed-outcome">
              <OutcomeBadge outcome={r.replayedOutcome} /> {r.replayedSummary}
            </dd>
            <dt>Observed SHA-256</dt>
            <dd>
              <code className="hash">{r.observedSha256}</code>
            </dd>
          </dl>
          <details>
            <summary>Observed input (JSON)</summary>
            <pre data-testid="observed">{JSON.stringify(r.observed, null, 2)}</pre>
          </details>
        </section>
      )}
    </Panel>
  );
}
