/** Scopes exactly as spec C lists them, plus `write:events` (spec D4). */
export const SCOPES = [
  'read:dashboard',
  'read:events',
  'read:tenants',
  'read:alerts',
  'write:alerts',
  'read:clusters',
  'read:intel',
  'write:tokens',
  'write:tenants',
  'write:test-event',
  'read:empire',
  'write:events',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
