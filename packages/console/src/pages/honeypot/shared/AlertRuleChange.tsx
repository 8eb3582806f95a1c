import { useEffect, useRef, useState } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { describePredicate, fromLocalInput, toLocalInput } from './predicate';
import type { AlertRule } from './types';

/** Changes a rule's name, whether it is enabled, and its silence (the API changes nothing else). */
export function AlertRuleChange({ rule, onDone, onCancel }: { rule: AlertRule; onDone: (rule: AlertRule) => void; onCancel: () => void }) {
  const [name, setName] = useState(rule.name);
  const [enabled, setEnabled] = useState(rule.enabled);
  const [silenceUntil, setSilenceUntil] = useState(toLocalInput(rule.silenceUntil));
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [rule.id]);
  const save = useAction(async () => {
    const answer = await unwrap(
      api.POST('/api/observatory/v1/honeypot/alerts/{id}', {
        params: { path: { id: rule.id } },
        body: { name: name.trim(), enabled, silenceUntil: fromLocalInput(silenceUntil) },
      }),
    );
    return answer.rule;
  });
  return (
    <section className="panel" aria-labelledby="change-rule-heading">
      <h2 id="change-rule-heading" ref={heading} tabIndex={-1}>
        Change “{rule.name}”
      </h2>
      <p className="muted">
        {rule.tenant}: fires when {describePredicate(rule.predicate)}. The predicate and destinations stay as they are; to change them, create a new rule and disable this one.
      </p>
      <Form
        label="Change the alert rule"
        submitLabel="Save changes"
        busy={save.busy}
        error={save.error}
        onSubmit={() => void save.execute().then((changed) => changed && onDone(changed))}
      >
        <Field label="Rule name">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </Field>
        <label className="field hp-check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          <span>Enabled (enabling a disabled rule evaluates it from that moment)</span>
        </label>
        <Field label="Silenced until" hint="In your time zone. While silenced a match sends nothing; empty lifts the silence.">
          <input type="datetime-local" value={silenceUntil} onChange={(e) => setSilenceUntil(e.target.value)} />
        </Field>
        <div>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </Form>
    </section>
  );
}
