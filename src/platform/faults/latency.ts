import type { LatencyFaults } from './index.ts';

/** The longest path prefix a latency injection may name. */
export const LATENCY_PREFIX_MAX_LENGTH = 256;

interface Injection {
  target: string;
  ms: number;
  /** A path prefix (starts with `/`) rather than an endpoint id. */
  prefix: boolean;
}

/**
 * Latency injections held by this process. The HTTP server asks `delayFor` on every request, so
 * with nothing held it answers 0 before looking at the request at all: the lever costs nothing
 * while no experiment pulls it.
 *
 * `endpointIds` is read when a target is checked, not when this is built: the registry is
 * assembled after the faults are (the endpoints list is late-bound in the composition root).
 */
export function createLatencyFaults(endpointIds: () => readonly string[]): LatencyFaults {
  const held = new Map<string, Injection>();

  function isTarget(target: string): boolean {
    if (target.startsWith('/')) {
      // A prefix is matched against the path without its query, so `?` or `#` could never match;
      // nor could whitespace, which a request line cannot carry.
      return target.length <= LATENCY_PREFIX_MAX_LENGTH && !/[?#\s]/.test(target);
    }
    return endpointIds().includes(target);
  }

  return {
    add(holder, target, ms) {
      if (!isTarget(target)) throw new Error(`${target} is neither a registered endpoint id nor a path prefix starting with / (at most ${LATENCY_PREFIX_MAX_LENGTH} characters)`);
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`a latency of ${ms} ms cannot be injected`);
      held.set(holder, { target, ms: Math.round(ms), prefix: target.startsWith('/') });
    },
    remove(holder) {
      held.delete(holder);
    },
    delayFor(request) {
      if (held.size === 0) return 0;
      const { endpointId, url } = request;
      const query = url.indexOf('?');
      const path = query < 0 ? url : url.slice(0, query);
      let delay = 0;
      for (const injection of held.values()) {
        const matches = injection.prefix ? path.startsWith(injection.target) : injection.target === endpointId;
        if (matches && injection.ms > delay) delay = injection.ms;
      }
      return delay;
    },
    isTarget,
  };
}
