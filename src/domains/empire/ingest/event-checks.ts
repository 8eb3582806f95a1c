import { badRequest } from '../../../platform/errors.ts';
import { eventTimeProblem } from '../../../platform/event-time.ts';

/**
 * What a toolset event must be, beyond its JSON Schema, before it is canonicalised, hashed and
 * stored (docs/empire/README.md, "Security model"). JSON.parse accepts documents that RFC 8785 refuses
 * (`1e999` parses to Infinity, `"\ud800"` to a lone surrogate) or that overflow a recursive walk
 * (thousands of nested arrays), and PostgreSQL's jsonb refuses lone surrogates too: each would be a
 * 500. They are refused here as 400 `invalid-body`, naming the event and field.
 */

/** Containers nested in one payload, the payload object itself counting as the first. */
export const MAX_PAYLOAD_DEPTH = 32;
/** Bytes of one payload's RFC 8785 form (what is signed, hashed and stored). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** In a `u` regex a well-formed surrogate pair is one code point, so only a lone half matches. */
const LONE_SURROGATE = /\p{Cs}/u;
/** Characters JSON.stringify (and so RFC 8785) writes as an escape. */
const ESCAPED = /["\\\u0000-\u001f]/;

export type PayloadProblem = 'too-deep' | 'too-large' | 'not-finite' | 'lone-surrogate';

const PAYLOAD_PROBLEM: Record<PayloadProblem, string> = {
  'too-deep': `is nested more than ${MAX_PAYLOAD_DEPTH} levels deep (the payload object is the first)`,
  'too-large': `is larger than ${MAX_PAYLOAD_BYTES} bytes in its canonical (RFC 8785) form`,
  'not-finite': 'holds a number that is not finite (such as 1e999); JSON numbers must fit a 64-bit float',
  'lone-surrogate': 'holds a string or key with a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair), which has no UTF-8 form',
};

/** The UTF-8 length of a well-formed string as RFC 8785 writes it (JSON.stringify, quotes included). */
function canonicalStringBytes(value: string): number {
  return ESCAPED.test(value) ? Buffer.byteLength(JSON.stringify(value)) : Buffer.byteLength(value) + 2;
}

/**
 * Why a parsed JSON payload cannot be canonicalised or stored, or null. One walk with an explicit
 * stack (a deep document cannot overflow it) that visits what canonicalisation visits and counts
 * the exact canonical length as it goes; it stops at the first problem, so an oversized or deep
 * payload costs no more than the bounds. `maxBytes` is for tests.
 */
export function payloadProblem(payload: unknown, maxBytes = MAX_PAYLOAD_BYTES): PayloadProblem | null {
  const values: unknown[] = [payload];
  const depths: number[] = [1];
  let bytes = 0;
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return 'lone-surrogate';
      bytes += canonicalStringBytes(value);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return 'not-finite';
      bytes += String(value).length;
    } else if (typeof value === 'boolean') {
      bytes += value ? 4 : 5;
    } else if (value === null) {
      bytes += 4;
    } else if (typeof value === 'object') {
      if (depth > MAX_PAYLOAD_DEPTH) return 'too-deep';
      if (Array.isArray(value)) {
        bytes += 1 + Math.max(value.length, 1); // brackets and commas
        if (bytes > maxBytes) return 'too-large';
        for (const item of value) {
          values.push(item);
          depths.push(depth + 1);
        }
      } else {
        const record = value as Record<string, unknown>;
        const keys = Object.keys(record);
        bytes += 1 + Math.max(keys.length, 1) + keys.length; // braces, commas, colons
        for (const key of keys) {
          if (LONE_SURROGATE.test(key)) return 'lone-surrogate';
          bytes += canonicalStringBytes(key);
          values.push(record[key]);
          depths.push(depth + 1);
        }
      }
    } else {
      // JSON.parse yields nothing else; anything else has no canonical form.
      return 'not-finite';
    }
    if (bytes > maxBytes) return 'too-large';
  }
  return null;
}

/** The string members an event carries into its signed bytes, its stored row or its attestation. */
const STRING_FIELDS = ['id', 'eventType', 'tenant', 'causedBy', 'signatureB64'] as const;

interface CheckedEvent {
  id: string;
  eventType: string;
  ts?: string | undefined;
  tenant?: string | undefined;
  causedBy?: string | null | undefined;
  payload?: Record<string, unknown> | undefined;
  signatureB64?: string | undefined;
}

/**
 * Refuses the whole batch (400 `invalid-body`, like a schema failure) at its first event that
 * cannot be canonicalised, stored or placed in time: a lone surrogate in a string member, a `ts`
 * outside spec D3's bounds at `now`, or a payload problem.
 */
export function checkEvents(events: readonly CheckedEvent[], now: Date): void {
  events.forEach((event, i) => {
    const at = `body.events[${i}]`;
    for (const name of STRING_FIELDS) {
      const value = event[name];
      if (typeof value === 'string' && LONE_SURROGATE.test(value)) {
        throw badRequest('invalid-body', `${at}.${name} holds a lone UTF-16 surrogate (\\ud800 to \\udfff without its pair), which has no UTF-8 form.`, { field: `${at}.${name}` });
      }
    }
    const late = event.ts === undefined ? null : eventTimeProblem(event.ts, now);
    if (late !== null) {
      throw badRequest('invalid-body', `${at}.ts ${late}: an event's ts may be at most 30 days before and 5 minutes after the server's clock.`, { field: `${at}.ts` });
    }
    const problem = event.payload === undefined ? null : payloadProblem(event.payload);
    if (problem !== null) throw badRequest('invalid-body', `${at}.payload ${PAYLOAD_PROBLEM[problem]}.`, { field: `${at}.payload` });
  });
}

