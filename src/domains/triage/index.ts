/**
 * What other domains may use of triage (docs/triage/README.md). Compliance's narrator runs as a triage
 * agent: it reads the agent registry, the output checks and the run service through here, and
 * draws on the model budget. Analytics reads postmortems (cohort incident-postmortem-7d) and the
 * facts triage lends the warehouse.
 */
export type { TriageDomain } from './wiring.ts';
export { COMPLIANCE_NARRATOR_PARAMS_1_0_0, narrateCompliance } from './agents/compliance-narrator.ts';
export { NarrationSchema, parseNarration } from './agents/output.ts';
export { AGENTS, definitionOf, latestVersionOf } from './agents/registry.ts';
export type { ComplianceSnapshot, NarratorControl } from './agents/types.ts';
export { type TriageAnalyticsFacts, triageAnalyticsFacts } from './analytics/service.ts';
export { EMPIRE_BUCKET } from './budget/service.ts';
export type { PostmortemService } from './postmortems/service.ts';
export type { ProposalService } from './proposals/service.ts';
export { type AgentStates, type BudgetGate, type RunService, STUB_RUN_ID } from './runs/service.ts';
export { MODEL_CALL } from './schemas.ts';
