import { useCallback, useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Field, Form, Panel, Time } from '../../../components';

const COLOURS = ['', 'yellow', 'red', 'orange', 'green', 'blue', 'purple', 'gray'] as const;
const NAMED = new Set<string>(COLOURS.filter(Boolean));

/** The colours the service documents: the named ones and #rrggbb; anything else is shown as text only. */
function swatch(color: string | null): string | undefined {
  if (color === null) return undefined;
  return NAMED.has(color) || /^#[0-9a-fA-F]{6}$/.test(color) ? color : undefined;
}

/** The note on an incident (one per incident, replaced on save). */
export function IncidentNote({ incidentId }: { incidentId: string }) {
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/empire/notes', { params: { query: { eventId: incidentId, targetKind: 'incident' } } })),
    [incidentId],
  );
  return (
    <Panel title="Note" state={state} minHeight={120}>
      {(d) => (
        <>
          {d.note ? (
            <blockquote className="note" style={{ borderLeftColor: swatch(d.note.color) }}>
              <p>{d.note.note}</p>
              <p className="muted">
                {d.note.pinned ? 'Pinned. ' : ''}
                {d.note.color ? `Colour ${d.note.color}. ` : ''}Updated <Time at={d.note.updatedAt} />.
              </p>
            </blockquote>
          ) : (
            <p className="empty">No note yet.</p>
          )}
          <Can scope="write:tenants">
            <NoteForm key={d.note?.updatedAt ?? 'new'} incidentId={incidentId} current={d.note} onSaved={state.reload} />
          </Can>
        </>
      )}
    </Panel>
  );
}

function NoteForm({
  incidentId,
  current,
  onSaved,
}: {
  incidentId: string;
  current: { note: string; pinned: boolean; color: string | null } | null;
  onSaved: () => void;
}) {
  const [note, setNote] = useState(current?.note ?? '');
  const [pinned, setPinned] = useState(current?.pinned ?? false);
  const [color, setColor] = useState(current?.color ?? '');
  const save = useAction(
    useCallback(
      () =>
        unwrap(
          api.POST('/api/observatory/v1/empire/notes', {
            body: { eventId: incidentId, targetKind: 'incident', note: note.trim(), pinned, color: color === '' ? null : color },
          }),
        ),
      [incidentId, note, pinned, color],
    ),
  );
  return (
    <Form
      label="Write the note"
      submitLabel={current ? 'Replace the note' : 'Save the note'}
      busy={save.busy}
      error={save.error}
      onSubmit={() => void save.execute().then((r) => r && onSaved())}
    >
      <Field label="Note">
        <textarea value={note} onChange={(e) => setNote(e.target.value)} rows={3} maxLength={10_000} required />
      </Field>
      <div className="toolbar">
        <Field label="Colour">
          <select value={color} onChange={(e) => setColor(e.target.value)}>
            {COLOURS.map((c) => (
              <option key={c} value={c}>
                {c || 'none'}
              </option>
            ))}
            {color !== '' && !NAMED.has(color) && <option value={color}>{color}</option>}
          </select>
        </Field>
        <label className="check">
          <input type="checkbox" checked={pinned} onChange={(e) => setPinned(e.target.checked)} /> Pinned
        </label>
      </div>
    </Form>
  );
}
