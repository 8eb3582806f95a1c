import { useState } from 'react';
import { Can } from '../../../auth/session';
import { Busy } from '../../../components';
import type { Experiment, Move } from './api';

/** Retire cannot be undone: the first press asks, in the page, and only the second retires. */
function RetireButton({ slug, busy, onRetire }: { slug: string; busy: boolean; onRetire: () => void }) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="danger" disabled={busy} aria-label={`Retire ${slug}`} onClick={() => setAsking(true)}>
        Retire
      </button>
    );
  const question = `Retire ${slug}? It never runs again.`;
  return (
    <span className="chaos-confirm" role="group" aria-label={question}>
      <span>{question}</span>
      <button
        type="button"
        className="danger"
        autoFocus
        disabled={busy}
        onClick={() => {
          setAsking(false);
          onRetire();
        }}
      >
        Retire
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/**
 * One experiment's buttons: run now, pause or resume, retire. Only what its status allows is
 * offered; the service still decides (a run is refused while frozen, with chaos off for its blast
 * radius, or while another run is open) and its refusal is shown above the table.
 */
export function ExperimentActions({
  experiment: e,
  busy,
  working,
  onMove,
  onRun,
}: {
  experiment: Experiment;
  /** Some experiment's action is running: every button waits. */
  busy: boolean;
  /** This experiment's action is running. */
  working: boolean;
  onMove: (experiment: Experiment, move: Move) => void;
  onRun: (experiment: Experiment) => void;
}) {
  if (e.status === 'retired') return <span className="muted">retired</span>;
  if (working) return <Busy label={`Working on ${e.slug}…`} />;
  return (
    <Can scope="write:alerts">
      <span className="chaos-actions">
        {e.status === 'active' && (
          <button type="button" className="primary" disabled={busy} aria-label={`Run ${e.slug} now`} onClick={() => onRun(e)}>
            Run now
          </button>
        )}
        {e.status === 'active' ? (
          <button type="button" disabled={busy} aria-label={`Pause ${e.slug}`} onClick={() => onMove(e, 'pause')}>
            Pause
          </button>
        ) : (
          <button type="button" disabled={busy} aria-label={`Resume ${e.slug}`} onClick={() => onMove(e, 'resume')}>
            Resume
          </button>
        )}
        <RetireButton slug={e.slug} busy={busy} onRetire={() => onMove(e, 'retire')} />
      </span>
    </Can>
  );
}
