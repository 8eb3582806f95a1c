import type { AlertRule, Predicate, PredicateKind } from './types';

export const PREDICATE_KINDS: Record<PredicateKind, string> = {
  liar_rate_above: 'Liar rate above a share',
  event_count_above: 'Event count above a number',
  new_fingerprint_cluster: 'A new fingerprint appears',
  tarpit_triggered: 'A tarpit is opened',
};

/** A rule's predicate as a sentence. */
export function describePredicate(p: Predicate): string {
  switch (p.kind) {
    case 'liar_rate_above':
      const min = p.minEvents ?? 20;
      return `LIAR share above ${p.pct}% over ${p.windowMinutes} min (at least ${min} ${min === 1 ? 'event' : 'events'})`;
    case 'event_count_above':
      return `more than ${p.count.toLocaleString()} ${p.uaClass ? `${p.uaClass} ` : ''}events in ${p.windowMinutes} min`;
    case 'new_fingerprint_cluster':
      return `a fingerprint reaches its ${ordinal(p.minEvents ?? 1)} event`;
    case 'tarpit_triggered':
      return 'a tarpit is opened';
  }
}

function ordinal(n: number): string {
  if (n === 1) return 'first';
  const tail = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${tail}`;
}

type Redacted = AlertRule['destinations'][number];

/** A (redacted) destination as the listing shows it. */
export function describeDestination(d: Redacted): string {
  switch (d.kind) {
    case 'slack':
      return `Slack ${d.url}`;
    case 'webhook':
      return `Webhook ${d.url} (signed)`;
    case 'metrics':
      return 'Metrics forwarder';
    case 'ci_dispatch':
      return `CI dispatch ${d.eventType}`;
  }
}

/** An ISO time as a `datetime-local` value in the browser's zone (minutes), or ''. */
export function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** A `datetime-local` value (browser zone) as ISO, or null when empty. */
export function fromLocalInput(value: string): string | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}
