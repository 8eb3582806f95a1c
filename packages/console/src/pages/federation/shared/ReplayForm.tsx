import { useState } from 'react';
import { useAction } from '../../../app/useQuery';
import { DataTable, Field, Form } from '../../../components';
import { CheckBadge } from '../../compliance/shared/badges';
import { checkParity, type DigestTuple, type FederationReplay, replayFederation } from './api';
import { FailedRegions, ParityBadge, RegionKeys } from './badges';

export interface Pin {
  digest: string;
  tuples: DigestTuple[];
}

/** Parses the optional tuples box: empty is none, else a JSON array or a message saying why not. */
export function parseTuples(text: string): { value?: DigestTuple[]; error?: string } {
  if (text.trim() === '') return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (!Array.isArray(value)) return { error: 'The pinned tuples are not a JSON array of digest tuples.' };
    return { value: value as DigestTuple[] };
  } catch (cause) {
    return { error: `The pinned tuples are not JSON: ${cause instanceof Error ? cause.message : String(cause)}` };
  }
}

const short = (tuple: DigestTuple | null) =>
  tuple === null ? <span className="muted">absent</span> : <code className="hash">{`${tuple.migrationDigest.slice(0, 12)} · ${tuple.graphDigest.slice(0, 12)} · ${tuple.complianceDigest.slice(0, 12)}`}</code>;

function ReplayAnswer({ replay }: { replay: FederationReplay }) {
  return (
    <section className="panel" role="region" aria-label="Federation replay">
      <h3>
        Replay: <CheckBadge ok={replay.matches} yes="digest matches" no="digest differs" />
      </h3>
      <dl className="facts">
        <dt>Pinned digest</dt>
        <dd>
          <code className="hash">{replay.pinnedDigest}</code>
        </dd>
        <dt>Live digest</dt>
        <dd>
          <code className="hash" data-testid="live-digest">
            {replay.liveDigest}
          </code>
        </dd>
        <dt>Pinned tuples' digest</dt>
        <dd>{replay.pinnedTuplesDigest ? <code className="hash">{replay.pinnedTuplesDigest}</code> : <span className="muted">no tuples pinned</span>}</dd>
        <dt>Migration parity</dt>
        <dd>
          <ParityBadge parity={replay.migrationParity} />
        </dd>
        <dt>Participating</dt>
        <dd>
          <RegionKeys keys={replay.participating} label="Regions in the replay" />
        </dd>
        <dt>Failed</dt>
        <dd>
          <FailedRegions failed={replay.failed} label="Regions the replay could not ask" />
        </dd>
      </dl>
      {replay.driftDetail.length > 0 && (
        <DataTable
          caption="Region by region against the pinned tuples"
          rows={replay.driftDetail}
          rowKey={(d) => d.regionKey}
          columns={[
            { key: 'regionKey', label: 'Region', sortValue: (d) => d.regionKey },
            { key: 'drifted', label: 'Compared', sortValue: (d) => (d.drifted ? 1 : 0), render: (d) => <CheckBadge ok={!d.drifted} yes="same" no="drifted" /> },
            { key: 'pinned', label: 'Pinned (migration · graph · compliance)', render: (d) => short(d.pinned) },
            { key: 'live', label: 'Live (migration · graph · compliance)', render: (d) => short(d.live) },
          ]}
        />
      )}
    </section>
  );
}

/**
 * Replays the federation digest against a pinned one (and, when given, the tuples it was made
 * of, compared region by region). "Pin the current digest" runs a parity check and pins its answer.
 */
export function ReplayForm({ pin }: { pin: Pin | null }) {
  const [pinnedDigest, setPinnedDigest] = useState(pin?.digest ?? '');
  const [tuples, setTuples] = useState(pin ? JSON.stringify(pin.tuples, null, 2) : '');
  const [localError, setLocalError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<FederationReplay | null>(null);
  const replay = useAction(replayFederation);
  const pinning = useAction(checkParity);

  const pinCurrent = async () => {
    const parity = await pinning.execute();
    if (!parity) return;
    setPinnedDigest(parity.federationDigest);
    setTuples(JSON.stringify(parity.tuples, null, 2));
  };

  const submit = async () => {
    const parsed = parseTuples(tuples);
    if (parsed.error) return setLocalError(parsed.error);
    setLocalError(null);
    setAnswer(null);
    const result = await replay.execute({ pinnedDigest: pinnedDigest.trim(), ...(parsed.value ? { pinnedTuples: parsed.value } : {}) });
    if (result) setAnswer(result);
  };

  return (
    <section className="panel">
      <h2>Federation replay</h2>
      <p className="muted">
        Runs the fan-out now and compares its federation digest with one recorded earlier; with the tuples it was made of, region by region.
      </p>
      <div className="toolbar">
        <button type="button" disabled={pinning.busy} onClick={() => void pinCurrent()}>
          Pin the current digest
        </button>
        {pinning.busy && <span className="muted">Asking every active region…</span>}
      </div>
      {pinning.error && <p className="error-note" role="alert">{pinning.error.human}</p>}
      <Form label="Federation replay" onSubmit={() => void submit()} busy={replay.busy} busyLabel="Replaying over every active region…" error={replay.error} submitLabel="Replay against the pinned digest">
        <Field label="Pinned federation digest" hint="64 hexadecimal characters: a parity check's federation digest.">
          <input value={pinnedDigest} onChange={(e) => setPinnedDigest(e.target.value)} required pattern="[0-9a-f]{64}" spellCheck={false} />
        </Field>
        <Field label="Pinned tuples (optional JSON)" hint="The tuples of that check, to compare region by region.">
          <textarea value={tuples} onChange={(e) => setTuples(e.target.value)} rows={5} spellCheck={false} />
        </Field>
        {localError && (
          <p className="error-note" role="alert">
            {localError}
          </p>
        )}
      </Form>
      {answer && <ReplayAnswer replay={answer} />}
    </section>
  );
}
