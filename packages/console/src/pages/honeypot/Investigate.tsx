import { useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import { useQuery } from '../../app/useQuery';
import { useUrlState } from '../../app/urlState';
import { BarList, ErrorNote, Field, Form, Panel, Time } from '../../components';
import { EventsTable } from './shared/EventsTable';
import { Ja4Drift } from './shared/Ja4Drift';
import { TenantSelect } from './shared/TenantSelect';
import type { Investigation } from './shared/types';
import { UaClassBadge } from './shared/uaClasses';
import { VendorVerdict } from './shared/VendorVerdict';
import './shared/honeypot.css';

const FINGERPRINT = /^[0-9a-f]{16}$/;

/** One fingerprint: what it did, whether its vendor claim holds (with the proof), and its JA4 drift. */
export default function Investigate() {
  const { get, set } = useUrlState();
  const fingerprintId = get('fingerprintId');
  const tenant = get('tenant');
  const valid = FINGERPRINT.test(fingerprintId);
  const [draft, setDraft] = useState({ fingerprintId, tenant });
  // A link from another page changes the address: the form follows it.
  useEffect(() => setDraft({ fingerprintId, tenant }), [fingerprintId, tenant]);
  const state = useQuery(
    () => unwrap(api.GET('/api/observatory/v1/honeypot/investigate', { params: { query: { fingerprintId, ...(tenant ? { tenant } : {}) } } })),
    [fingerprintId, tenant],
    { enabled: valid },
  );
  const draftId = draft.fingerprintId.trim().toLowerCase();
  return (
    <>
      <div className="page-head">
        <h1>Investigate</h1>
      </div>
      <section className="panel">
        <Form
          label="Look up a fingerprint"
          submitLabel="Investigate"
          busy={valid && state.loading}
          busyLabel="Looking it up…"
          error={null}
          onSubmit={() => set({ fingerprintId: draftId || null, tenant: draft.tenant || null })}
        >
          <div className="hp-form-row">
            <Field
              label="Fingerprint id"
              hint="16 hex digits, from Recent events, Clusters or Tarpits. Client IPs are stored only as a keyed hash, so a fingerprint is the way in."
            >
              <input
                value={draft.fingerprintId}
                onChange={(e) => setDraft({ ...draft, fingerprintId: e.target.value })}
                pattern="[0-9a-fA-F]{16}"
                required
                spellCheck={false}
                autoComplete="off"
                placeholder="9f86d081884c7d65"
              />
            </Field>
            <TenantSelect label="Tenant" allowAll value={draft.tenant} onChange={(slug) => setDraft({ ...draft, tenant: slug })} />
          </div>
        </Form>
      </section>
      {fingerprintId && !valid && (
        <ErrorNote error={{ status: 400, reason: 'invalid-fingerprint', human: `“${fingerprintId}” is not a fingerprint id: it has 16 hex digits (0-9, a-f).` }} />
      )}
      {!fingerprintId && <p className="empty">Enter a fingerprint id to see its events, its vendor verdict with the proof, and its JA4 drift.</p>}
      {valid && (
        <Panel
          title={<>Fingerprint <code>{fingerprintId}</code></>}
          state={state}
          minHeight={200}
          isEmpty={(d) => !d.found}
          empty={`No event has fingerprint ${fingerprintId}${tenant ? ` in ${tenant}` : ''}. Check the id${tenant ? ', or look in every tenant' : ''}.`}
        >
          {(d) => <Findings d={d} />}
        </Panel>
      )}
    </>
  );
}

function Findings({ d }: { d: Investigation }) {
  const f = d.fingerprint;
  return (
    <>
      {f && (
        <dl className="facts hp-facts">
          <dt>Tenants</dt>
          <dd>{f.tenants.join(', ')}</dd>
          <dt>Seen</dt>
          <dd>
            <Time at={f.firstSeen} /> to <Time at={f.lastSeen} />
          </dd>
          <dt>Events</dt>
          <dd>
            {f.eventCount.toLocaleString()} ({f.liarCount.toLocaleString()} LIAR)
          </dd>
          <dt>Latest verdict</dt>
          <dd>
            <UaClassBadge value={f.lastUaClass} />
          </dd>
          <dt>JA4</dt>
          <dd>{f.ja4 ? <code>{f.ja4}</code> : 'not sent'}</dd>
          <dt>AS</dt>
          <dd>{f.asn === null ? 'unknown' : `AS${f.asn}`}</dd>
          <dt>User agent</dt>
          <dd>
            <code>{f.uaSample || '(empty)'}</code>
          </dd>
        </dl>
      )}
      <div className="grid">
        <section className="panel">
          <h2>Vendor verdict</h2>
          <VendorVerdict verdict={d.verifiedVendorVerdict} />
        </section>
        <section className="panel">
          <h2>JA4 drift</h2>
          <Ja4Drift drift={d.ja4Drift} ownJa4={f?.ja4 ?? null} fingerprintId={d.fingerprintId} />
        </section>
      </div>
      <div className="grid">
        <section className="panel">
          <h2>UA and JA4 agree?</h2>
          {d.uaJa4Consistency ? (
            <p>
              <span className={`badge ${d.uaJa4Consistency.flag === 'consistent' ? 'ok' : d.uaJa4Consistency.flag === 'inconsistent' ? 'bad' : ''}`}>
                {d.uaJa4Consistency.flag}
              </span>{' '}
              {d.uaJa4Consistency.reason}
              {d.uaJa4Consistency.claims ? ` (claims ${d.uaJa4Consistency.claims})` : ''}
            </p>
          ) : (
            <p className="empty">Not checked: no JA4 was sent.</p>
          )}
        </section>
        <section className="panel">
          <h2>Tarpit</h2>
          {d.tarpit ? (
            <p>
              {d.tarpit.active ? <span className="badge bad">in force</span> : <span className="badge">ended</span>} {d.tarpit.delayMs.toLocaleString()} ms delay since{' '}
              <Time at={d.tarpit.triggeredAt} />, until <Time at={d.tarpit.expiresAt} /> ({d.tarpit.reason}, {d.tarpit.liarEventCount} LIAR events).
            </p>
          ) : (
            <p className="empty">Not tarpitted.</p>
          )}
        </section>
      </div>
      <div className="grid">
        <section className="panel">
          <h2>Countries</h2>
          <BarList label="Countries seen" items={d.countriesSeen.map((c) => ({ name: c.countryCode, count: c.count }))} />
        </section>
        <section className="panel">
          <h2>Paths</h2>
          <BarList label="Paths seen" items={d.pathsSeen.map((p) => ({ name: p.path, count: p.count }))} />
        </section>
        <section className="panel">
          <h2>Verdict classes</h2>
          <BarList label="Verdict classes seen" items={d.uaClassesSeen.map((c) => ({ name: c.uaClass, count: c.count }))} />
        </section>
      </div>
      <h2>Latest events</h2>
      <EventsTable caption="The fingerprint's latest 50 events" events={d.events} />
    </>
  );
}
