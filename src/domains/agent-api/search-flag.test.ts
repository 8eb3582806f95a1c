import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../../test/helpers/app.ts';

// The agent-api-search runtime flag (docs/chaos/README.md, "Runtime flags"), as a feature-flag-flip
// experiment holds it: off, the three searches answer 503; released, they answer again.
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { OBSERVATORY_AGENT_API_ANON_PER_MINUTE: '100000', OBSERVATORY_AGENT_API_IP_PER_MINUTE: '100000' } });
});
afterAll(async () => t?.close());

const searches = [
  { method: 'GET' as const, url: '/api/agent?query=dns' },
  { method: 'POST' as const, url: '/api/agent', payload: { query: 'dns' } },
  { method: 'POST' as const, url: '/api/agent/batch', payload: { queries: ['dns', 'index fund'] } },
];

describe('the agent-api-search flag', () => {
  it('off, every search answers 503 svc-error saying it is switched off; browsing still answers', async () => {
    t.app.faults.flags.override('run-flip', 'agent-api-search', false);
    try {
      for (const search of searches) {
        const res = await t.call({ ...search, token: null });
        expect(res.statusCode, search.url).toBe(503);
        expect(res.json()).toMatchObject({ schema: 'svc-error.v1', reason: 'unavailable' });
        expect(res.json().human).toMatch(/search is switched off for the moment/);
      }
      expect((await t.call({ method: 'GET', url: '/api/topics', token: null })).statusCode).toBe(200);
    } finally {
      t.app.faults.flags.release('run-flip');
    }
  });

  it('released, the searches answer again', async () => {
    t.app.faults.flags.override('run-flip', 'agent-api-search', false);
    expect((await t.call({ ...searches[0]!, token: null })).statusCode).toBe(503);
    t.app.faults.flags.release('run-flip');
    for (const search of searches) {
      const res = await t.call({ ...search, token: null });
      expect(res.statusCode, search.url).toBe(200);
    }
    expect((await t.call({ ...searches[0]!, token: null })).json().results.length).toBeGreaterThan(0);
  });
});
