import type { BodyOf } from '../../settings/shared/api-types';

export type Category = BodyOf<'upsertAgentTopics'>['topics'][number]['category'];

/** Typed from the schema: a category the service adds breaks the build here until it is named. */
const LABELS: Record<Category, string> = { tech: 'Tech', finance: 'Finance', travel: 'Travel', health: 'Health', facts: 'Facts' };

export const CATEGORIES = Object.entries(LABELS).map(([value, label]) => ({ value: value as Category, label }));

export function isCategory(value: string): value is Category {
  return value in LABELS;
}
