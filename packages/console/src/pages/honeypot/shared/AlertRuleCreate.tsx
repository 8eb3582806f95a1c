import { useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { PREDICATE_KINDS } from './predicate';
import { TenantSelect } from './TenantSelect';
import type { Predicate, PredicateKind, UaClass } from './types';
import { UA_CLASSES } from './uaClasses';

type DestinationKind = 'slack' | 'webhook' | 'metrics' | 'ci_dispatch';

const EMPTY = {
  tenant: '',
  name: '',
  kind: 'liar_rate_above' as PredicateKind,
  pct: '25',
  windowMinutes: '15',
  minEvents: '',
  count: '100',
  uaClass: '' as UaClass | '',
  destination: 'slack' as DestinationKind,
  url: '',
  secret: '',
  eventType: '',
  enabled: true,
};
type Draft = typeof EMPTY;

function predicateOf(f: Draft): Predicate {
  const minEvents = f.minEvents.trim() ? { minEvents: Number(f.minEvents) } : {};
  switch (f.kind) {
    case 'liar_rate_above':
      return { kind: f.kind, pct: Number(f.pct), windowMinutes: Number(f.windowMinutes), ...minEvents };
    case 'event_count_above':
      return { kind: f.kind, count: Number(f.count), windowMinutes: Number(f.windowMinutes), ...(f.uaClass ? { uaClass: f.uaClass } : {}) };
    case 'new_fingerprint_cluster':
      return { kind: f.kind, ...minEvents };
    case 'tarpit_triggered':
      return { kind: f.kind };
  }
}

function destinationOf(f: Draft) {
  switch (f.destination) {
    case 'slack':
      return { kind: 'slack' as const, url: f.url.trim() };
    case 'webhook':
      return { kind: 'webhook' as const, url: f.url.trim(), secret: f.secret };
    case 'metrics':
      return { kind: 'metrics' as const };
    case 'ci_dispatch':
      return { kind: 'ci_dispatch' as const, ...(f.eventType.trim() ? { eventType: f.eventType.trim() } : {}) };
  }
}

/** Creates a rule: a tenant, a predicate and one destination (the API takes up to ten; more can follow through it). */
export function AlertRuleCreate({ onCreated }: { onCreated: (name: string) => void }) {
  const [f, setF] = useState(EMPTY);
  const [created, setCreated] = useState<string | null>(null);
  const put = (change: Partial<Draft>) => setF((prev) => ({ ...prev, ...change }));
  const create = useAction(async (draft: Draft) => {
    const predicate = predicateOf(draft);
    await unwrap(
      api.POST('/api/observatory/v1/honeypot/alerts', {
        body: { tenant: draft.tenant, name: draft.name.trim(), predicate, destinations: [destinationOf(draft)], enabled: draft.enabled },
      }),
    );
    return draft.name.trim();
  });
  const windowed = f.kind === 'liar_rate_above' || f.kind === 'event_count_above';
  return (
    <Form
      label="Create an alert rule"
      submitLabel="Create rule"
      busy={create.busy}
      busyLabel="Creating…"
      error={create.error}
      onSubmit={() =>
        void create.execute(f).then((name) => {
          if (name === null) return;
          setCreated(name);
          setF({ ...EMPTY, tenant: f.tenant });
          onCreated(name);
        })
      }
    >
      <div className="hp-form-row">
        <TenantSelect label="Tenant" enabledOnly value={f.tenant} onChange={(tenant) => put({ tenant })} />
        <Field label="Rule name">
          <input value={f.name} onChange={(e) => put({ name: e.target.value })} required maxLength={200} />
        </Field>
      </div>
      <Field label="Fires when">
        <select value={f.kind} onChange={(e) => put({ kind: e.target.value as PredicateKind })}>
          {Object.entries(PREDICATE_KINDS).map(([kind, label]) => (
            <option key={kind} value={kind}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      <div className="hp-form-row">
        {f.kind === 'liar_rate_above' && (
          <Field label="LIAR share above (%)" hint="0 to just under 100.">
            <input type="number" min={0} max={99.99} step="any" value={f.pct} onChange={(e) => put({ pct: e.target.value })} required />
          </Field>
        )}
        {f.kind === 'event_count_above' && (
          <>
            <Field label="More events than">
              <input type="number" min={0} step={1} value={f.count} onChange={(e) => put({ count: e.target.value })} required />
            </Field>
            <Field label="Only of class">
              <select value={f.uaClass} onChange={(e) => put({ uaClass: e.target.value as UaClass | '' })}>
                <option value="">Any class</option>
                {UA_CLASSES.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </Field>
          </>
        )}
        {windowed && (
          <Field label="Window (minutes)" hint="5 to 1440; a rule that keeps matching fires at most once a window.">
            <input type="number" min={5} max={1440} step={1} value={f.windowMinutes} onChange={(e) => put({ windowMinutes: e.target.value })} required />
          </Field>
        )}
        {(f.kind === 'liar_rate_above' || f.kind === 'new_fingerprint_cluster') && (
          <Field label="Minimum events" hint={f.kind === 'liar_rate_above' ? 'Default 20.' : 'Default 1: its first event.'}>
            <input type="number" min={1} step={1} value={f.minEvents} onChange={(e) => put({ minEvents: e.target.value })} />
          </Field>
        )}
      </div>
      <div className="hp-form-row">
        <Field label="Send to">
          <select value={f.destination} onChange={(e) => put({ destination: e.target.value as DestinationKind })}>
            <option value="slack">Slack incoming webhook</option>
            <option value="webhook">Signed webhook</option>
            <option value="metrics">Metrics forwarder (configured on the server)</option>
            <option value="ci_dispatch">CI dispatch (configured on the server)</option>
          </select>
        </Field>
        {(f.destination === 'slack' || f.destination === 'webhook') && (
          <Field label="Destination URL">
            <input type="url" value={f.url} onChange={(e) => put({ url: e.target.value })} required placeholder="https://hooks.slack.com/services/…" />
          </Field>
        )}
        {f.destination === 'webhook' && (
          <Field label="Webhook secret" hint="16 to 256 characters; signs every delivery and is never shown again.">
            <input type="password" value={f.secret} onChange={(e) => put({ secret: e.target.value })} required minLength={16} maxLength={256} autoComplete="new-password" />
          </Field>
        )}
        {f.destination === 'ci_dispatch' && (
          <Field label="Event type" hint="Default observatory-alert.">
            <input value={f.eventType} onChange={(e) => put({ eventType: e.target.value })} pattern="[A-Za-z0-9_.:\-]+" maxLength={100} />
          </Field>
        )}
      </div>
      <label className="field hp-check">
        <input type="checkbox" checked={f.enabled} onChange={(e) => put({ enabled: e.target.checked })} />
        <span>Enabled from now</span>
      </label>
      {created && !create.busy && (
        <p role="status" className="muted">
          Created “{created}”.
        </p>
      )}
    </Form>
  );
}
