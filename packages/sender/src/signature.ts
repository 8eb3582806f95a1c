import { createHmac } from 'node:crypto';

/**
 * The ingest's request signature: `t=<unix seconds>,v1=<hex>`, the hex being HMAC-SHA256 of
 * `<t>.<raw body>` under the tenant's signing secret. The service refuses a `t` more than 300 s
 * from its clock, so a batch is signed when it is sent, never when it is queued: a batch retried
 * after an outage carries a fresh signature over the same bytes.
 */
export function ingestSignature(secret: string, unixSeconds: number, rawBody: string | Buffer): string {
  const hex = createHmac('sha256', secret).update(`${unixSeconds}.`).update(rawBody).digest('hex');
  return `t=${unixSeconds},v1=${hex}`;
}
