import { describe, expect, it, vi } from 'vitest';
import type { AuditLog, CallContext, OperatorAuditEntry } from '../audit/service.ts';
import { ManualClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import type { Db } from '../db/client.ts';
import { ServiceError } from '../errors.ts';
import type { Destination } from '../outbound/destinations.ts';
import type { DeliveryPageFilter, EnqueueInput, Outbound } from '../outbound/service.ts';
import { createRuleEngine, type RuleKind } from './engine.ts';
import { SETTLE_MS } from './plan.ts';
import type { RulePatch, RuleStore, StoredRule } from './store.ts';

// The engine with every collaborator faked (docs/architecture.md, "Alert rules"): a rules table in
// memory, a kind whose predicate is "at least `min` events in a window" over a counter the test
// sets, and recording audit and outbound. The same engine over the real tables, for each kind of
// rule, is lifecycle.test.ts.

const NOW = new Date('2026-11-23T10:00:00.000Z');
const MINUTE = 60_000;
const HOOK: Destination = { kind: 'webhook', url: 'https://alerts.example.com/hook', secret: 'whsec-0123456789abcdef' };

interface Row extends StoredRule {
  owner: string;
}
type Predicate = { min: number; windowMinutes: number | null };
type Observation = { events: number | null };

function fakeStore(): RuleStore<Row> & { rows: Map<string, Row>; held: Set<string> } {
  const rows = new Map<string, Row>();
  const held = new Set<string>();
  return {
    rows,
    held,
    insert: async (_db, row) => void rows.set(row.id, { ...row }),
    lock: async (_db, id) => (rows.has(id) ? { ...rows.get(id)! } : null),
    lockForEvaluation: async (_db, id) => (rows.get(id)?.enabled && !held.has(id) ? { ...rows.get(id)! } : null),
    update: async (_db, id, patch: RulePatch) => void rows.set(id, { ...rows.get(id)!, ...patch }),
    enabledIds: async () => [...rows.values()].filter((r) => r.enabled).map((r) => r.id),
  };
}

function setup(options: { mayChange?: RuleKind<Row, Predicate, Observation, unknown>['mayChange']; countsUnknown?: boolean; unknown?: (o: Observation) => boolean } = {}) {
  const clock = new ManualClock(NOW);
  const store = fakeStore();
  const tx = { tx: true } as unknown as Db;
  const db = { transaction: async (work: (t: Db) => Promise<unknown>) => work(tx) } as unknown as Db;
  const audits: OperatorAuditEntry[] = [];
  const audit = { record: async (_tx: Db, entry: OperatorAuditEntry) => (audits.push(entry), { id: 'a', seqNo: audits.length }) } as unknown as AuditLog;
  const enqueued: EnqueueInput[] = [];
  const pages: DeliveryPageFilter[] = [];
  const outbound = {
    enqueue: async (_tx: Db, input: EnqueueInput) => (enqueued.push(input), ['d']),
    pageDeliveries: async (filter: DeliveryPageFilter) => {
      pages.push(filter);
      const [id] = filter.producers.keys();
      return { deliveries: id === undefined ? [] : [{ id: 'd1', source: filter.source, sourceId: id, status: 'delivered' }], nextCursor: null };
    },
  } as unknown as Outbound;
  const log = { error: vi.fn() };
  const observed = { events: 0 as number | null };
  const presented: string[] = [];
  const kind: RuleKind<Row, Predicate, Observation, { id: string; name: string; owner: string }> = {
    noun: 'test rule',
    source: 'test-rule',
    producer: { job: 'test-evaluate', schedule: '* * * * *' },
    audit: { create: 'test.create', update: 'test.update', target: 'test-rule' },
    store,
    predicates: {
      read: (rule) => (typeof (rule.predicate as Predicate).min === 'number' ? (rule.predicate as Predicate) : null),
      windowMs: (p) => (p.windowMinutes === null ? null : p.windowMinutes * MINUTE),
      matches: (p, o) => o.events !== null && o.events >= p.min,
    },
    observer: {
      observe: async (t, _rule, _p, _scope) => (expect(t).toBe(tx), { ...observed }),
      describe: async (t, rule, p, o, scope, now) => {
        expect(t).toBe(tx);
        return { title: `${rule.name}: ${o.events}`, text: `at least ${p.min}`, severity: 'warning', details: { from: scope.from.toISOString(), to: scope.to.toISOString(), now: now.toISOString() } };
      },
      ...(options.countsUnknown ? { unknown: (o: Observation) => o.events === null } : {}),
      ...(options.unknown ? { unknown: options.unknown } : {}),
    },
    async presenter(t, rule) {
      expect(t).toBe(tx);
      presented.push(rule.id);
      return (r) => ({ id: r.id, name: r.name, owner: r.owner });
    },
    ...(options.mayChange ? { mayChange: options.mayChange } : {}),
  };
  const engine = createRuleEngine(kind, { db, clock, audit, outbound, config: loadConfig({}, false), log });
  const ctx = { principal: { userId: 'u1', username: 'ops' }, requestId: 'req-1' } as unknown as CallContext;
  const create = (input: Partial<{ name: string; predicate: Predicate; enabled: boolean }> = {}) =>
    engine.insert(tx, ctx, { owner: 'o1' }, { name: input.name ?? 'Rule', predicate: input.predicate ?? { min: 2, windowMinutes: 10 }, destinations: [HOOK], enabled: input.enabled }, (r) => ({ id: r.id, name: `shown ${r.name}`, owner: r.owner }));
  return { clock, store, engine, audits, enqueued, pages, log, observed, presented, ctx, create };
}

describe('refuseUnusable', () => {
  it('refuses a predicate problem as invalid-predicate naming the body field, before the destinations', () => {
    const { engine } = setup();
    const error = (() => {
      try {
        engine.refuseUnusable({ field: 'predicate.min', human: 'predicate.min must be positive.' }, [{ kind: 'metrics' }]);
      } catch (e) {
        return e as ServiceError;
      }
    })();
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toMatchObject({ status: 400, reason: 'invalid-predicate', human: 'predicate.min must be positive.', details: { field: 'body.predicate.min' } });
  });

  it('refuses a destination the outbound policy refuses as invalid-destinations, and lets usable ones through', () => {
    const { engine } = setup();
    expect(() => engine.refuseUnusable(null, [{ kind: 'metrics' }])).toThrow(
      'A destination cannot be used: destinations[0] (metrics): the metrics forwarder is not configured (set OBSERVATORY_METRICS_FORWARD_URL).',
    );
    try {
      engine.refuseUnusable(null, [{ kind: 'metrics' }]);
    } catch (e) {
      expect(e).toMatchObject({ status: 400, reason: 'invalid-destinations', details: { field: 'body.destinations' } });
    }
    expect(() => engine.refuseUnusable(null, [HOOK])).not.toThrow();
  });
});

describe('insert', () => {
  it('stores the rule with its owner, a fresh id, the clock\'s now and empty run columns, and audits its creation', async () => {
    const { store, audits, create } = setup();
    const row = await create({ name: 'Flood' });
    expect(row).toEqual({
      owner: 'o1',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Flood',
      enabled: true,
      predicate: { min: 2, windowMinutes: 10 },
      destinations: [HOOK],
      createdAt: NOW,
      lastFiredAt: null,
      silenceUntil: null,
      evaluatedUntil: null,
    });
    expect(store.rows.get(row.id)).toEqual(row);
    expect(audits).toEqual([{ verb: 'test.create', target: `test-rule:${row.id}`, surface: 'api', actor: { userId: 'u1', username: 'ops' }, after: { id: row.id, name: 'shown Flood', owner: 'o1' }, requestId: 'req-1' }]);
    expect((await create({ enabled: false })).enabled).toBe(false);
    expect((await create()).id).not.toBe(row.id);
  });
});

describe('update', () => {
  it('answers 404 naming the kind for an unknown id', async () => {
    const { engine, ctx } = setup();
    await expect(engine.update(ctx, 'nope', { name: 'x' })).rejects.toMatchObject({ status: 404, reason: 'not-found', human: 'There is no test rule nope.' });
  });

  it('asks the kind whether the caller may change the rule before anything else', async () => {
    const mayChange = vi.fn(() => {
      throw new ServiceError(403, 'forbidden', 'not yours');
    });
    const { engine, ctx, create, audits, presented } = setup({ mayChange });
    const row = await create();
    await expect(engine.update(ctx, row.id, { name: 'Renamed' })).rejects.toMatchObject({ status: 403 });
    expect(mayChange).toHaveBeenCalledWith(ctx, expect.objectContaining({ id: row.id }));
    expect(audits).toHaveLength(1);
    expect(presented).toEqual([]);
  });

  it('changes what changed, audits before and after through the presenter, and answers a no-op without auditing', async () => {
    const { engine, ctx, create, audits, store, clock, presented } = setup();
    const row = await create({ enabled: false });
    clock.advance(MINUTE);
    const changed = await engine.update(ctx, row.id, { name: 'Renamed', enabled: true, silenceUntil: '2026-11-23T12:00:00.000Z' });
    expect(changed).toEqual({ rule: { id: row.id, name: 'Renamed', owner: 'o1' } });
    expect(store.rows.get(row.id)).toMatchObject({ name: 'Renamed', enabled: true, evaluatedUntil: clock.now(), silenceUntil: new Date('2026-11-23T12:00:00.000Z') });
    expect(audits.at(-1)).toEqual({
      verb: 'test.update',
      target: `test-rule:${row.id}`,
      surface: 'api',
      actor: { userId: 'u1', username: 'ops' },
      before: { id: row.id, name: 'Rule', owner: 'o1' },
      after: { id: row.id, name: 'Renamed', owner: 'o1' },
      requestId: 'req-1',
    });
    expect(presented).toEqual([row.id]);

    expect(await engine.update(ctx, row.id, { name: 'Renamed' })).toEqual({ rule: { id: row.id, name: 'Renamed', owner: 'o1' } });
    expect(audits).toHaveLength(2);
    expect(presented).toEqual([row.id, row.id]);
  });
});

describe('evaluateAll', () => {
  it('skips what has not settled, then fires a matching rule once: watermark, lastFiredAt and one enqueue with the run\'s time', async () => {
    const { engine, create, store, enqueued, clock, observed } = setup();
    const row = await create({ name: 'Flood' });
    observed.events = 2;
    expect(await engine.evaluateAll(clock.now())).toEqual({ stats: { evaluated: 0, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 }, unknown: 0 });
    clock.advance(2 * MINUTE);
    const now = clock.now();
    expect(await engine.evaluateAll(now)).toEqual({ stats: { evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0 }, unknown: 0 });
    const to = new Date(now.getTime() - SETTLE_MS);
    expect(store.rows.get(row.id)).toMatchObject({ lastFiredAt: now, evaluatedUntil: to });
    expect(enqueued).toEqual([
      {
        source: 'test-rule',
        sourceId: row.id,
        destinations: [HOOK],
        message: {
          title: 'Flood: 2',
          text: 'at least 2',
          severity: 'warning',
          details: { from: new Date(to.getTime() - 10 * MINUTE).toISOString(), to: to.toISOString(), now: now.toISOString() },
          firedAt: now,
        },
      },
    ]);
    clock.advance(MINUTE);
    expect((await engine.evaluateAll(clock.now())).stats).toMatchObject({ evaluated: 1, fired: 0, cooling: 1 });
  });

  it('moves the watermark of a rule that does not match, or is silenced, without enqueueing', async () => {
    const { engine, create, store, enqueued, clock, observed } = setup();
    const quiet = await create();
    observed.events = 1;
    clock.advance(2 * MINUTE);
    expect((await engine.evaluateAll(clock.now())).stats).toEqual({ evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 });
    expect(store.rows.get(quiet.id)).toMatchObject({ lastFiredAt: null, evaluatedUntil: new Date(clock.now().getTime() - SETTLE_MS) });
    store.rows.set(quiet.id, { ...store.rows.get(quiet.id)!, silenceUntil: new Date(clock.now().getTime() + 10 * MINUTE) });
    observed.events = 5;
    clock.advance(MINUTE);
    expect((await engine.evaluateAll(clock.now())).stats).toEqual({ evaluated: 1, fired: 0, silenced: 1, cooling: 0, skipped: 0, failed: 0 });
    expect(enqueued).toEqual([]);
  });

  it('counts a rule another run holds as skipped, and one whose predicate no longer reads as failed, logged with the kind\'s noun', async () => {
    const { engine, create, store, clock, log, observed } = setup();
    const held = await create();
    const broken = await create();
    store.rows.set(broken.id, { ...store.rows.get(broken.id)!, predicate: { kind: 'gone' } });
    store.held.add(held.id);
    observed.events = 5;
    clock.advance(2 * MINUTE);
    expect((await engine.evaluateAll(clock.now())).stats).toEqual({ evaluated: 0, fired: 0, silenced: 0, cooling: 0, skipped: 1, failed: 1 });
    expect(log.error).toHaveBeenCalledWith({ err: expect.any(Error), ruleId: broken.id }, 'test rule evaluation failed');
    expect((log.error.mock.calls[0]![0] as { err: Error }).err.message).toBe(`test rule ${broken.id} has a predicate that is not in the union`);
    expect(store.rows.get(broken.id)!.evaluatedUntil).toBeNull();
  });

  it('counts a quiet reading the observer could not take as unknown, only when the kind tells them apart', async () => {
    for (const countsUnknown of [true, false]) {
      const { engine, create, store, clock, observed } = setup({ countsUnknown });
      const row = await create({ predicate: { min: 1, windowMinutes: null } });
      observed.events = null;
      clock.advance(2 * MINUTE);
      expect(await engine.evaluateAll(clock.now())).toEqual({ stats: { evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 }, unknown: countsUnknown ? 1 : 0 });
      expect(store.rows.get(row.id)!.evaluatedUntil).toEqual(new Date(clock.now().getTime() - SETTLE_MS));
    }
  });

  it('counts only a quiet reading as unknown: a firing or a silenced match stays what it was', async () => {
    const { engine, create, store, clock, observed } = setup({ unknown: () => true });
    const row = await create({ predicate: { min: 1, windowMinutes: null } });
    observed.events = 1;
    clock.advance(2 * MINUTE);
    expect(await engine.evaluateAll(clock.now())).toEqual({ stats: { evaluated: 1, fired: 1, silenced: 0, cooling: 0, skipped: 0, failed: 0 }, unknown: 0 });
    store.rows.set(row.id, { ...store.rows.get(row.id)!, silenceUntil: new Date(clock.now().getTime() + 10 * MINUTE) });
    clock.advance(MINUTE);
    expect(await engine.evaluateAll(clock.now())).toEqual({ stats: { evaluated: 1, fired: 0, silenced: 1, cooling: 0, skipped: 0, failed: 0 }, unknown: 0 });
    observed.events = 0;
    clock.advance(MINUTE);
    expect(await engine.evaluateAll(clock.now())).toEqual({ stats: { evaluated: 1, fired: 0, silenced: 0, cooling: 0, skipped: 0, failed: 0 }, unknown: 1 });
  });

  it('reads an incremental predicate over the period since the last evaluation, without cooling down', async () => {
    const { engine, create, enqueued, clock, observed } = setup();
    await create({ predicate: { min: 1, windowMinutes: null } });
    observed.events = 1;
    clock.advance(2 * MINUTE);
    expect((await engine.evaluateAll(clock.now())).stats).toMatchObject({ fired: 1 });
    expect(enqueued[0]!.message.details).toMatchObject({ from: NOW.toISOString() });
    clock.advance(MINUTE);
    expect((await engine.evaluateAll(clock.now())).stats).toMatchObject({ fired: 1, cooling: 0 });
  });
});

describe('freshness', () => {
  it('is the earliest watermark of the enabled rules, under the kind\'s producer', async () => {
    const { engine, create } = setup();
    const row = await create();
    expect(engine.freshness([{ ...row, evaluatedUntil: NOW }])).toMatchObject({ asOf: NOW.toISOString(), producer: 'test-evaluate', schedule: '* * * * *' });
  });
});

describe('deliveries', () => {
  it('pages the deliveries of the listed rules under the kind\'s source, each named by its rule', async () => {
    const { engine, create, pages } = setup();
    const row = await create({ name: 'Flood' });
    const listed = await engine.deliveries([row], { limit: 5 });
    expect(listed).toEqual({ deliveries: [{ id: 'd1', status: 'delivered', rule: { id: row.id, name: 'Flood' } }], nextCursor: null });
    expect(pages).toEqual([expect.objectContaining({ source: 'test-rule', producers: new Map([[row.id, [HOOK]]]), limit: 5 })]);
  });
});
