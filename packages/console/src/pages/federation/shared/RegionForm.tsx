import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { Field, Form } from '../../../components';
import { REGION_STATUSES, type RegionRow, type RegionStatus, upsertRegion } from './api';

/**
 * Registers a region or updates the one of that key; starts from `from` when an operator chose to
 * change a row. Optional fields left empty are cleared (host slug, database host) or keep the
 * service's default (display name: the key).
 */
export function RegionForm({ from, onSaved }: { from: RegionRow | null; onSaved: (row: RegionRow) => void }) {
  const [key, setKey] = useState(from?.key ?? '');
  const [displayName, setDisplayName] = useState(from?.displayName ?? '');
  const [baseUrl, setBaseUrl] = useState(from?.baseUrl ?? '');
  const [hostProjectSlug, setHostProjectSlug] = useState(from?.hostProjectSlug ?? '');
  const [databaseHost, setDatabaseHost] = useState(from?.databaseHost ?? '');
  const [latencyTierSec, setLatencyTierSec] = useState(String(from?.latencyTierSec ?? 300));
  const [status, setStatus] = useState<RegionStatus>(from?.status ?? 'active');
  const [isPrimary, setIsPrimary] = useState(from?.isPrimary ?? false);
  const action = useAction(upsertRegion);

  const submit = async () => {
    const tier = Number.parseInt(latencyTierSec, 10);
    const answer = await action.execute({
      key: key.trim(),
      baseUrl: baseUrl.trim(),
      ...(displayName.trim() ? { displayName: displayName.trim() } : {}),
      hostProjectSlug: hostProjectSlug.trim() || null,
      databaseHost: databaseHost.trim() || null,
      ...(Number.isFinite(tier) ? { latencyTierSec: tier } : {}),
      status,
      isPrimary,
    });
    if (answer) onSaved(answer.row);
  };

  return (
    <section className="panel">
      <h2>{from ? `Change ${from.key}` : 'Add a region'}</h2>
      <Form label="Add or update a region" onSubmit={() => void submit()} busy={action.busy} error={action.error} submitLabel="Save the region">
        <Field label="Region key" hint="The deployment's OBSERVATORY_REGION: a-z, 0-9 and -. A region of the same key is updated, not added.">
          <input value={key} onChange={(e) => setKey(e.target.value)} required maxLength={64} pattern="[a-z0-9][a-z0-9-]{0,63}" readOnly={from !== null} />
        </Field>
        <Field label="Display name" hint="Empty: the key.">
          <input value={displayName} onChange={(e) => setDisplayName(e.target.value)} maxLength={200} />
        </Field>
        <Field label="Base URL" hint="The deployment's origin (scheme, host, port). A peer's host must be in OBSERVATORY_BRIDGE_PEER_HOSTS: the bridge token goes there.">
          <input type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} required maxLength={2048} />
        </Field>
        <Field label="Host project">
          <input value={hostProjectSlug} onChange={(e) => setHostProjectSlug(e.target.value)} maxLength={200} />
        </Field>
        <Field label="Database host">
          <input value={databaseHost} onChange={(e) => setDatabaseHost(e.target.value)} maxLength={255} />
        </Field>
        <Field label="Latency tier (seconds)" hint="The lag the region is held to in the region SLO.">
          <input type="number" min={1} step={1} value={latencyTierSec} onChange={(e) => setLatencyTierSec(e.target.value)} required />
        </Field>
        <Field label="Status" hint="Only active regions are asked during a fan-out.">
          <select value={status} onChange={(e) => setStatus(e.target.value as RegionStatus)}>
            {REGION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </Field>
        <label className="check">
          <input type="checkbox" checked={isPrimary} onChange={(e) => setIsPrimary(e.target.checked)} /> Primary region (moves the flag from any other)
        </label>
      </Form>
    </section>
  );
}
