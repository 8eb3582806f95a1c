import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AGENT_API_SEARCH_FLAG, createRuntimeFlags, OUTBOUND_DISPATCH_FLAG, RUNTIME_FLAGS } from './flags.ts';

describe('runtime flags', () => {
  it('are exactly agent-api-search and outbound-dispatch, each on by default and described', () => {
    expect(RUNTIME_FLAGS.map((f) => [f.name, f.default])).toEqual([
      [AGENT_API_SEARCH_FLAG, true],
      [OUTBOUND_DISPATCH_FLAG, true],
    ]);
    for (const flag of RUNTIME_FLAGS) expect(flag.description.length).toBeGreaterThan(40);
    const flags = createRuntimeFlags();
    expect(flags.definitions()).toBe(RUNTIME_FLAGS);
    expect(flags.enabled('agent-api-search')).toBe(true);
    expect(flags.enabled('outbound-dispatch')).toBe(true);
  });

  it('throws for a flag name it does not know, reading or overriding', () => {
    const flags = createRuntimeFlags();
    expect(() => flags.enabled('no-such-flag')).toThrow(/no runtime flag named no-such-flag/);
    expect(() => flags.override('run-1', 'no-such-flag', false)).toThrow(/no runtime flag named/);
  });

  it('holds an override per holder until released, the latest holder of a flag winning', () => {
    const flags = createRuntimeFlags();
    flags.override('run-1', 'agent-api-search', false);
    expect(flags.enabled('agent-api-search')).toBe(false);
    expect(flags.enabled('outbound-dispatch')).toBe(true);
    flags.override('run-2', 'agent-api-search', true);
    expect(flags.enabled('agent-api-search')).toBe(true);
    flags.release('run-2');
    expect(flags.enabled('agent-api-search')).toBe(false);
    flags.release('run-1');
    expect(flags.enabled('agent-api-search')).toBe(true);
    flags.release('run-1');
    expect(flags.enabled('agent-api-search')).toBe(true);
  });

  it('each instance holds its own overrides', () => {
    const a = createRuntimeFlags();
    const b = createRuntimeFlags();
    a.override('run-1', 'outbound-dispatch', false);
    expect(a.enabled('outbound-dispatch')).toBe(false);
    expect(b.enabled('outbound-dispatch')).toBe(true);
  });

  it('are the rows of the table in docs/chaos/README.md, "Runtime flags"', () => {
    const doc = readFileSync(new URL('../../../docs/chaos/README.md', import.meta.url), 'utf8');
    const section = doc.split('## Runtime flags')[1]!.split('\n## ')[0]!;
    const rows = [...section.matchAll(/^\| `([a-z0-9-]+)` \| (on|off) \|/gm)].map((m) => [m[1], m[2] === 'on']);
    expect(rows).toEqual(RUNTIME_FLAGS.map((f) => [f.name, f.default]));
  });
});
