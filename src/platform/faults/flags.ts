import type { RuntimeFlagDefinition, RuntimeFlags } from './index.ts';

/** The name of each runtime flag, for the code that reads it. */
export const AGENT_API_SEARCH_FLAG = 'agent-api-search';
export const OUTBOUND_DISPATCH_FLAG = 'outbound-dispatch';

/**
 * The runtime flags (docs/chaos/README.md, "Runtime flags"): switches a feature-flag-flip experiment may
 * hold off for its window. Each has a real effect where it is read; none is configuration, and
 * nothing persists them: a restart brings every flag back to its default.
 */
export const RUNTIME_FLAGS: readonly RuntimeFlagDefinition[] = [
  {
    name: AGENT_API_SEARCH_FLAG,
    description:
      'The public topic search of the agent API (GET and POST /api/agent, POST /api/agent/batch). Off, each answers 503 `unavailable` saying the search is switched off for the moment; browsing topics, feeds and discovery documents keep answering.',
    default: true,
  },
  {
    name: OUTBOUND_DISPATCH_FLAG,
    description:
      'The outbound-dispatch job sending alert notifications. Off, its runs send nothing and leave every delivery pending (their stats say `heldByFlag`); the deliveries go out on the first run after the flag is back on.',
    default: true,
  },
];

export function createRuntimeFlags(definitions: readonly RuntimeFlagDefinition[] = RUNTIME_FLAGS): RuntimeFlags {
  const byName = new Map(definitions.map((d) => [d.name, d]));
  // holder -> the flag it holds and the value; of several holders of one flag the latest wins.
  const overrides = new Map<string, { name: string; value: boolean }>();

  function definition(name: string): RuntimeFlagDefinition {
    const found = byName.get(name);
    if (!found) throw new Error(`there is no runtime flag named ${name} (known: ${[...byName.keys()].join(', ')})`);
    return found;
  }

  return {
    definitions: () => definitions,
    enabled(name) {
      const { default: fallback } = definition(name);
      let value = fallback;
      for (const override of overrides.values()) if (override.name === name) value = override.value;
      return value;
    },
    override(holder, name, value) {
      definition(name);
      // Re-inserted, so a holder that changes its value counts as the latest.
      overrides.delete(holder);
      overrides.set(holder, { name, value });
    },
    release(holder) {
      overrides.delete(holder);
    },
  };
}
