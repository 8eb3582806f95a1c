import { ApiFailure } from '../../../api/client';
import { bulkAcceptRules, decide, type Destination, type Proposal } from './api';

/** What happened to one proposal of a decision on several. */
export interface Outcome {
  id: string;
  title: string;
  ok: boolean;
  human: string | null;
}

type Row = Pick<Proposal, 'id' | 'title' | 'kind'>;

const failure = (row: Row, cause: unknown): Outcome => ({ id: row.id, title: row.title, ok: false, human: cause instanceof ApiFailure ? cause.detail.human : String(cause) });

/**
 * Accepts or rejects proposals. The service decides one proposal a call (POST triage/decide),
 * except rule proposals, which it accepts in bulk with their destination (POST triage/rules/
 * bulk-accept, each id on its own); every proposal gets its own outcome, and one failing does not
 * stop the rest.
 */
export async function decideMany(rows: readonly Row[], accept: boolean, options: { destination: Destination | string; notes: string }): Promise<Outcome[]> {
  const notes = options.notes.trim() ? { notes: options.notes.trim() } : {};
  const outcomes: Outcome[] = [];
  const rules = accept ? rows.filter((r) => r.kind === 'alert-rule') : [];
  const singles = rows.filter((r) => !rules.includes(r));

  if (rules.length > 0) {
    const { destination } = options;
    if (typeof destination === 'string') {
      outcomes.push(...rules.map((r) => ({ id: r.id, title: r.title, ok: false, human: destination })));
    } else {
      try {
        const answer = await bulkAcceptRules({ ids: rules.map((r) => r.id), destinations: [destination], ...notes });
        for (const result of answer.results) {
          const row = rules.find((r) => r.id === result.id);
          outcomes.push({ id: result.id, title: row?.title ?? result.id, ok: result.ok, human: result.human });
        }
      } catch (cause) {
        outcomes.push(...rules.map((r) => failure(r, cause)));
      }
    }
  }
  for (const row of singles) {
    try {
      await decide({ id: row.id, accept, ...notes });
      outcomes.push({ id: row.id, title: row.title, ok: true, human: null });
    } catch (cause) {
      outcomes.push(failure(row, cause));
    }
  }
  return outcomes;
}
