import { safeEqual } from '../crypto.ts';
import type { BridgeTokens } from './index.ts';

/**
 * The bridge tokens of this process (OBSERVATORY_BRIDGE_TOKEN and OBSERVATORY_BRIDGE_TOKEN_NEXT):
 * bridge calls carrying either are accepted, and outgoing bridge calls carry the current one, or
 * the staged one while a `bridge-token-rotate-rehearsal` chaos run holds `useStaged(true)`
 * (docs/chaos/README.md). Callers read `outgoing()` at each call, so the switch reaches calls made after
 * it. With no current token, nothing is accepted (bridge calls are refused, peers are not asked),
 * as without the staged one.
 */
export function createBridgeTokens(current: string | null, next: string | null): BridgeTokens {
  const currentToken = current === '' ? null : current;
  const stagedToken = currentToken === null || next === '' ? null : next;
  let usingStaged = false;
  return {
    outgoing: () => (usingStaged ? stagedToken : currentToken),
    accepts(presented) {
      if (currentToken === null) return false;
      // Both compared, so the time taken does not tell which one matched.
      const isCurrent = safeEqual(presented, currentToken);
      const isStaged = stagedToken !== null && safeEqual(presented, stagedToken);
      return isCurrent || isStaged;
    },
    staged: () => stagedToken,
    useStaged(on) {
      if (on && stagedToken === null) {
        throw new Error('No bridge token is staged: OBSERVATORY_BRIDGE_TOKEN_NEXT (beside OBSERVATORY_BRIDGE_TOKEN) is not set.');
      }
      usingStaged = on;
    },
    usingStaged: () => usingStaged,
  };
}
