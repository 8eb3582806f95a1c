import { useState } from 'react';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { Attestations } from './shared/Attestations';
import { RegisterKeyForm, SigningKeys } from './shared/SigningKeys';
import { SigningPolicy } from './shared/SigningPolicy';
import { ToolsetPicker, useKnownToolsets } from './shared/toolsets';
import './shared/empire.css';

/** Who may sign a toolset's events (keys, signed-only policy) and what the ingest decided for each. */
export default function Provenance() {
  const { get } = useUrlState();
  const known = useKnownToolsets();
  const toolset = get('toolset');
  // A registered or retired key changes the list and the policy's key count.
  const [keysChanged, setKeysChanged] = useState(0);
  const keysChange = () => setKeysChanged((n) => n + 1);
  return (
    <>
      <div className="page-head">
        <h1>Provenance{toolset ? ` of ${toolset}` : ''}</h1>
        <ToolsetPicker toolset={toolset} known={known} allowNone />
      </div>
      {toolset ? (
        <SigningPolicy key={toolset} toolset={toolset} keysChanged={keysChanged} />
      ) : (
        <section className="panel">
          <h2>Signing policy</h2>
          <p className="empty">Pick a toolset above to see and change whether it must sign its events.</p>
        </section>
      )}
      <SigningKeys key={`k/${toolset}`} toolset={toolset} keysChanged={keysChanged} onRetired={keysChange} />
      <Can scope="write:alerts">
        <RegisterKeyForm key={`r/${toolset}`} toolset={toolset} onRegistered={keysChange} />
      </Can>
      <Attestations key={`a/${toolset}`} toolset={toolset} />
    </>
  );
}
