import { useState } from 'react';
import { useAction, useQuery } from '../../app/useQuery';
import { Busy, ErrorNote, Panel } from '../../components';
import { loadNarration, type Narration as NarrationAnswer, narrate } from './shared/api';
import { Narration } from './shared/Narration';
import './shared/compliance.css';

/** The posture as one paragraph: the built-in template at once, the configured model on request, each with its scrub. */
export default function Narrator() {
  const template = useQuery(loadNarration, []);
  const ask = useAction(narrate);
  const [answer, setAnswer] = useState<NarrationAnswer | null>(null);

  const onAsk = async () => {
    setAnswer(null);
    const written = await ask.execute();
    if (written) setAnswer(written);
  };

  return (
    <>
      <div className="page-head">
        <h1>Compliance narrator</h1>
        <button type="button" className="primary" disabled={ask.busy} onClick={() => void onAsk()}>
          Ask the model
        </button>
      </div>
      <p className="muted">
        Sentences that name a framework or control this deployment does not evaluate are removed, and listed below the paragraph. The outcomes come from
        automated checks of the live system, not from an audit.
      </p>
      {ask.busy && <Busy label="Asking the model for a paragraph (the built-in template writes it when no model is configured)…" />}
      {ask.error && <ErrorNote error={ask.error} />}
      {answer && (
        <section className="panel">
          <h2>{answer.modelOrStub === 'live' ? "The model's paragraph" : "The model's paragraph (written by the template: no model is configured)"}</h2>
          <Narration narration={answer} label="Asked paragraph" />
        </section>
      )}
      <Panel title="The built-in paragraph" state={template} minHeight={200}>
        {(n) => <Narration narration={n} label="Built-in paragraph" />}
      </Panel>
    </>
  );
}
