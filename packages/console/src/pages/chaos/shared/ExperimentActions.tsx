import { Can } from '../../../auth/session';
import { Busy } from '../../../components';
import { ConfirmButton } from '../../honeypot/shared/ConfirmButton';
import type { Experiment, Move } from './api';

/**
 * One experiment's buttons: pause or resume, retire (asked twice: it cannot be undone), and run
 * now. Only what its status allows is offered; the service still decides (a run is refused while
 * frozen, with chaos off, or while another run is open) and its refusal is shown above the table.
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
        <ConfirmButton label={`Retire ${e.slug}`} question={`Retire ${e.slug}? It never runs again.`} confirmLabel="Retire" danger onConfirm={() => onMove(e, 'retire')} />
      </span>
    </Can>
  );
}
