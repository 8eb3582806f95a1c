import type { Answer } from '../../settings/shared/api-types';

export type Manifest = Answer<'getManifest'>;
export type ManifestEntry = Manifest['endpoints'][number];

/** The request examples a schema carries (`examples` on the params, query or body schema). */
export function examplesOf(schema: unknown): unknown[] {
  if (schema === null || typeof schema !== 'object' || !('examples' in schema)) return [];
  const { examples } = schema;
  return Array.isArray(examples) ? examples : [];
}

/** Whether an entry matches every word of the search, in any of its named fields. */
export function matches(entry: ManifestEntry, search: string): boolean {
  const words = search.toLowerCase().split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return true;
  const haystack = [entry.id, entry.title, entry.method, entry.path, entry.scope ?? 'no scope', entry.tag, entry.description, entry.uiPath ?? ''].join(' ').toLowerCase();
  return words.every((w) => haystack.includes(w));
}
