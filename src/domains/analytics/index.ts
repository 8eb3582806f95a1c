/** What other domains may use of analytics (docs/analytics/README.md): the trust snapshot reads the warehouse rollup's state. */
export type { AnalyticsDomain } from './wiring.ts';
