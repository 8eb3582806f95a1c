/**
 * What other domains may use of identity: the service behind operators, tokens and sessions
 * (compliance reads token hygiene, analytics the tokens' activity) and the token view the operator
 * console prints.
 */
export type { IdentityDomain } from './wiring.ts';
export type { PasskeyService } from './passkeys/service.ts';
export type { IdentityService, OperatorView, TokenView } from './tokens/service.ts';
