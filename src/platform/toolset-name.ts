/**
 * Toolset names (spec C, Limits): 3 to 128 characters, a letter first, then letters, digits and
 * `-`. Every domain that takes a toolset name (ingest, provenance, cost, triage budgets, backups,
 * tokens) checks it against this one rule.
 */
export const TOOLSET_PATTERN = '^[A-Za-z][A-Za-z0-9-]{2,127}$';
const TOOLSET = new RegExp(TOOLSET_PATTERN);

/** Whether `name` is a toolset name (TOOLSET_PATTERN). */
export const isToolsetName = (name: string): boolean => TOOLSET.test(name);
