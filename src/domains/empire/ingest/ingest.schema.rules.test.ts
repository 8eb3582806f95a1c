import { expect, it } from 'vitest';
import { buildValidatorFactory } from '../../../platform/http/validation.ts';

// The limits of the empire ingest body (spec D4, docs/empire/README.md "Ingest") as the server's request
// validator applies them, and the descriptions that tell clients those limits. The schemas are
// imported inside each test, so that a schema broken at load fails these tests (a failure at import
// would fail only the collection of the files that import it).

async function validators() {
  const { EmpireEvent, EmpireIngestBody, MAX_EVENTS_PER_REQUEST } = await import('./service.ts');
  const factory = buildValidatorFactory()({}, {});
  const compile = (schema: unknown) => factory({ schema: schema as never, method: 'POST', url: '/ingest', httpPart: 'body' }) as (data: unknown) => boolean;
  return { event: compile(EmpireEvent), body: compile(EmpireIngestBody), EmpireEvent, MAX_EVENTS_PER_REQUEST };
}

const minimal = { id: 'e1', eventType: 'tick' };
const full = {
  id: 'e1',
  eventType: 'tick',
  ts: '2026-11-24T11:00:00Z',
  tenant: 'acme',
  causedBy: null,
  payload: { a: 1 },
  keyId: '0b7f9a1c-5d2e-4c6b-8e3a-1f2d3c4b5a69',
  signatureB64: 'A'.repeat(200),
};

it('accepts a minimal and a complete event', async () => {
  const { event } = await validators();
  expect(event(minimal)).toBe(true);
  expect(event(full)).toBe(true);
  expect(event({ ...minimal, causedBy: 'e0' })).toBe(true);
});

it('refuses each member outside its bounds, and members it does not know', async () => {
  const { event } = await validators();
  const refused = [
    { ...minimal, id: '' },
    { ...minimal, id: 'x'.repeat(129) },
    { ...minimal, eventType: '' },
    { ...minimal, eventType: 'x'.repeat(129) },
    { ...minimal, ts: 'yesterday' },
    { ...minimal, tenant: '' },
    { ...minimal, tenant: 'x'.repeat(129) },
    { ...minimal, causedBy: '' },
    { ...minimal, causedBy: 'x'.repeat(129) },
    { ...minimal, payload: 'text' },
    { ...minimal, keyId: 'not-a-uuid' },
    { ...minimal, signatureB64: 'A'.repeat(201) },
    { ...minimal, extra: 1 },
    { eventType: 'tick' },
    { id: 'e1' },
  ];
  for (const candidate of refused) expect({ candidate, valid: event(candidate) }).toEqual({ candidate, valid: false });
  expect(event({ ...minimal, id: 'x'.repeat(128), eventType: 'x'.repeat(128), tenant: 'x'.repeat(128), causedBy: 'x'.repeat(128) })).toBe(true);
});

it('takes 1 to 500 events for a toolset named as the provenance keys are', async () => {
  const { body, MAX_EVENTS_PER_REQUEST } = await validators();
  expect(MAX_EVENTS_PER_REQUEST).toBe(500);
  expect(body({ toolset: 'lab', events: [minimal] })).toBe(true);
  expect(body({ toolset: 'lab', events: Array.from({ length: 500 }, (_, i) => ({ id: `e${i}`, eventType: 'tick' })) })).toBe(true);
  expect(body({ toolset: 'lab', events: Array.from({ length: 501 }, (_, i) => ({ id: `e${i}`, eventType: 'tick' })) })).toBe(false);
  expect(body({ toolset: 'lab', events: [] })).toBe(false);
  expect(body({ toolset: 'ab', events: [minimal] })).toBe(false);
  expect(body({ toolset: '9lab', events: [minimal] })).toBe(false);
  expect(body({ toolset: 'lab', events: [minimal], extra: true })).toBe(false);
  expect(body({ events: [minimal] })).toBe(false);
  expect(body({ toolset: 'lab', events: [{ ...minimal, extra: 1 }] })).toBe(false);
});

it('tells clients the rules of the members they may send', async () => {
  const { EmpireEvent } = await validators();
  const { EmpireIngestBody } = await import('./service.ts');
  expect(JSON.stringify(EmpireIngestBody.properties.toolset)).toMatch(/3 to 128 characters/);
  const described = Object.fromEntries(Object.entries(EmpireEvent.properties).map(([name, schema]) => [name, JSON.stringify(schema)]));
  expect(described.id).toMatch(/unique per toolset/);
  expect(described.ts).toMatch(/30 days in the past and 5 minutes in the future/);
  expect(described.causedBy).toMatch(/caused this one/);
  expect(described.payload).toMatch(/64 KiB/);
  expect(described.keyId).toMatch(/every key of the toolset is tried/);
  expect(described.signatureB64).toMatch(/Ed25519 signature over the event's RFC 8785 canonical bytes/);
});
