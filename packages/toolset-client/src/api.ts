import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './api/schema.d.ts';

export type { paths } from './api/schema.d.ts';
export const EMPIRE_INGEST_PATH = '/api/observatory/empire/ingest';
export const PROVENANCE_KEYS_PATH = '/api/observatory/v1/provenance/keys';

type IngestOperation = paths[typeof EMPIRE_INGEST_PATH]['post'];
/** The body the ingest takes, as the served document states it. */
export type EmpireIngestBody = IngestOperation['requestBody'] extends { content: { 'application/json': infer B } } | undefined ? B : never;
/** One event's answer: accepted (`eventId` set), a duplicate (the stored `eventId`), or rejected with a reason. */
export type IngestResult = IngestOperation['responses'][200]['content']['application/json']['results'][number];
export type RegisteredKey = NonNullable<paths[typeof PROVENANCE_KEYS_PATH]['post']['responses'][200]['content']['application/json']['key']>;

export type ObservatoryApi = Client<paths>;

/** A client typed from the service's OpenAPI document, sending `token` as a bearer token. */
export function observatoryApi(url: string, token: string, fetchFn: typeof fetch = fetch): ObservatoryApi {
  return createClient<paths>({
    baseUrl: url.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${token}` },
    fetch: (request) => fetchFn(request),
  });
}

/** A refusal of the service, with its reason and human message when it gave them. */
export class ObservatoryError extends Error {
  constructor(
    readonly status: number | null,
    readonly reason: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'ObservatoryError';
  }
}

/**
 * Registers a toolset's public key (`POST {v1}/provenance/keys`; the token needs `write:alerts`)
 * and answers the registration, whose `id` is the `keyId` events name.
 */
export async function registerKey(api: ObservatoryApi, toolset: string, publicKeyB64: string): Promise<RegisteredKey> {
  let answer;
  try {
    answer = await api.POST(PROVENANCE_KEYS_PATH, { body: { toolset, publicKeyB64 } });
  } catch (error) {
    throw new ObservatoryError(null, null, `no answer from the service: ${(error as Error).message}`);
  }
  const { data, error, response } = answer;
  if (data?.ok === true && data.key !== undefined) return data.key;
  const refusal = (data ?? error ?? {}) as { reason?: unknown; human?: unknown };
  const reason = typeof refusal.reason === 'string' ? refusal.reason : null;
  const human = typeof refusal.human === 'string' ? refusal.human : `HTTP ${response.status}`;
  throw new ObservatoryError(response.status, reason, `the key was not registered (${reason ?? response.status}): ${human}`);
}
