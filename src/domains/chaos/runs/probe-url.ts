import type { Endpoint } from '../../../platform/http/registry.ts';

/**
 * The URL a synthetic-latency probe asks for its target: an endpoint id's path with the path
 * parameters of its documented example filled in, or a path prefix as it is (a prefix that is no
 * route answers 404, but through the same hooks, so the delay still shows).
 */
export function probeUrlFor(endpoints: readonly Endpoint[], target: string): string {
  const endpoint = endpoints.find((e) => e.id === target);
  if (!endpoint) return target;
  const examples = (endpoint.params as { examples?: Record<string, unknown>[] } | undefined)?.examples?.[0] ?? {};
  return endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(examples[name] ?? name)));
}
