import type { LightMyRequestResponse } from 'fastify';
import { signatureHeader } from '../../src/domains/honeypot/ingest/signature.ts';
import { type TestApp, V1 } from './app.ts';

export const INGEST_PATH = '/api/observatory/honeypot/ingest';

/** User agents the honeypot tests share. 52.230.152.0/24 is one of OpenAI's published GPTBot ranges. */
export const GPTBOT_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)';
export const GPTBOT_IP = '52.230.152.7';
export const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Creates a tenant through the API and returns its signing secret. */
export async function createTenant(t: TestApp, slug: string, name = slug): Promise<string> {
  const res = await t.call({ method: 'POST', url: `${V1}/honeypot/tenants`, payload: { slug, name } });
  if (res.statusCode !== 200) throw new Error(`tenant create failed: ${res.statusCode} ${res.body}`);
  return res.json<{ signingSecret: string }>().signingSecret;
}

/**
 * Sends a body to the ingest endpoint signed the way a honeypot does (spec D3). `raw` overrides
 * the serialised body; `slugHeader` sends a different tenant header than the one signed for.
 */
export function signedIngest(
  t: TestApp,
  options: { slug: string; secret: string; unixSeconds: number; body?: unknown; raw?: string; slugHeader?: string },
): Promise<LightMyRequestResponse> {
  const raw = options.raw ?? JSON.stringify(options.body);
  return t.call({
    method: 'POST',
    url: INGEST_PATH,
    token: null,
    payload: raw,
    headers: {
      'content-type': 'application/json',
      'x-observatory-tenant': options.slugHeader ?? options.slug,
      'x-observatory-signature': signatureHeader(options.secret, options.unixSeconds, raw),
    },
  });
}
