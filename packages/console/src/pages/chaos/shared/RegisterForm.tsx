import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { CHAOS_KINDS, type ChaosKind, type Experiment, registerExperiment, SEVERITIES, TARGET_MEANS } from './api';
import { EMPTY_DRAFT, registrationBody, type RegistrationDraft } from './registration';

/**
 * Registers an experiment. The service checks everything (slug, kind, target, the SLO against the
 * kind's cap) and refuses with 400 and a sentence saying what is wrong, shown under the form; the
 * fields keep what was typed so it can be corrected.
 */
export function RegisterForm({ onRegistered }: { onRegistered: (experiment: Experiment) => void }) {
  const [draft, setDraft] = useState<RegistrationDraft>(EMPTY_DRAFT);
  const register = useAction(registerExperiment);
  const field = (name: keyof RegistrationDraft) => ({ value: draft[name], onChange: (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [name]: e.target.value })) });

  const onSubmit = async () => {
    const answer = await register.execute(registrationBody(draft));
    if (answer?.experiment) {
      setDraft(EMPTY_DRAFT);
      onRegistered(answer.experiment);
    }
  };

  return (
    <section className="panel" aria-label="Register an experiment">
      <h2>Register an experiment</h2>
      <Form label="Register a chaos experiment" submitLabel="Register" busyLabel="Registering…" busy={register.busy} error={register.error} onSubmit={() => void onSubmit()}>
        <Field label="Slug" hint="1 to 128 characters of a-z, 0-9 and -; unique.">
          <input {...field('slug')} required spellCheck={false} autoComplete="off" />
        </Field>
        <Field label="Kind">
          <select {...field('kind')}>
            {CHAOS_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Target" hint={TARGET_MEANS[draft.kind as ChaosKind]}>
          <input {...field('target')} required spellCheck={false} autoComplete="off" />
        </Field>
        <Field label="Description">
          <textarea {...field('description')} rows={2} maxLength={2000} />
        </Field>
        <Field label="Recovery SLO (seconds)" hint="Blank: the kind's default. Capped by the kind's window.">
          <input {...field('recoverySloSec')} type="number" step={1} inputMode="numeric" />
        </Field>
        <Field label="Cooldown (minutes)" hint="1 to 1440: how long after a run the schedule leaves it alone. Blank: the default.">
          <input {...field('cooldownMinutes')} type="number" step={1} inputMode="numeric" />
        </Field>
        <Field label="Severity">
          <select {...field('severity')}>
            <option value="">The default</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
      </Form>
    </section>
  );
}
