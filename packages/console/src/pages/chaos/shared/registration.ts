import { CHAOS_KINDS, type ChaosKind, type ChaosSeverity, type Registration, SEVERITIES } from './api';

/** The register form's fields as typed: every one a string, blank meaning "the service's default". */
export interface RegistrationDraft {
  slug: string;
  kind: string;
  target: string;
  description: string;
  recoverySloSec: string;
  cooldownMinutes: string;
  severity: string;
}

export const EMPTY_DRAFT: RegistrationDraft = { slug: '', kind: CHAOS_KINDS[0], target: '', description: '', recoverySloSec: '', cooldownMinutes: '', severity: '' };

/**
 * The body sent: text trimmed, blank optional fields left out so the service applies the kind's
 * defaults, numbers sent as numbers. Nothing else is checked here: the service judges every value
 * (a slug taken, a target the kind does not know, an SLO past the kind's cap) and its 400 refusal
 * says what is wrong, shown under the form.
 */
export function registrationBody(draft: RegistrationDraft): Registration {
  const number = (v: string) => (v.trim() === '' ? undefined : Number(v.trim()));
  const recoverySloSec = number(draft.recoverySloSec);
  const cooldownMinutes = number(draft.cooldownMinutes);
  const severity = (SEVERITIES as readonly string[]).includes(draft.severity) ? (draft.severity as ChaosSeverity) : undefined;
  return {
    slug: draft.slug.trim(),
    kind: draft.kind as ChaosKind,
    target: draft.target.trim(),
    ...(draft.description.trim() ? { description: draft.description.trim() } : {}),
    ...(recoverySloSec !== undefined && Number.isFinite(recoverySloSec) ? { recoverySloSec } : {}),
    ...(cooldownMinutes !== undefined && Number.isFinite(cooldownMinutes) ? { cooldownMinutes } : {}),
    ...(severity ? { severity } : {}),
  };
}
