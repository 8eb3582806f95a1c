import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { rowsOf } from '../../platform/db/client.ts';
import { loadSeedCorpus } from './service.ts';

/**
 * What the public agent API leaves in the database, read from the tables themselves rather than
 * through a view that might leave a column out: the recorded calls (docs/agent-api/README.md, "The bait
 * records what it catches") and the seed corpus across restarts ("Topics and the seed corpus").
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '100000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '100000' } });
});
afterAll(async () => t?.close());

/** Headers that carry client addresses through proxies; none may be stored. */
const FORWARDING = {
  'x-forwarded-for': '203.0.113.61, 203.0.113.62',
  'x-forwarded-host': 'proxy.example',
  forwarded: 'for=203.0.113.63;proto=https',
  'x-real-ip': '203.0.113.64',
  'cf-connecting-ip': '203.0.113.65',
  'true-client-ip': '203.0.113.66',
  'x-client-ip': '203.0.113.67',
  via: '1.1 203.0.113.68',
};
const CALLER_IP = '198.51.100.60';

describe('a recorded call', () => {
  it('stores the allowed headers only: no forwarding header, and no raw IP in any column', async () => {
    const res = await t.call({
      method: 'GET',
      url: '/api/agent?query=passport&agent_name=header-probe',
      token: null,
      remoteAddress: CALLER_IP,
      headers: { 'user-agent': 'header-probe/1.0', accept: 'application/json', 'accept-language': 'en', 'signature-agent': '"https://agent.example"', ...FORWARDING },
    });
    expect(res.statusCode).toBe(200);
    await t.app.agentApi.recorder.flush();
    const rows = rowsOf<{ headers: Record<string, string>; whole: string }>(
      await t.app.database.db.execute(sql`
        SELECT e.headers, row_to_json(e)::text AS whole
        FROM honeypot_events e JOIN honeypot_tenants tn ON tn.id = e.tenant_id
        WHERE tn.slug = 'agent-api' AND e.ua_raw = 'header-probe/1.0'`),
    );
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(Object.keys(row!.headers).sort()).toEqual(['accept', 'accept-language', 'signature-agent']);
    expect(row!.headers).toMatchObject({ accept: 'application/json', 'signature-agent': '"https://agent.example"' });
    for (const ip of [CALLER_IP, ...Object.values(FORWARDING).flatMap((v) => v.match(/\d+\.\d+\.\d+\.\d+/g) ?? [])]) expect(row!.whole).not.toContain(ip);
    expect(row!.whole).not.toContain('proxy.example');
  });
});

describe('the seed corpus on a later start', () => {
  it("keeps an operator's edit of a seed topic, and does not bring back a deleted one", async () => {
    const corpus = loadSeedCorpus();
    const [edited, deleted] = [corpus[0]!, corpus[1]!];
    const edit = { slug: edited.slug, title: 'Edited by an operator', category: edited.category, summary: 'Operator summary.', body: 'Operator body.' };
    expect((await t.call({ method: 'POST', url: `${V1}/agent-api/topics`, payload: { topics: [edit] } })).json()).toMatchObject({ updated: 1 });
    await t.app.database.db.execute(sql`DELETE FROM agent_topics WHERE slug = ${deleted.slug}`);

    // A second start on the same database runs the whole start-up, seed step included.
    const second = await t.secondInstance();
    const stored = async () =>
      rowsOf<{ slug: string; title: string; summary: string; body: string }>(await second.database.db.execute(sql`SELECT slug, title, summary, body FROM agent_topics ORDER BY slug`));
    const rows = await stored();
    expect(rows.find((r) => r.slug === edited.slug)).toEqual({ slug: edited.slug, title: edit.title, summary: edit.summary, body: edit.body });
    expect(rows.some((r) => r.slug === deleted.slug)).toBe(false);
    expect(rows).toHaveLength(corpus.length - 1);
    // The seed step itself, called again, changes nothing.
    expect(await second.agentApi.service.ensureSeedCorpus()).toBe(0);
    expect(await stored()).toEqual(rows);
  });
});
