import { type Static, Type } from '@sinclair/typebox';
import type { Config } from '../config.ts';
import { bareHost, checkOutboundUrl, type OutboundPolicy, OutboundRefused } from './safe-fetch.ts';

/**
 * Where a fired alert is delivered. Honeypot and empire rules share this one union (spec C,
 * Events 7). The schemas carry no `format` keyword, so they check the same under Fastify's Ajv and
 * TypeBox's `Value.Check`; `validateDestinations` does the checks a schema cannot (URL parsing,
 * address policy, integration configured).
 */

const outboundUrl = (description: string) =>
  Type.String({ minLength: 8, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description });

export const SlackDestination = Type.Object(
  {
    kind: Type.Literal('slack'),
    url: outboundUrl('A chat-service incoming webhook URL (Slack format: a JSON body `{"text": …}`).'),
  },
  { additionalProperties: false },
);

export const WebhookDestination = Type.Object(
  {
    kind: Type.Literal('webhook'),
    url: outboundUrl('The URL that receives the signed JSON notification.'),
    secret: Type.String({
      minLength: 16,
      maxLength: 256,
      description: 'Signs every delivery (`X-Observatory-Signature`); never returned by reads.',
    }),
  },
  { additionalProperties: false },
);

export const MetricsDestination = Type.Object(
  { kind: Type.Literal('metrics') },
  {
    additionalProperties: false,
    description: 'The metrics forwarder configured by OBSERVATORY_METRICS_FORWARD_URL (and _TOKEN).',
  },
);

export const CiDispatchDestination = Type.Object(
  {
    kind: Type.Literal('ci_dispatch'),
    eventType: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        pattern: '^[A-Za-z0-9_.:-]+$',
        description: 'The repository_dispatch `event_type`; default `observatory-alert`.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description: 'A CI workflow dispatch to OBSERVATORY_CI_DISPATCH_URL with OBSERVATORY_CI_DISPATCH_TOKEN.',
  },
);

export const Destination = Type.Union([SlackDestination, WebhookDestination, MetricsDestination, CiDispatchDestination]);
export type Destination = Static<typeof Destination>;

export const Destinations = Type.Array(Destination, { minItems: 1, maxItems: 10 });
export type Destinations = Static<typeof Destinations>;

/** A destination as listings show it: webhook secrets dropped, URL paths and queries hidden. */
export const RedactedDestination = Type.Union([
  Type.Object({ kind: Type.Literal('slack'), url: Type.String({ description: 'Origin only, e.g. `https://hooks.slack.com/…`.' }) }),
  Type.Object({ kind: Type.Literal('webhook'), url: Type.String({ description: 'Origin only.' }), secretSet: Type.Literal(true) }),
  Type.Object({ kind: Type.Literal('metrics') }),
  Type.Object({ kind: Type.Literal('ci_dispatch'), eventType: Type.String() }),
]);
export type RedactedDestination = Static<typeof RedactedDestination>;

export const DEFAULT_CI_EVENT_TYPE = 'observatory-alert';

/** `https://hooks.slack.com/services/T/B/x?y` → `https://hooks.slack.com/…`. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    const hidden = url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '';
    return `${url.protocol}//${url.host}${hidden ? '/…' : ''}`;
  } catch {
    return '…';
  }
}

export function redactDestination(d: Destination): RedactedDestination {
  switch (d.kind) {
    case 'slack':
      return { kind: 'slack', url: redactUrl(d.url) };
    case 'webhook':
      return { kind: 'webhook', url: redactUrl(d.url), secretSet: true };
    case 'metrics':
      return { kind: 'metrics' };
    case 'ci_dispatch':
      return { kind: 'ci_dispatch', eventType: d.eventType ?? DEFAULT_CI_EVENT_TYPE };
  }
}

/** The host a destination talks to, for logs and audit rows (never the path, which may be a secret). */
export function destinationHost(d: Destination, integrations: Config['integrations']): string | null {
  const raw =
    d.kind === 'slack' || d.kind === 'webhook'
      ? d.url
      : d.kind === 'metrics'
        ? integrations.metricsForwardUrl
        : integrations.ciDispatchUrl;
  if (raw === null) return null;
  try {
    return bareHost(new URL(raw));
  } catch {
    return null;
  }
}

/** Why the URL-only checks refuse `url` under `policy`, or null. */
function urlRefusal(url: string, policy: OutboundPolicy): string | null {
  try {
    checkOutboundUrl(url, policy);
    return null;
  } catch (error) {
    if (error instanceof OutboundRefused) return error.reason;
    throw error;
  }
}

/**
 * Why a list of (schema-valid) destinations cannot be used, or null when every one can: a URL that
 * does not parse, is not http(s), carries credentials, uses a port outside
 * OBSERVATORY_OUTBOUND_ALLOWED_PORTS, or names a loopback/private literal address or a `localhost`
 * name while private outbound is not allowed; an integration that is not configured, or whose
 * configured URL fails the same checks. Rule creation answers 400 with this text. Hostnames are
 * not resolved here; the address and port policy is enforced again, with DNS, at every delivery.
 */
export function validateDestinations(
  destinations: readonly Destination[],
  config: Pick<Config, 'outbound' | 'integrations'>,
): string | null {
  if (destinations.length === 0) return 'at least one destination is required';
  if (destinations.length > 10) return 'at most 10 destinations are allowed';
  for (const [i, d] of destinations.entries()) {
    const problem = destinationProblem(d, config);
    if (problem !== null) return `destinations[${i}] (${d.kind}): ${problem}`;
  }
  return null;
}

function destinationProblem(d: Destination, config: Pick<Config, 'outbound' | 'integrations'>): string | null {
  const { integrations } = config;
  switch (d.kind) {
    case 'slack':
      return urlRefusal(d.url, config.outbound);
    case 'webhook':
      return urlRefusal(d.url, config.outbound) ?? (d.secret.length < 16 || d.secret.length > 256 ? 'the secret must be 16 to 256 characters long' : null);
    case 'metrics':
      if (integrations.metricsForwardUrl === null) return 'the metrics forwarder is not configured (set OBSERVATORY_METRICS_FORWARD_URL)';
      return configuredUrlRefusal('OBSERVATORY_METRICS_FORWARD_URL', integrations.metricsForwardUrl, config.outbound);
    case 'ci_dispatch':
      if (integrations.ciDispatchUrl === null || integrations.ciDispatchToken === null) {
        return 'CI dispatch is not configured (set OBSERVATORY_CI_DISPATCH_URL and OBSERVATORY_CI_DISPATCH_TOKEN)';
      }
      return configuredUrlRefusal('OBSERVATORY_CI_DISPATCH_URL', integrations.ciDispatchUrl, config.outbound);
  }
}

/**
 * An operator-configured URL goes through the same policy at delivery; refusing the rule now says
 * so at once instead of as a silently failed delivery later.
 */
function configuredUrlRefusal(variable: string, url: string, policy: OutboundPolicy): string | null {
  const refused = urlRefusal(url, policy);
  return refused === null ? null : `${variable} is refused: ${refused}`;
}
