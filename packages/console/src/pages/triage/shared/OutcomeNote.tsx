import type { Outcome } from './decisions';

/** The result of a decision on one or more proposals: how many went through, and why any did not. */
export function OutcomeNote({ outcomes, verb }: { outcomes: readonly Outcome[]; verb: 'accepted' | 'rejected' }) {
  const failed = outcomes.filter((o) => !o.ok);
  const done = outcomes.length - failed.length;
  return (
    <div role="status" className={failed.length > 0 ? 'error-note' : 'ok-box'}>
      <strong>
        {done} {verb}
        {failed.length > 0 ? `, ${failed.length} not` : ''}.
      </strong>
      {failed.length > 0 && (
        <ul>
          {failed.map((o) => (
            <li key={o.id}>
              {o.title}: {o.human ?? 'refused'}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
