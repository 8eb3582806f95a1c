import { useCallback } from 'react';
import { api, unwrap } from '../../../api/client';
import { useAction, useQuery } from '../../../app/useQuery';
import { Can } from '../../../auth/session';
import { Busy, ErrorNote, Panel, Time } from '../../../components';
import { Badge } from './badges';

/** Whether the ingest refuses the toolset's unsigned events, where that comes from, and the switch. */
export function SigningPolicy({ toolset, keysChanged }: { toolset: string; keysChanged: number }) {
  // The policy counts the active keys: asked again when one is registered or retired.
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/provenance/toolsets/{toolset}/policy', { params: { path: { toolset } } })), [toolset, keysChanged]);
  const change = useAction(
    useCallback(
      (requireSigned: boolean) => unwrap(api.POST('/api/observatory/v1/provenance/toolsets/{toolset}/policy', { params: { path: { toolset } }, body: { requireSigned } })),
      [toolset],
    ),
  );
  const set = (requireSigned: boolean) => void change.execute(requireSigned).then((r) => r && state.reload());
  return (
    <Panel title={`Signing policy of ${toolset}`} state={state} minHeight={140}>
      {(p) => (
        <>
          <p>
            {p.requireSigned ? <Badge tone="ok">signed only</Badge> : <Badge tone="warn">unsigned admitted (compatibility)</Badge>}{' '}
            {p.source === 'global'
              ? p.requireSigned
                ? 'Set for every toolset by OBSERVATORY_REQUIRE_SIGNED_EVENTS=1; no toolset can relax it.'
                : 'The global setting: this toolset has no policy of its own.'
              : 'The toolset’s own policy.'}
          </p>
          <dl className="facts">
            <dt>Active keys</dt>
            <dd>{p.activeKeys}</dd>
            <dt>Own setting</dt>
            <dd>{p.toolsetRequireSigned === null ? 'none' : p.toolsetRequireSigned ? 'signed only' : 'unsigned admitted'}</dd>
            <dt>Changed</dt>
            <dd>
              <Time at={p.updatedAt} />
              {p.updatedBy ? ` by ${p.updatedBy}` : ''}
            </dd>
          </dl>
          {p.activeKeys === 0 && !p.requireSigned && <p className="muted">Register a key before making it signed-only, or every event it sends will be refused.</p>}
          <Can scope="write:alerts">
            <div className="toolbar" style={{ marginTop: '0.5rem' }}>
              {p.toolsetRequireSigned === true ? (
                <button type="button" disabled={change.busy} onClick={() => set(false)}>
                  Admit unsigned events again
                </button>
              ) : (
                <button type="button" className="primary" disabled={change.busy} onClick={() => set(true)}>
                  Make {toolset} signed-only
                </button>
              )}
              {change.busy && <Busy label="Saving…" />}
            </div>
          </Can>
          {change.error && <ErrorNote error={change.error} />}
        </>
      )}
    </Panel>
  );
}
