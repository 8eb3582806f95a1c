/**
 * Why a cross-toolset row is what it is, from a fixed vocabulary (docs/backups/README.md, "The view").
 * A peer's own words (its errorText, an error body, a connection error naming addresses) never
 * reach the view: they are written to the log, and the row carries one of these reasons and its
 * fixed sentence. A peer can choose which reason it earns, never the text an operator reads.
 */

export type RowOutcome = 'ok' | 'drift' | 'error' | 'skipped';

export const PEER_REASONS = {
  'not-verified-yet': {
    outcome: 'skipped',
    text: 'Not verified yet: POST {v1}/backups/cross-toolset/verify asks it, and the backup-cross-toolset-verify job does every day.',
  },
  'bridge-token-not-set': { outcome: 'skipped', text: 'OBSERVATORY_BRIDGE_TOKEN is not set on this deployment, so the toolset was not asked.' },
  'host-not-allowed': { outcome: 'error', text: 'Not asked: the verify URL\'s host is not in OBSERVATORY_BRIDGE_PEER_HOSTS, the hosts the bridge token may be sent to.' },
  'not-bridge-endpoint': {
    outcome: 'error',
    text: 'Not asked: the verify URL is not a bridge verify endpoint (…/api/observatory/v1/backups/bridge/verify, without query or fragment); register it again.',
  },
  'outbound-refused': { outcome: 'error', text: 'Not asked: the outbound policy refuses the verify URL or the address its host resolves to.' },
  unreachable: { outcome: 'error', text: 'The toolset could not be reached (name resolution, connection refused or reset, or the connection closed early).' },
  timeout: { outcome: 'error', text: 'The toolset did not answer within OBSERVATORY_CROSS_TOOLSET_TIMEOUT_MS.' },
  'bridge-token-refused': { outcome: 'error', text: 'The toolset refused this deployment\'s bridge token (HTTP 401 or 403).' },
  'peer-rate-limited': { outcome: 'skipped', text: 'The toolset refused: it verified its backups for a bridge call less than its minimum interval ago (HTTP 429).' },
  'peer-busy': { outcome: 'skipped', text: 'The toolset was busy with another backup snapshot or restore verification (HTTP 409).' },
  'unexpected-status': { outcome: 'error', text: 'The toolset answered with an HTTP status other than 200.' },
  'bad-answer': { outcome: 'error', text: 'The toolset\'s answer is not a verify answer (not JSON, too large, or without a valid outcome and times).' },
  'peer-reported-drift': { outcome: 'drift', text: 'The toolset reported drift: its newest snapshot restored, but not to what its record says.' },
  'peer-reported-error': { outcome: 'error', text: 'The toolset reported that its newest snapshot could not be read or restored.' },
  'peer-reported-skipped': { outcome: 'skipped', text: 'The toolset reported that it has no snapshot to verify yet.' },
} as const satisfies Record<string, { outcome: RowOutcome; text: string }>;

export type PeerReason = keyof typeof PEER_REASONS;

export const PEER_REASON_NAMES = Object.keys(PEER_REASONS) as PeerReason[];

/** The sentence a row shows for `reason`; with `httpStatus`, `unexpected-status` names the status (a number, not the peer's words). */
export function reasonText(reason: PeerReason, httpStatus: number | null = null): string {
  if (reason === 'unexpected-status' && httpStatus !== null) return `The toolset answered HTTP ${httpStatus}, not 200.`;
  return PEER_REASONS[reason].text;
}
