import { useEffect, useState } from 'react';
import { useAction, useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { Field, Form, Panel, Time } from '../../components';
import { autoDraft, listIncidents, readPostmortem } from './shared/api';
import { DraftView } from './shared/DraftView';
import './triage.css';

/**
 * An incident's postmortem (`?incident=`): the stored one (seeded by an accepted incident
 * proposal, or a persisted auto-draft), and the postmortem writer drafting a new one on demand.
 */
export default function Postmortems() {
  const { get, set } = useUrlState();
  const incident = get('incident');
  return (
    <div className="triage-page">
      <div className="page-head">
        <h1>Postmortems</h1>
      </div>
      <IncidentPicker incident={incident} onPick={(id) => set({ incident: id })} />
      {incident === '' ? (
        <section className="panel">
          <p className="empty">Pick an incident above to read its postmortem or have one drafted.</p>
        </section>
      ) : (
        <IncidentPostmortem key={incident} incident={incident} />
      )}
    </div>
  );
}

function IncidentPicker({ incident, onPick }: { incident: string; onPick: (id: string | null) => void }) {
  const incidents = useQuery(listIncidents, []);
  const [draft, setDraft] = useState(incident);
  useEffect(() => setDraft(incident), [incident]);
  const rows = incidents.data?.incidents ?? [];
  return (
    <form
      className="panel toolbar"
      aria-label="Pick an incident"
      onSubmit={(e) => {
        e.preventDefault();
        onPick(draft.trim() || null);
      }}
    >
      <Field label="Recent incidents">
        <select value={rows.some((i) => i.id === incident) ? incident : ''} onChange={(e) => onPick(e.target.value || null)} disabled={rows.length === 0}>
          <option value="">{incidents.data === null ? 'Loading incidents…' : rows.length === 0 ? 'No incidents yet' : 'Pick an incident…'}</option>
          {rows.map((i) => (
            <option key={i.id} value={i.id}>
              {i.title} ({i.toolset}, {i.severity}, {i.status})
            </option>
          ))}
        </select>
      </Field>
      <Field label="Incident id">
        <input value={draft} onChange={(e) => setDraft(e.target.value)} size={38} maxLength={64} />
      </Field>
      <button type="submit">Open</button>
    </form>
  );
}

function IncidentPostmortem({ incident }: { incident: string }) {
  const stored = useQuery(() => readPostmortem(incident), [incident]);
  return (
    <>
      <Panel
        title="Stored postmortem"
        state={stored}
        minHeight={200}
        isEmpty={(d) => d.postmortem === null}
        empty="This incident has no postmortem yet: draft one below (tick “Store it” to keep it)."
      >
        {(d) =>
          d.postmortem && (
            <>
              <p className="muted">
                {d.postmortem.source === 'proposal' ? 'Seeded from the accepted incident proposal' : 'Stored from an auto-draft'}, updated <Time at={d.postmortem.updatedAt} />
                {d.postmortem.strippedEventIds.length > 0 && `; ${d.postmortem.strippedEventIds.length} unsupported identifiers were removed`}.
              </p>
              <DraftView draft={d.postmortem.draft} />
            </>
          )
        }
      </Panel>
      <Can scope="write:alerts">
        <AutoDraft incident={incident} onStored={stored.reload} />
      </Can>
    </>
  );
}

function AutoDraft({ incident, onStored }: { incident: string; onStored: () => void }) {
  const [notes, setNotes] = useState('');
  const [persist, setPersist] = useState(true);
  const draft = useAction((body: { operatorNotes?: string; persist?: boolean }) => autoDraft(incident, body));
  const [answer, setAnswer] = useState<Awaited<ReturnType<typeof autoDraft>> | null>(null);
  return (
    <section className="panel">
      <h2>Draft with the postmortem writer</h2>
      <Form
        label="Draft a postmortem"
        busy={draft.busy}
        error={draft.error}
        submitLabel="Draft the postmortem"
        busyLabel="The postmortem writer is drafting from the incident and its lineage…"
        onSubmit={() => {
          setAnswer(null);
          void draft.execute({ persist, ...(notes.trim() ? { operatorNotes: notes.trim() } : {}) }).then((a) => {
            if (!a) return;
            setAnswer(a);
            if (a.persisted) onStored();
          });
        }}
      >
        <Field label="Operator notes" hint="Optional: what you know that the events do not say.">
          <textarea rows={3} value={notes} onChange={(e) => setNotes(e.target.value)} maxLength={4000} />
        </Field>
        <label className="check">
          <input type="checkbox" checked={persist} onChange={(e) => setPersist(e.target.checked)} /> Store it as the incident's postmortem
        </label>
      </Form>
      {answer && (
        <div className="draft-answer">
          <p role="status" className="ok-box">
            {answer.persisted ? 'Drafted and stored.' : 'Drafted (not stored).'} It cites {answer.citedEventIds.length} event{answer.citedEventIds.length === 1 ? '' : 's'}
            {answer.strippedEventIds.length > 0 ? `; claims naming ${answer.strippedEventIds.join(', ')} were removed as unsupported` : ''}.
          </p>
          <DraftView draft={answer.draft} />
          <details>
            <summary>The writer's text as it was</summary>
            <pre>{answer.rawDraft}</pre>
          </details>
        </div>
      )}
    </section>
  );
}
