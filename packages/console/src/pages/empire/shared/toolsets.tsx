import type { ReactNode } from 'react';
import { api, unwrap } from '../../../api/client';
import { useQuery } from '../../../app/useQuery';
import { useUrlState } from '../../../app/urlState';
import { useSession } from '../../../auth/session';
import { Busy } from '../../../components';
import { useSyncedText } from './useSyncedText';

/** Toolsets exist by sending events; the overview names every one the operator reaches. */
export function useKnownToolsets(): string[] {
  return useToolsetList().known;
}

function useToolsetList(): { known: string[]; settled: boolean } {
  // An operator without read:empire (the alerts page needs only read:alerts) types the name instead.
  const allowed = useSession().can('read:empire');
  const state = useQuery(() => unwrap(api.GET('/api/observatory/v1/empire/overview')), [], { enabled: allowed });
  return { known: state.data?.toolsets.map((t) => t.toolset) ?? [], settled: !allowed || state.data !== null || state.error !== null };
}

/**
 * The toolset a page shows: `?toolset=` when given, else the first toolset that sent events, else
 * none. `choosing` while the list that picks the first one is still on its way.
 */
export function useToolsetChoice(): { toolset: string; known: string[]; choosing: boolean } {
  const { get } = useUrlState();
  const { known, settled } = useToolsetList();
  const chosen = get('toolset');
  return { toolset: chosen || (known[0] ?? ''), known, choosing: chosen === '' && !settled };
}

/**
 * Picks the toolset (`?toolset=`): the known ones are suggested, any other name can be typed (a
 * toolset with alert rules or keys but no events yet).
 */
export function ToolsetPicker({ toolset, known, allowNone = false }: { toolset: string; known: readonly string[]; allowNone?: boolean }) {
  const { set } = useUrlState();
  const [text, setText] = useSyncedText(toolset);
  return (
    <form
      className="toolbar"
      aria-label="Choose a toolset"
      onSubmit={(e) => {
        e.preventDefault();
        const name = text.trim();
        if (name !== '' || allowNone) set({ toolset: name || null });
      }}
    >
      <label className="field inline">
        <span className="sr-only">Toolset</span>
        <input aria-label="Toolset" list="empire-known-toolsets" value={text} placeholder="toolset name" onChange={(e) => setText(e.target.value)} size={18} />
      </label>
      <datalist id="empire-known-toolsets">
        {known.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      <button type="submit">Show</button>
    </form>
  );
}

/**
 * What a per-toolset page shows before it has a toolset: progress while the list that picks the
 * first one loads, `none` when there is no toolset to show; the page itself once there is one.
 */
export function ToolsetGate({ toolset, choosing, none, children }: { toolset: string; choosing: boolean; none: string; children: ReactNode }) {
  if (choosing) {
    return (
      <section className="panel" style={{ minHeight: 120 }}>
        <Busy label="Finding the toolsets…" />
      </section>
    );
  }
  if (toolset === '') {
    return (
      <section className="panel">
        <p className="empty">{none}</p>
      </section>
    );
  }
  return <>{children}</>;
}
