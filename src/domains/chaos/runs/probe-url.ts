import type { Endpoint } from '../../../platform/http/registry.ts';

/**
 * The URL a synthetic-latency probe asks for its target: the path of the endpoint the target names
 * (by id, or the first GET endpoint under a path prefix) with the path parameters of its
 * documented example filled in. A prefix no endpoint lies under is asked as it is; it answers 404
 * undelayed, so such a run ends `partial` (its delay never showed).
 */
export function probeUrlFor(endpoints: readonly Endpoint[], target: string): string {
  const endpoint =
    endpoints.find((e) => e.id === target) ??
    (target.startsWith('/') ? endpoints.find((e) => e.method === 'GET' && e.path.startsWith(target)) : undefined);
  if (!endpoint) return target;
  const examples = (endpoint.params as { examples?: Record<string, unknown>[] } | undefined)?.examples?.[0] ?? {};
  return endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(examples[name] ?? name)));
}
