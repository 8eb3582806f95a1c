import { Field } from '../../../components';
import type { Destination } from './api';

type Kind = Destination['kind'];
const KINDS: { kind: Kind; text: string }[] = [
  { kind: 'webhook', text: 'Signed webhook' },
  { kind: 'slack', text: 'Slack incoming webhook' },
  { kind: 'metrics', text: 'The metrics forwarder' },
  { kind: 'ci_dispatch', text: 'CI workflow dispatch' },
];

/** What the operator typed for one destination, before it is a valid Destination. */
export interface DestinationDraft {
  kind: Kind;
  url: string;
  secret: string;
  eventType: string;
}
export const EMPTY_DESTINATION: DestinationDraft = { kind: 'webhook', url: '', secret: '', eventType: '' };

/** The destination to send, or a sentence saying what is missing (the service checks the rest). */
export function toDestination(d: DestinationDraft): Destination | string {
  if (d.kind === 'metrics') return { kind: 'metrics' };
  if (d.kind === 'ci_dispatch') return d.eventType.trim() ? { kind: 'ci_dispatch', eventType: d.eventType.trim() } : { kind: 'ci_dispatch' };
  if (!/^https?:\/\//i.test(d.url.trim())) return 'Rule proposals need a destination for their alert rule: give its URL (https://…).';
  if (d.kind === 'slack') return { kind: 'slack', url: d.url.trim() };
  if (d.secret.length < 16) return 'A webhook destination needs a signing secret of at least 16 characters.';
  return { kind: 'webhook', url: d.url.trim(), secret: d.secret };
}

/** Where an alert rule made from an accepted rule proposal sends its firings. */
export function DestinationFields({ value, onChange, legend }: { value: DestinationDraft; onChange: (d: DestinationDraft) => void; legend: string }) {
  const patch = (p: Partial<DestinationDraft>) => onChange({ ...value, ...p });
  return (
    <fieldset className="destination">
      <legend>{legend}</legend>
      <Field label="Destination kind">
        <select value={value.kind} onChange={(e) => patch({ kind: e.target.value as Kind })}>
          {KINDS.map((k) => (
            <option key={k.kind} value={k.kind}>
              {k.text}
            </option>
          ))}
        </select>
      </Field>
      {(value.kind === 'webhook' || value.kind === 'slack') && (
        <Field label="Destination URL">
          <input type="url" value={value.url} onChange={(e) => patch({ url: e.target.value })} placeholder="https://alerts.example.com/observatory" />
        </Field>
      )}
      {value.kind === 'webhook' && (
        <Field label="Signing secret" hint="At least 16 characters; signs every delivery and is never shown again.">
          <input type="password" autoComplete="new-password" value={value.secret} onChange={(e) => patch({ secret: e.target.value })} />
        </Field>
      )}
      {value.kind === 'ci_dispatch' && (
        <Field label="Event type" hint="Default observatory-alert.">
          <input value={value.eventType} onChange={(e) => patch({ eventType: e.target.value })} />
        </Field>
      )}
    </fieldset>
  );
}
