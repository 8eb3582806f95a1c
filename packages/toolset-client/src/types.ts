import type { DeliveryProblem, SenderStats } from '@observatory/sender';
import type { IngestResult } from './api.ts';

/** The client counts what the honeypot sender counts, with the same meanings (packages/sender/README.md, "Counters"). */
export type ToolsetClientStats = SenderStats;

export type { DeliveryProblem, IngestResult };
