import { EMPIRE_INGEST_PATH as CLIENT_PATH, MAX_BODY_BYTES, MAX_EVENTS_PER_REQUEST as CLIENT_MAX_EVENTS, MAX_NAME_LENGTH, MAX_PAYLOAD_BYTES as CLIENT_MAX_PAYLOAD, PROVENANCE_KEYS_PATH } from '@observatory/toolset-client';
import { describe, expect, it } from 'vitest';
import { empireIngestEndpoints } from '../src/domains/empire/ingest/endpoints.ts';
import { MAX_PAYLOAD_BYTES } from '../src/domains/empire/ingest/event-checks.ts';
import { EmpireEvent, MAX_EVENTS_PER_REQUEST } from '../src/domains/empire/ingest/service.ts';
import { BODY_LIMIT_BYTES } from '../src/platform/http/server.ts';
import { V1 } from '../src/platform/http/registry.ts';

/**
 * The toolset client cannot import the service (it runs in the toolsets' deployments), so it
 * states the empire ingest's path and limits again; this holds the two to each other.
 */
describe('the toolset client agrees with the empire ingest it sends to', () => {
  it('on the path, the events per request and the body limit', () => {
    const ingest = empireIngestEndpoints({ ingest: {} as never, clock: {} as never }).find((e) => e.id === 'empireIngest');
    expect(ingest?.path).toBe(CLIENT_PATH);
    expect(CLIENT_MAX_EVENTS).toBe(MAX_EVENTS_PER_REQUEST);
    expect(MAX_BODY_BYTES).toBe(ingest?.bodyLimit ?? BODY_LIMIT_BYTES);
    expect(PROVENANCE_KEYS_PATH).toBe(`${V1}/provenance/keys`);
  });

  it('on what one event may hold', () => {
    expect(CLIENT_MAX_PAYLOAD).toBe(MAX_PAYLOAD_BYTES);
    for (const member of ['id', 'eventType', 'tenant'] as const) expect(EmpireEvent.properties[member].maxLength).toBe(MAX_NAME_LENGTH);
  });
});
