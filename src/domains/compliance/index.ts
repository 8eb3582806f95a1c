/** What other domains may use of compliance: the posture and framework reads. */
export type { ComplianceReads, ControlView, FrameworkView, PostureView } from './frameworks/views.ts';
export type { ComplianceDomain } from './wiring.ts';
