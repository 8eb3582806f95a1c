import { Link } from 'react-router';
import { useQuery } from '../../../app/useQuery';
import { Time } from '../../../components';
import { loadFreeze } from './api';

/** The reason as a sentence: a full stop added unless it ends in one. */
const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

/**
 * While chaos is frozen, says so above the experiments and runs: no run starts (scheduled or
 * "run now") until someone thaws it. Says nothing otherwise, nor when the switch cannot be read.
 */
export function FreezeBanner({ changes = 0 }: { changes?: number }) {
  const state = useQuery(loadFreeze, [changes], { refreshMs: 60_000 });
  const freeze = state.data?.freeze;
  if (!freeze?.frozen) return null;
  return (
    <div className="error-note chaos-banner" role="status" data-testid="freeze-banner">
      <strong>Chaos is frozen</strong>
      {freeze.reason ? `: ${sentence(freeze.reason)}` : '.'} No run starts until it is thawed (since <Time at={freeze.updatedAt} />
      {freeze.updatedBy ? `, by ${freeze.updatedBy}` : ''}). <Link to="/chaos/freeze">The freeze switch</Link>
    </div>
  );
}
