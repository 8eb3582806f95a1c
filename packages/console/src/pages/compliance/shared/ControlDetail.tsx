import { useState } from 'react';
import { Link } from 'react-router';
import { Can } from '../../../auth/session';
import { Time } from '../../../components';
import { Severity } from '../../empire/shared/badges';
import type { Control } from './api';
import { OutcomeBadge } from './badges';
import { EvidenceLink } from './EvidenceLink';
import type { RoutedEndpoint } from './evidence';
import { OverrideForm } from './OverrideForm';
import { ReplayPanel } from './ReplayPanel';

/** One control: what it checks, the outcome in force and its evidence, its replay, and the override form. */
export function ControlDetail({
  control,
  framework,
  endpoints,
  closeTo,
  onOverridden,
}: {
  control: Control;
  framework: string;
  endpoints: readonly RoutedEndpoint[] | null;
  /** The address without the control opened. */
  closeTo: string;
  onOverridden: () => void;
}) {
  const [saved, setSaved] = useState<string | null>(null);
  const overridden = control.latestEvaluatedBy?.startsWith('operator:') ?? false;
  return (
    <>
      <section className="panel" aria-label={`Control ${control.controlId}`}>
        <header className="panel-head">
          <h2>
            {control.controlId} · {control.title}
          </h2>
          <Link to={closeTo}>Close</Link>
        </header>
        <dl className="facts">
          <dt>Category</dt>
          <dd>{control.category}</dd>
          <dt>Severity</dt>
          <dd>
            <Severity severity={control.severity} />
          </dd>
          <dt>Criterion</dt>
          <dd>{control.description}</dd>
          <dt>Decided by</dt>
          <dd>
            <code>{control.predicateKey}</code>
          </dd>
          <dt>Outcome in force</dt>
          <dd data-testid="outcome-in-force">
            <OutcomeBadge outcome={control.latestOutcome} /> {overridden ? `override by ${control.latestEvaluatedBy}` : control.latestEvaluatedBy ?? ''}
          </dd>
          <dt>Summary</dt>
          <dd>{control.latestSummary ?? <span className="muted">Not evaluated yet.</span>}</dd>
          <dt>Run at</dt>
          <dd>
            <Time at={control.latestRunAt} />
          </dd>
          <dt>Evidence</dt>
          <dd>
            <EvidenceLink control={control} framework={framework} endpoints={endpoints} />
          </dd>
        </dl>
        {saved && (
          <p className="badge ok" role="status">
            {saved}
          </p>
        )}
      </section>
      {control.latestEvaluationId ? (
        <ReplayPanel evaluationId={control.latestEvaluationId} />
      ) : (
        <section className="panel">
          <h2>Replay</h2>
          <p className="empty">Not evaluated yet: there is no stored evaluation to replay. Run the evaluation from the posture page.</p>
        </section>
      )}
      <Can scope="write:alerts">
        <OverrideForm
          key={control.id}
          control={control}
          framework={framework}
          onSaved={(evaluationId) => {
            setSaved(`Override stored as evaluation ${evaluationId}.`);
            onOverridden();
          }}
        />
      </Can>
    </>
  );
}
