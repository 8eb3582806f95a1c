import { useState } from 'react';
import { useAction } from '../../app/useQuery';
import { Busy, DataTable, ErrorNote, Time } from '../../components';
import { bytes } from '../backups/shared/api';
import { type Bundle, createBundle } from './shared/api';
import { sameOrigin } from './shared/evidence';
import { FrameworkPicker, useFrameworkParam } from './shared/FrameworkPicker';
import './shared/compliance.css';

/** A download through a bundle's signed link, on the console's own origin (the service serves both). */
function Download({ url, name }: { url: string; name: string }) {
  return (
    <a href={sameOrigin(url)} download={name} title={url} aria-label={`Download ${name}`}>
      Download
    </a>
  );
}

function BundleResult({ bundle }: { bundle: Bundle }) {
  const expiresAt = bundle.artifacts[0]?.expiresAt ?? null;
  return (
    <section className="panel" aria-label={`Bundle ${bundle.bundleId}`}>
      <h2>
        Bundle of <code>{bundle.framework}</code>, <Time at={bundle.createdAt} />
      </h2>
      <dl className="facts">
        <dt>Bundle</dt>
        <dd>
          <code>{bundle.bundleId}</code>
        </dd>
        <dt>Controls</dt>
        <dd>{bundle.controlCount}</dd>
        <dt>Stored in</dt>
        <dd>{bundle.storage === 's3' ? 'the S3 bucket' : 'the local backup directory'}</dd>
        <dt>Links expire</dt>
        <dd>
          <Time at={expiresAt} /> <span className="muted">(anyone holding a link may download its file until then, without a credential)</span>
        </dd>
        {bundle.expiredBundles > 0 && (
          <>
            <dt>Older bundles deleted</dt>
            <dd>{bundle.expiredBundles}</dd>
          </>
        )}
      </dl>
      <DataTable
        caption="Files of the bundle, in manifest order"
        rows={bundle.artifacts}
        rowKey={(a) => a.name}
        columns={[
          { key: 'name', label: 'File', render: (a) => <code>{a.name}</code> },
          { key: 'kind', label: 'Kind', render: (a) => `${a.kind} (${a.contentType})` },
          { key: 'bytes', label: 'Size', align: 'right', render: (a) => <span title={`${a.bytes} bytes`}>{bytes(a.bytes)}</span> },
          { key: 'sha256', label: 'SHA-256', render: (a) => <code className="hash">{a.sha256}</code> },
          { key: 'url', label: 'Download', render: (a) => <Download url={a.url} name={a.name} /> },
        ]}
      />
      <h3>Manifest</h3>
      <p>
        SHA-256 <code className="hash" data-testid="manifest-sha256">{bundle.manifestSha256}</code> · <Download url={bundle.manifestUrl} name="manifest.txt" />
      </p>
      <pre data-testid="manifest">{bundle.manifestText}</pre>
    </section>
  );
}

/** Makes an evidence bundle of a framework as it stands now and lists its files with their digests and signed download links. */
export default function Bundles() {
  const framework = useFrameworkParam();
  const make = useAction(createBundle);
  const [bundle, setBundle] = useState<Bundle | null>(null);

  const onMake = async () => {
    setBundle(null);
    const answer = await make.execute(framework);
    if (answer) setBundle(answer);
  };

  return (
    <>
      <div className="page-head">
        <h1>Evidence bundles</h1>
        <div className="toolbar">
          <FrameworkPicker />
          <button type="button" className="primary" disabled={make.busy} onClick={() => void onMake()}>
            Make a bundle of {framework}
          </button>
        </div>
      </div>
      <p className="muted">
        A bundle is the framework as it stands when it is made: a JSON snapshot, a CSV with one row per control and a PDF summary, each with its SHA-256,
        and a manifest listing them. Its download links last 15 minutes; make a new bundle for fresh ones.
      </p>
      {make.busy && <Busy label={`Making a bundle of ${framework}: reading every control, writing the JSON, CSV and PDF and storing them…`} />}
      {make.error && <ErrorNote error={make.error} />}
      {bundle ? (
        <BundleResult bundle={bundle} />
      ) : (
        !make.busy && (
          <section className="panel">
            <p className="empty">No bundle made on this page yet: pick a framework and make one. Earlier bundles stay in storage but are not listed here; a bundle's links are given when it is made.</p>
          </section>
        )
      )}
    </>
  );
}
