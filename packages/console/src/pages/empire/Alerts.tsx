import { useState } from 'react';
import { useUrlState } from '../../app/urlState';
import { Can } from '../../auth/session';
import { AlertDeliveries } from './shared/AlertDeliveries';
import { AlertRuleForm } from './shared/AlertRuleForm';
import { AlertRules } from './shared/AlertRules';
import { TenantFilter } from './shared/TenantFilter';
import { ToolsetGate, ToolsetPicker, useToolsetChoice } from './shared/toolsets';

/** A toolset's alert rules (change, silence, create) and what their notifications became. */
export default function Alerts() {
  const { get } = useUrlState();
  const { toolset, known, choosing } = useToolsetChoice();
  const tenant = get('tenant');
  const [created, setCreated] = useState(0);
  return (
    <>
      <div className="page-head">
        <h1>Alert rules{toolset ? ` of ${toolset}` : ''}</h1>
        <div className="toolbar">
          <ToolsetPicker toolset={toolset} known={known} />
          <TenantFilter tenant={tenant} suggestions={[]} />
        </div>
      </div>
      <ToolsetGate toolset={toolset} choosing={choosing} none="Type a toolset's name above to see and make its alert rules.">
        <AlertRules key={`${toolset}/${tenant}`} toolset={toolset} tenant={tenant} created={created} />
        <Can scope="write:alerts">
          <AlertRuleForm key={toolset} toolset={toolset} tenant={tenant} onCreated={() => setCreated((n) => n + 1)} />
        </Can>
        <AlertDeliveries key={`d/${toolset}/${tenant}`} toolset={toolset} tenant={tenant} />
      </ToolsetGate>
    </>
  );
}
