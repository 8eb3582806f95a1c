import { Link } from 'react-router';
import { Badge } from '../../empire/shared/badges';
import type { Narration as NarrationAnswer } from './api';

function Names({ names, none }: { names: readonly string[]; none: string }) {
  if (names.length === 0) return <span className="muted">{none}</span>;
  return (
    <span className="chips">
      {names.map((n) => (
        <code key={n}>{n}</code>
      ))}
    </span>
  );
}

/** A narrator's paragraph with what its scrub kept and removed, who wrote it, and its run's replay. */
export function Narration({ narration, label }: { narration: NarrationAnswer; label: string }) {
  return (
    <section aria-label={label}>
      <p className="narration" data-testid="paragraph">
        {narration.text || <span className="muted">Every sentence was removed by the scrub.</span>}
      </p>
      <dl className="facts">
        <dt>Written by</dt>
        <dd>
          <Badge tone={narration.modelOrStub === 'live' ? 'ok' : 'neutral'} title={narration.modelOrStub === 'live' ? 'the configured model' : 'the built-in template'}>
            {narration.modelOrStub}
          </Badge>{' '}
          {narration.modelOrStub === 'live' ? 'the configured model' : 'the built-in template'}
        </dd>
        <dt>Frameworks cited</dt>
        <dd data-testid="cited-frameworks">
          <Names names={narration.citedFrameworks} none="none" />
        </dd>
        <dt>Control ids cited</dt>
        <dd data-testid="cited-controls">
          <Names names={narration.citedControlIds} none="none" />
        </dd>
        <dt>Frameworks stripped</dt>
        <dd data-testid="stripped-frameworks">
          <Names names={narration.strippedFrameworks} none="none" />
        </dd>
        <dt>Control ids stripped</dt>
        <dd data-testid="stripped-controls">
          <Names names={narration.strippedControlIds} none="none" />
        </dd>
        <dt>Sentences scrubbed</dt>
        <dd data-testid="scrubbed">{narration.scrubbedText ? <span className="scrubbed">{narration.scrubbedText}</span> : <span className="muted">none</span>}</dd>
        <dt>Input digest</dt>
        <dd>
          <code className="hash">{narration.inputDigest}</code>
        </dd>
        <dt>Run</dt>
        <dd>
          {narration.replayUrl ? (
            <Link to={`/empire/triage/runs?run=${encodeURIComponent(narration.runId)}`} title={narration.replayUrl}>
              Replay of run {narration.runId}
            </Link>
          ) : (
            <span className="muted">none recorded (the built-in template records no run)</span>
          )}
        </dd>
      </dl>
    </section>
  );
}
