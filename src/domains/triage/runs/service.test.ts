import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTestDatabase, type TestDatabase } from '../../../../test/helpers/database.ts';
import { ManualClock } from '../../../platform/clock.ts';
import type { Database } from '../../../platform/db/client.ts';
import { rowsOf } from '../../../platform/db/client.ts';
import { ServiceError } from '../../../platform/errors.ts';
import { builtinEngine, type ModelEngine, ModelError, type ModelRequest } from '../../../platform/llm/engine.ts';
import { readDataMessage } from '../../../platform/llm/untrusted.ts';
import { createForecaster } from '../../empire/forecast/service.ts';
import { EXAMPLES_EACH } from './snapshots.ts';
import { createRunService, LOOKBACK_DAYS_DEFAULT, RUN_RETENTION_DAYS, runDigest, STUB_RUN_ID } from './service.ts';

/**
 * The run pipeline against a real database, with engines written here: what a run stores when the
 * engine answers, when it fails, and when it answers something else than asked; the replay
 * envelope's digest and reach; retention. The agents' own rules are tested beside them
 * (agents/*.test.ts), the whole flow through HTTP in src/domains/triage/triage.http.test.ts and src/domains/triage/triage-live.http.test.ts.
 */

let testDb: TestDatabase;
let database: Database;
const clock = new ManualClock('2026-11-26T08:00:00.000Z');
const silent = { warn() {}, info() {}, error() {}, debug() {} } as unknown as FastifyBaseLogger;
const requests: ModelRequest[] = [];

const scripted = (answer: (request: ModelRequest) => Promise<string>): ModelEngine => ({
  kind: 'live',
  model: 'gpt-4o-mini',
  async complete(request) {
    requests.push(request);
    return { engine: 'live', model: 'gpt-4o-mini', reportedModel: 'gpt-4o-mini-2024-07-18', text: await answer(request), promptTokens: 1200, completionTokens: 300, attempts: 1 };
  },
});

function service(engine: ModelEngine) {
  return createRunService({
    db: database.db,
    clock,
    engine,
    agents: { active: async () => '1.1.0' },
    budget: { assertRuns: async () => {} },
    forecasts: async () => [],
    hourlyCounts: (from, to) => createForecaster({ db: database.db, clock }).hourlyCounts(from, to),
    lineage: async () => null,
    linkOrigin: 'https://observatory.example.com',
    log: silent,
  });
}

const runs = async () =>
  rowsOf<{ id: string; outcome: string; prompt_tokens: number; model: string; auto_rejected: number; error_text: string | null; attempts: number }>(
    await database.db.execute(sql`SELECT id::text, outcome, prompt_tokens, model, auto_rejected, error_text, attempts FROM triage_runs ORDER BY started_at, id`),
  );

beforeAll(async () => {
  ({ testDb, database } = await openTestDatabase());
});
afterAll(() => testDb?.drop());
beforeEach(async () => {
  requests.length = 0;
  await database.db.execute(sql`DELETE FROM triage_proposals`);
  await database.db.execute(sql`DELETE FROM triage_runs`);
});

describe('a run', () => {
  it('stores the envelope the engine was sent and answered, with the tokens it reported', async () => {
    const result = await service(scripted(async () => '{"proposals": []}')).triage({ windowMinutes: 30, trigger: 'api' });
    expect(result).toMatchObject({ ok: true, proposalCount: 0, autoRejected: 0, windowStart: '2026-11-26T07:30:00.000Z', windowEnd: '2026-11-26T08:00:00.000Z', agentVersion: 'incident-classifier@1.1.0' });
    const [stored] = await runs();
    // Charged as the configured model, not as the one the server reported.
    expect(stored).toMatchObject({ id: result.runId, outcome: 'ok', prompt_tokens: 1200, model: 'gpt-4o-mini' });
    // The user message is the window the agent read, as a data block of canonical JSON.
    const user = readDataMessage(requests[0]!.user) as { windowStart: string; windowMinutes: number };
    expect(user).toMatchObject({ windowStart: '2026-11-26T07:30:00.000Z', windowMinutes: 30 });
    expect(requests[0]!.responseSchema.name).toBe('incident_proposals');
  });

  it('refuses an answer that is not JSON as one auto-rejected entry, keeping the text for replay', async () => {
    const result = await service(scripted(async () => 'Sure! Here are the incidents: …')).triage({ trigger: 'api' });
    expect(result).toMatchObject({ proposalCount: 0, autoRejected: 1 });
    const [proposal] = rowsOf<{ status: string; payload: unknown; auto_reject_reason: string }>(
      await database.db.execute(sql`SELECT status, payload, auto_reject_reason FROM triage_proposals`),
    );
    expect(proposal).toMatchObject({ status: 'auto-rejected', payload: null });
    expect(proposal!.auto_reject_reason).toMatch(/^malformed-output: /);
    const replay = await service(builtinEngine).replay(result.runId, null);
    expect(replay.llmResponse).toBe('Sure! Here are the incidents: …');
    expect((await runs())[0]!.auto_rejected).toBe(1);
  });

  it('stores a failed model call as an error run with the tokens spent, and answers 502 model-unavailable', async () => {
    const failing: ModelEngine = {
      kind: 'live',
      model: 'gpt-4o-mini',
      complete: async () => {
        throw new ModelError('empty-answer', 'The model answered nothing.', { promptTokens: 900, completionTokens: 0 }, 3);
      },
    };
    const error = await service(failing).triage({ trigger: 'api' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 502, reason: 'model-unavailable' });
    const [stored] = await runs();
    expect(stored).toMatchObject({ outcome: 'error', prompt_tokens: 900, attempts: 3 });
    expect(stored!.error_text).toMatch(/^empty-answer: /);
    expect((error as ServiceError).details.runId).toBe(stored!.id);
  });

  it('lets other failures (a bug, the database) through unchanged and stores nothing', async () => {
    const broken: ModelEngine = { kind: 'live', model: 'x', complete: async () => Promise.reject(new TypeError('boom')) };
    await expect(service(broken).triage({ trigger: 'api' })).rejects.toThrow(TypeError);
    expect(await runs()).toEqual([]);
  });

  it('answers the stub pass without reading or writing', async () => {
    const result = await service(scripted(async () => '{"proposals": []}')).triage({ stub: true, trigger: 'api' });
    expect(result).toMatchObject({ runId: STUB_RUN_ID, proposalCount: 0, autoRejected: 0 });
    expect(requests).toEqual([]);
    expect(await runs()).toEqual([]);
  });

  it('refuses a window outside 1 to 1440 minutes and a lookback outside 1 to 90 days', async () => {
    const runsOf = service(builtinEngine);
    await expect(runsOf.triage({ windowMinutes: 0, trigger: 'api' })).rejects.toMatchObject({ status: 400, reason: 'invalid-window' });
    await expect(runsOf.triage({ windowMinutes: 1441, trigger: 'api' })).rejects.toMatchObject({ status: 400, reason: 'invalid-window' });
    await expect(runsOf.rules({ lookbackDays: 91, trigger: 'api' })).rejects.toMatchObject({ status: 400, reason: 'invalid-lookback' });
  });
});

describe('the rule proposer', () => {
  it(`reads ${LOOKBACK_DAYS_DEFAULT} days unless told otherwise, and is fed the ${EXAMPLES_EACH} newest accepted and ${EXAMPLES_EACH} newest rejected decisions`, async () => {
    // 15 of each decided, a minute apart; the 5 oldest of each must be left out.
    for (const [status, offset] of [['accepted', 0], ['rejected', 30]] as const) {
      for (let i = 0; i < 15; i++) {
        await database.db.execute(sql`
          INSERT INTO triage_proposals (id, run_id, kind, status, agent, agent_version, toolset, title, payload, evidence_event_ids, created_at, decided_at, decision_notes)
          VALUES (gen_random_uuid(), gen_random_uuid(), 'alert-rule', ${status}, 'rule-proposer', 'rule-proposer@1.1.0', 'crawler-lab', ${`${status} ${i}`},
            ${JSON.stringify({ predicate: { kind: 'empire_count_gte', count: 100 + offset + i, windowMinutes: 60 } })}::jsonb, '[]'::jsonb,
            '2026-11-20T00:00:00Z', ${new Date(Date.parse('2026-11-25T00:00:00Z') + (offset + i) * 60_000).toISOString()}::timestamptz, ${`note ${i}`})`);
      }
    }
    const result = await service(scripted(async () => '{"proposals": []}')).rules({ trigger: 'api' });
    expect(result).toMatchObject({ lookbackDays: LOOKBACK_DAYS_DEFAULT, proposalCount: 0 });
    const user = readDataMessage(requests[0]!.user) as { lookbackDays: number; examples: { decision: string; predicate: { count: number } }[] };
    expect(user.lookbackDays).toBe(LOOKBACK_DAYS_DEFAULT);
    const counts = (decision: string) => user.examples.filter((e) => e.decision === decision).map((e) => e.predicate.count);
    expect(counts('accepted')).toEqual([114, 113, 112, 111, 110, 109, 108, 107, 106, 105]);
    expect(counts('rejected')).toEqual([144, 143, 142, 141, 140, 139, 138, 137, 136, 135]);
    await database.db.execute(sql`DELETE FROM triage_proposals`);
  });
});

describe('replay', () => {
  it('recomputes the digest from the stored parts and reports a changed row', async () => {
    const runsOf = service(builtinEngine);
    const { runId } = await runsOf.triage({ trigger: 'api' });
    const first = await runsOf.replay(runId, null);
    expect(first.digest).toBe(runDigest({ systemPromptHash: first.systemPromptHash, userMessage: first.userMessage, modelText: first.llmResponse }));
    expect(first).toMatchObject({ matches: true, engine: 'builtin', promptTokens: 0, userMessageBytes: Buffer.byteLength(first.userMessage) });
    expect(await runsOf.replay(runId.toUpperCase(), null)).toEqual(first);
    await database.db.execute(sql`UPDATE triage_runs SET user_message = user_message || ' ' WHERE id = ${runId}::uuid`);
    const changed = await runsOf.replay(runId, null);
    expect(changed).toMatchObject({ matches: false, digest: first.digest });
    expect(changed.recomputedDigest).not.toBe(first.digest);
  });

  it('is 404 for an unknown run, and for a credential bound to toolsets the run read beyond', async () => {
    const runsOf = service(builtinEngine);
    await expect(runsOf.replay('00000000-0000-4000-8000-000000000000', null)).rejects.toMatchObject({ status: 404 });
    await expect(runsOf.replay('not-a-uuid', null)).rejects.toMatchObject({ status: 404 });
    const { runId } = await runsOf.triage({ trigger: 'api' });
    await database.db.execute(sql`UPDATE triage_runs SET toolsets = '["alpha","beta"]'::jsonb WHERE id = ${runId}::uuid`);
    await expect(runsOf.replay(runId, new Set(['alpha']))).rejects.toMatchObject({ status: 404 });
    expect((await runsOf.replay(runId, new Set(['alpha', 'beta', 'gamma']))).runId).toBe(runId);
  });
});

describe('retention', () => {
  it(`deletes runs started more than ${RUN_RETENTION_DAYS} days ago and keeps the rest`, async () => {
    const runsOf = service(builtinEngine);
    const old = await runsOf.triage({ trigger: 'job' });
    clock.advance(RUN_RETENTION_DAYS * 86_400_000);
    const kept = await runsOf.triage({ trigger: 'job' });
    clock.advance(1);
    expect(await runsOf.prune(clock.now())).toBe(1);
    expect((await runs()).map((r) => r.id)).toEqual([kept.runId]);
    await expect(runsOf.replay(old.runId, null)).rejects.toMatchObject({ status: 404 });
    clock.set('2026-11-26T08:00:00.000Z');
  });
});
