import { useState } from 'react';
import { Link } from 'react-router';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { runClassifier, runInvestigations, runRules } from './api';

interface RunAnswer {
  runId: string;
  proposalCount: number;
  autoRejected: number;
}

const STUB_RUN_ID = '00000000-0000-4000-8000-000000000000';

function RunResult({ answer, onReplay }: { answer: RunAnswer; onReplay: (runId: string) => void }) {
  return (
    <div role="status" className="ok-box">
      <strong>
        {answer.proposalCount} proposal{answer.proposalCount === 1 ? '' : 's'} stored pending, {answer.autoRejected} rejected automatically.
      </strong>{' '}
      {answer.runId !== STUB_RUN_ID && (
        <>
          Run <code>{answer.runId.slice(0, 8)}</code>:{' '}
          <button type="button" onClick={() => onReplay(answer.runId)}>
            Replay it
          </button>{' '}
        </>
      )}
      {answer.proposalCount > 0 && <Link to="/empire/triage">See them in the inbox</Link>}
    </div>
  );
}

const int = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** Starts the three agents on demand, each with a progress indicator while it runs. */
export function RunForms({ onRan, onReplay }: { onRan: () => void; onReplay: (runId: string) => void }) {
  const [windowMinutes, setWindowMinutes] = useState('15');
  const [invWindow, setInvWindow] = useState('15');
  const [focal, setFocal] = useState('');
  const [lookback, setLookback] = useState('30');
  const classifier = useAction(runClassifier);
  const investigations = useAction(runInvestigations);
  const rules = useAction(runRules);
  const [answers, setAnswers] = useState<Record<string, RunAnswer>>({});
  const keep = (name: string) => (answer: RunAnswer | null) => {
    if (!answer) return;
    setAnswers((prev) => ({ ...prev, [name]: answer }));
    onRan();
  };

  return (
    <div className="run-forms">
      <section className="panel">
        <h2>Incident classifier</h2>
        <p className="muted">Rate spikes against the forecast, silent toolsets, liar floods and tarpits, cross-toolset tenants. The budget never defers it.</p>
        <Form
          label="Run the incident classifier"
          busy={classifier.busy}
          error={classifier.error}
          submitLabel="Run the classifier"
          busyLabel={`Classifying the last ${windowMinutes || 15} minutes…`}
          onSubmit={() => {
            const minutes = int(windowMinutes);
            void classifier.execute(minutes === undefined ? {} : { windowMinutes: minutes }).then(keep('classifier'));
          }}
        >
          <Field label="Window (minutes)" hint="1 to 1440; default 15.">
            <input type="number" min={1} max={1440} value={windowMinutes} onChange={(e) => setWindowMinutes(e.target.value)} />
          </Field>
        </Form>
        {answers.classifier && <RunResult answer={answers.classifier} onReplay={onReplay} />}
      </section>
      <section className="panel">
        <h2>Investigation proposer</h2>
        <p className="muted">Up to three cluster-level investigations of the window, or one around a focal event and its lineage.</p>
        <Form
          label="Run the investigation proposer"
          busy={investigations.busy}
          error={investigations.error}
          submitLabel="Propose investigations"
          busyLabel="Proposing investigations…"
          onSubmit={() => {
            const minutes = int(invWindow);
            void investigations
              .execute({ ...(minutes === undefined ? {} : { windowMinutes: minutes }), ...(focal.trim() ? { focalEventId: focal.trim() } : {}) })
              .then(keep('investigations'));
          }}
        >
          <Field label="Window (minutes)" hint="1 to 1440; default 15.">
            <input type="number" min={1} max={1440} value={invWindow} onChange={(e) => setInvWindow(e.target.value)} />
          </Field>
          <Field label="Focal event id" hint="Optional: an empire event id (the eventId the ingest answered).">
            <input value={focal} onChange={(e) => setFocal(e.target.value)} maxLength={64} />
          </Field>
        </Form>
        {answers.investigations && <RunResult answer={answers.investigations} onReplay={onReplay} />}
      </section>
      <section className="panel">
        <h2>Rule proposer</h2>
        <p className="muted">Backtested empire alert rules from hourly counts and resolved incidents.</p>
        <Form
          label="Run the rule proposer"
          busy={rules.busy}
          error={rules.error}
          submitLabel="Propose rules"
          busyLabel={`Backtesting ${lookback || 30} days…`}
          onSubmit={() => {
            const days = int(lookback);
            void rules.execute(days === undefined ? {} : { lookbackDays: days }).then(keep('rules'));
          }}
        >
          <Field label="Look back (days)" hint="1 to 90; default 30.">
            <input type="number" min={1} max={90} value={lookback} onChange={(e) => setLookback(e.target.value)} />
          </Field>
        </Form>
        {answers.rules && <RunResult answer={answers.rules} onReplay={onReplay} />}
      </section>
    </div>
  );
}
