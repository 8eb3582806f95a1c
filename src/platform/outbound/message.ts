import { hmacSha256Hex } from '../crypto.ts';

/** What a fired rule says; every destination kind renders it in its own format. */
export interface OutboundMessage {
  title: string;
  text: string;
  /** Free text chosen by the producer, e.g. `info`, `warning`, `critical`. */
  severity: string;
  /** What produced it, e.g. `honeypot-rule`, `empire-rule`. */
  source: string;
  sourceId: string;
  /** ISO 8601. */
  firedAt: string;
  details: Record<string, unknown>;
}

export const WEBHOOK_SCHEMA = 'svc-alert-notification.v1';
export const METRICS_SCHEMA = 'svc-alert-metric.v1';
export const SIGNATURE_HEADER = 'X-Observatory-Signature';
export const DELIVERY_HEADER = 'X-Observatory-Delivery';

/** Slack (and compatible chat services) require `&`, `<` and `>` escaped in message text. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The chat-webhook body: `{"text": "*[CRITICAL] title*\ntext\n_source sourceId · firedAt_"}`. */
export function slackBody(message: OutboundMessage): string {
  const lines = [
    `*[${escapeSlack(message.severity.toUpperCase())}] ${escapeSlack(message.title)}*`,
    escapeSlack(message.text),
    `_${escapeSlack(message.source)} ${escapeSlack(message.sourceId)} · ${escapeSlack(message.firedAt)}_`,
  ];
  return JSON.stringify({ text: lines.join('\n') });
}

/** The generic webhook body: the message under a schema id. */
export function webhookBody(message: OutboundMessage): string {
  return JSON.stringify({ schema: WEBHOOK_SCHEMA, ...message });
}

/**
 * `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>" under the secret>`: the same
 * scheme honeypot ingest verifies (spec D3), so one verifier serves both directions.
 */
export function signatureHeader(secret: string, body: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  return `t=${t},v1=${hmacSha256Hex(secret, `${t}.${body}`)}`;
}

/** The metrics forwarder body: one counter increment with the alert as labels. */
export function metricsBody(message: OutboundMessage): string {
  return JSON.stringify({
    schema: METRICS_SCHEMA,
    metric: 'observatory_alert_fired_total',
    value: 1,
    ts: message.firedAt,
    labels: { source: message.source, sourceId: message.sourceId, severity: message.severity },
    title: message.title,
    text: message.text,
    details: message.details,
  });
}

/** A GitHub-style `repository_dispatch` body (client_payload has at most 10 top-level keys). */
export function ciDispatchBody(message: OutboundMessage, eventType: string): string {
  return JSON.stringify({ event_type: eventType, client_payload: { schema: WEBHOOK_SCHEMA, ...message } });
}
