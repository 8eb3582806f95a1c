import { SCOPE_DESCRIPTIONS, SCOPE_NAMES, type ScopeName } from './scopes';
import './settings.css';

/**
 * The scopes as labelled checkboxes. Scopes outside `offered` (what the caller, or the operator a
 * token is for, holds) are shown disabled with the reason, since the service would refuse them,
 * or left out with `onlyOffered`.
 */
export function ScopeChecklist({
  legend,
  value,
  onChange,
  offered,
  unofferedReason,
  onlyOffered = false,
}: {
  legend: string;
  value: readonly ScopeName[];
  onChange: (next: ScopeName[]) => void;
  offered: readonly string[];
  unofferedReason: string;
  onlyOffered?: boolean;
}) {
  const toggle = (scope: ScopeName, on: boolean) => onChange(on ? SCOPE_NAMES.filter((s) => s === scope || value.includes(s)) : value.filter((s) => s !== scope));
  return (
    <fieldset className="scope-list">
      <legend className="field-label">{legend}</legend>
      {SCOPE_NAMES.filter((scope) => !onlyOffered || offered.includes(scope)).map((scope) => {
        const allowed = offered.includes(scope);
        return (
          <label key={scope} className={allowed ? 'check' : 'check muted'}>
            <input type="checkbox" name="scopes" value={scope} checked={value.includes(scope)} disabled={!allowed} onChange={(e) => toggle(scope, e.target.checked)} />
            <span>
              <code>{scope}</code>
              <span className="muted">
                {' '}
                — {SCOPE_DESCRIPTIONS[scope]}
                {!allowed && ` (${unofferedReason})`}
              </span>
            </span>
          </label>
        );
      })}
    </fieldset>
  );
}
