import { useState } from 'react';
import { Busy, Field } from '../../../components';
import type { Proposal } from './api';
import { decideMany, type Outcome } from './decisions';
import { DestinationFields, EMPTY_DESTINATION, toDestination } from './DestinationFields';

type Row = Pick<Proposal, 'id' | 'title' | 'kind'>;

/**
 * Accept or reject a set of proposals (the inbox's selected rows, or one proposal), with notes and,
 * when rule proposals are among them, the destination their alert rules will send to.
 */
export function DecisionBar({
  rows,
  onDecided,
  label,
  bulk = false,
}: {
  rows: readonly Row[];
  /** Called with the outcomes once the decisions are made; the page shows them (the bar may be gone by then). */
  onDecided: (outcomes: Outcome[], verb: 'accepted' | 'rejected') => void;
  label: string;
  bulk?: boolean;
}) {
  const [notes, setNotes] = useState('');
  const [destination, setDestination] = useState(EMPTY_DESTINATION);
  const [busy, setBusy] = useState<string | null>(null);
  const rules = rows.filter((r) => r.kind === 'alert-rule').length;
  const n = rows.length;

  const run = async (accept: boolean) => {
    setBusy(`${accept ? 'Accepting' : 'Rejecting'} ${n} proposal${n === 1 ? '' : 's'}…`);
    try {
      const outcomes = await decideMany(rows, accept, { destination: toDestination(destination), notes });
      onDecided(outcomes, accept ? 'accepted' : 'rejected');
    } finally {
      setBusy(null);
    }
  };

  return (
    <div className="decision-bar" role="group" aria-label={label}>
      <Field label="Decision notes" hint="Optional; kept with each decision and in the audit log.">
        <input value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={2000} />
      </Field>
      {rules > 0 && (
        <DestinationFields
          value={destination}
          onChange={setDestination}
          legend={`Where the alert rule${rules === 1 ? '' : 's'} of the ${rules} rule proposal${rules === 1 ? '' : 's'} will send`}
        />
      )}
      <div className="form-actions">
        <button type="button" className="primary" disabled={n === 0 || busy !== null} onClick={() => void run(true)}>
          {bulk ? `Accept selected (${n})` : 'Accept'}
        </button>
        <button type="button" className="danger" disabled={n === 0 || busy !== null} onClick={() => void run(false)}>
          {bulk ? `Reject selected (${n})` : 'Reject'}
        </button>
        {busy && <Busy label={busy} />}
      </div>
    </div>
  );
}
