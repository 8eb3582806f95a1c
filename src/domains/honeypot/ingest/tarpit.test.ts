import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../../test/helpers/app.ts';
import { createTenant, GPTBOT_UA, signedIngest } from '../../../../test/helpers/honeypot.ts';
import { ManualClock } from '../../../platform/clock.ts';

// A verified agent is never tarpitted (docs/honeypot/README.md, "Tarpit"; docs/honeypot/enrichment.md,
// "Fingerprint"), through the signed ingest API as a honeypot sends it: an impostor with the
// verified agent's User-Agent is tarpitted, the agent itself keeps being answered active: false.

const clock = new ManualClock('2026-11-23T10:00:00.000Z');
let t: TestApp;
let secret: string;

/** Inside OpenAI's published GPTBot range 52.230.152.0/24 (AS8075, Microsoft). */
const REAL_IP = '52.230.152.9';
/** Same AS (8075), outside every GPTBot range: the impostor rents from the real one's cloud. */
const AZURE_IMPOSTOR_IP = '52.230.153.9';
/** Another network (AS63949). */
const OTHER_IMPOSTOR_IP = '45.33.32.156';
/** Documentation addresses: no AS number is known for them. */
const NO_ASN_A = '203.0.113.50';
const NO_ASN_B = '198.51.100.200';
const JA4 = 't13d1516h2_8daaf6152771_02713d6af862';

type Answer = { id: string; uaClass: string; fingerprintId: string; tarpit: { active: boolean; delayMs: number } };

let seq = 0;
/** Sends one signed request, a second after the previous one, and answers its events. */
async function send(events: { ip: string; ja4?: string; id?: string }[]): Promise<Answer[]> {
  clock.advance(1000);
  const body = { events: events.map((e) => ({ id: e.id ?? `ev-${++seq}`, path: '/honeypot/topics/llm-pricing', ua: GPTBOT_UA, ip: e.ip, ...(e.ja4 ? { ja4: e.ja4 } : {}) })) };
  const res = await signedIngest(t, { slug: 'trap', secret, unixSeconds: Math.floor(clock.now().getTime() / 1000), body });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ events: Answer[] }>().events;
}
const one = async (event: { ip: string; ja4?: string; id?: string }) => (await send([event]))[0]!;
const get = (path: string, query: Record<string, string>) => t.call({ method: 'GET', url: `${V1}/honeypot/${path}`, query });

beforeAll(async () => {
  t = await startTestApp({ clock, env: { OBSERVATORY_LIAR_THRESHOLD: '5', OBSERVATORY_TARPIT_TTL_MINUTES: '60' } });
  secret = await createTenant(t, 'trap');
}, 180_000);
afterAll(() => t?.close());

describe('a verified agent and an impostor with its User-Agent', () => {
  it('without JA4: the impostor is tarpitted after five LIAR events, the verified agent keeps active: false', async () => {
    const real = await one({ ip: REAL_IP });
    expect(real).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', tarpit: { active: false, delayMs: 0 } });

    const liars: Answer[] = [];
    for (let i = 0; i < 5; i++) {
      liars.push(await one({ ip: AZURE_IMPOSTOR_IP }));
      // The real agent crawls on between the impostor's requests.
      expect(await one({ ip: REAL_IP }), `after LIAR event ${i + 1}`).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', fingerprintId: real.fingerprintId, tarpit: { active: false, delayMs: 0 } });
    }
    expect(liars.map((l) => l.uaClass)).toEqual(Array(5).fill('LIAR'));
    expect(liars.map((l) => l.tarpit.active)).toEqual([false, false, false, false, true]);
    expect(liars[4]!.tarpit).toEqual({ active: true, delayMs: 8000 });
    // The two never share a fingerprint, though they share the User-Agent, the missing JA4 and the AS.
    expect(new Set(liars.map((l) => l.fingerprintId))).toEqual(new Set([liars[0]!.fingerprintId]));
    expect(liars[0]!.fingerprintId).not.toBe(real.fingerprintId);

    // Still so while the impostor's tarpit lasts, in one batch too.
    const mixed = await send([{ ip: AZURE_IMPOSTOR_IP }, { ip: REAL_IP }]);
    expect(mixed.map((a) => [a.uaClass, a.tarpit])).toEqual([
      ['LIAR', { active: true, delayMs: 8000 }],
      ['KNOWN_LLM_AGENT', { active: false, delayMs: 0 }],
    ]);

    // The reads say the same: the tarpit is the impostor's, none is the real agent's.
    const tarpits = (await get('tarpits', { tenant: 'trap' })).json<{ rows: { fingerprintId: string; active: boolean }[] }>().rows;
    expect(tarpits.map((r) => [r.fingerprintId, r.active])).toEqual([[liars[0]!.fingerprintId, true]]);
    const investigated = (await get('investigate', { tenant: 'trap', fingerprintId: real.fingerprintId })).json();
    expect(investigated).toMatchObject({ found: true, tarpit: null, uaClassesSeen: [{ uaClass: 'KNOWN_LLM_AGENT', count: 7 }] });
  });

  it('impostors from other networks are keyed apart: by AS number, else by keyed address', async () => {
    const other = await one({ ip: OTHER_IMPOSTOR_IP });
    const azure = await one({ ip: AZURE_IMPOSTOR_IP });
    const a = await one({ ip: NO_ASN_A });
    const b = await one({ ip: NO_ASN_B });
    expect(new Set([other, azure, a, b].map((x) => x.fingerprintId)).size).toBe(4);
    // The Azure impostor is still the tarpitted one; the others have sent one LIAR event each.
    expect([other, azure, a, b].map((x) => x.tarpit.active)).toEqual([false, true, false, false]);
    expect((await one({ ip: NO_ASN_A })).fingerprintId).toBe(a.fingerprintId);
  });

  it('with the same JA4: the impostor is tarpitted, the verified agent is not', async () => {
    const real = await one({ ip: REAL_IP, ja4: JA4 });
    const liars = [];
    for (let i = 0; i < 5; i++) liars.push(await one({ ip: OTHER_IMPOSTOR_IP, ja4: JA4 }));
    expect(liars.at(-1)!.tarpit).toEqual({ active: true, delayMs: 8000 });
    expect(liars[0]!.fingerprintId).not.toBe(real.fingerprintId);
    expect(await one({ ip: REAL_IP, ja4: JA4 })).toMatchObject({ uaClass: 'KNOWN_LLM_AGENT', fingerprintId: real.fingerprintId, tarpit: { active: false, delayMs: 0 } });
  });

  it('a verified event sent again (a duplicate) is answered active: false too', async () => {
    const first = await one({ ip: REAL_IP, id: 'real-again' });
    const again = await one({ ip: REAL_IP, id: 'real-again' });
    expect(again).toMatchObject({ fingerprintId: first.fingerprintId, uaClass: 'KNOWN_LLM_AGENT', tarpit: { active: false, delayMs: 0 } });
  });
});
