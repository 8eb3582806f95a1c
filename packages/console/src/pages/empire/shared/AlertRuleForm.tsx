import { useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { type EmpirePredicate, NODE_KINDS, PREDICATE_KINDS } from './predicates';
import './empire.css';

type Kind = EmpirePredicate['kind'];
type DestinationKind = 'webhook' | 'slack' | 'metrics' | 'ci_dispatch';

const int = (text: string) => Number.parseInt(text, 10);
const optional = <K extends string>(key: K, text: string) => (text.trim() === '' ? {} : ({ [key]: text.trim() } as Record<K, string>));

/** Creates a rule on the toolset's events with one destination (the API takes up to 10). */
export function AlertRuleForm({ toolset, tenant: tenantFilter, onCreated }: { toolset: string; tenant: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [tenant, setTenant] = useState(tenantFilter);
  const [kind, setKind] = useState<Kind>('empire_count_gte');
  const [count, setCount] = useState('100');
  const [windowMinutes, setWindowMinutes] = useState('15');
  const [eventType, setEventType] = useState('');
  const [otherToolset, setOtherToolset] = useState('');
  const [otherEventType, setOtherEventType] = useState('');
  const [minTenants, setMinTenants] = useState('1');
  const [lagSec, setLagSec] = useState('600');
  const [nodeKind, setNodeKind] = useState('');
  const [destKind, setDestKind] = useState<DestinationKind>('webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [created, setCreated] = useState<string | null>(null);

  const predicate = (): EmpirePredicate => {
    switch (kind) {
      case 'empire_count_gte':
        return { kind, count: int(count), windowMinutes: int(windowMinutes), ...optional('eventType', eventType) };
      case 'cross_toolset_join':
        return { kind, otherToolset: otherToolset.trim(), windowMinutes: int(windowMinutes), minTenants: int(minTenants), ...optional('eventType', eventType), ...optional('otherEventType', otherEventType) };
      case 'graph_lag_gte':
        return { kind, lagSec: int(lagSec), ...optional('nodeKind', nodeKind) };
    }
  };
  const destination = () =>
    destKind === 'webhook' ? { kind: destKind, url: url.trim(), secret } : destKind === 'slack' ? { kind: destKind, url: url.trim() } : { kind: destKind };

  // A new function each render is fine: the action runs with the form's values at submit.
  const create = useAction(() =>
    unwrap(
      api.POST('/api/observatory/v1/empire/{toolset}/alerts', {
        params: { path: { toolset } },
        body: { name: name.trim(), predicate: predicate(), destinations: [destination()], enabled, ...(tenant.trim() ? { tenant: tenant.trim() } : {}) },
      }),
    ),
  );

  return (
    <section className="panel">
      <h2>New rule for {toolset}</h2>
      <Form
        label="Create an alert rule"
        submitLabel="Create the rule"
        busy={create.busy}
        error={create.error}
        onSubmit={() =>
          void create.execute().then((r) => {
            if (!r) return;
            setCreated(name.trim());
            setName('');
            setSecret('');
            onCreated();
          })
        }
      >
        <Field label="Name">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </Field>
        <Field label="Source tenant" hint="Only this tenant's events count; empty for every tenant.">
          <input value={tenant} onChange={(e) => setTenant(e.target.value)} maxLength={128} />
        </Field>
        <Field label="Fires when">
          <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            {PREDICATE_KINDS.map((p) => (
              <option key={p.kind} value={p.kind}>
                {p.label}
              </option>
            ))}
          </select>
        </Field>
        {kind === 'empire_count_gte' && (
          <Field label="Events at least" hint="1 to 100,000,000.">
            <input type="number" min={1} value={count} onChange={(e) => setCount(e.target.value)} required />
          </Field>
        )}
        {kind === 'cross_toolset_join' && (
          <>
            <Field label="Other toolset">
              <input value={otherToolset} onChange={(e) => setOtherToolset(e.target.value)} required />
            </Field>
            <Field label="Other toolset's event type" hint="Optional.">
              <input value={otherEventType} onChange={(e) => setOtherEventType(e.target.value)} maxLength={128} />
            </Field>
            <Field label="Tenants at least">
              <input type="number" min={1} value={minTenants} onChange={(e) => setMinTenants(e.target.value)} required />
            </Field>
          </>
        )}
        {kind !== 'graph_lag_gte' ? (
          <>
            <Field label="Window (minutes)" hint="5 to 1,440; a rule that keeps matching fires again at most once per window.">
              <input type="number" min={5} max={1440} value={windowMinutes} onChange={(e) => setWindowMinutes(e.target.value)} required />
            </Field>
            <Field label="Event type" hint="Optional: count only events of this type.">
              <input value={eventType} onChange={(e) => setEventType(e.target.value)} maxLength={128} />
            </Field>
          </>
        ) : (
          <>
            <Field label="Lag at least (seconds)" hint="1 to 604,800.">
              <input type="number" min={1} value={lagSec} onChange={(e) => setLagSec(e.target.value)} required />
            </Field>
            <Field label="Node kind" hint="Empty: the worst kind's lag.">
              <select value={nodeKind} onChange={(e) => setNodeKind(e.target.value)}>
                <option value="">Any (the worst)</option>
                {NODE_KINDS.map((k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            </Field>
          </>
        )}
        <Field label="Send to">
          <select value={destKind} onChange={(e) => setDestKind(e.target.value as DestinationKind)}>
            <option value="webhook">Webhook (signed JSON)</option>
            <option value="slack">Chat webhook (Slack format)</option>
            <option value="metrics">Metrics forwarder</option>
            <option value="ci_dispatch">CI dispatch</option>
          </select>
        </Field>
        {(destKind === 'webhook' || destKind === 'slack') && (
          <Field label="Destination URL">
            <input type="url" value={url} onChange={(e) => setUrl(e.target.value)} required placeholder="https://" />
          </Field>
        )}
        {destKind === 'webhook' && (
          <Field label="Signing secret" hint="16 to 256 characters; never shown again.">
            <input type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} required minLength={16} maxLength={256} />
          </Field>
        )}
        <label className="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
      </Form>
      {created && (
        <p className="result" role="status">
          Created “{created}”: it is listed in the rules above.
        </p>
      )}
    </section>
  );
}
