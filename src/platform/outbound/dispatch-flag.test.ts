import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, V1 } from '../../../test/helpers/app.ts';
import { ManualClock } from '../clock.ts';
import { withTransaction } from '../db/transaction.ts';
import { type Receiver, startReceiver } from '../../../test/helpers/http-receiver.ts';

// The outbound-dispatch runtime flag (docs/chaos/README.md, "Runtime flags"): while it is held off the
// dispatcher sends nothing and leaves the delivery pending; released, the next run sends it.
let rx: Receiver;
let t: TestApp;
const clock = new ManualClock('2026-11-23T09:10:00.000Z');
beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestApp({
    clock,
    env: { OBSERVATORY_ALLOW_PRIVATE_OUTBOUND: '1', OBSERVATORY_OUTBOUND_ALLOWED_PORTS: `80,443,${rx.port}`, OBSERVATORY_OUTBOUND_TIMEOUT_MS: '2000' },
  });
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

async function runDispatch(): Promise<{ outcome: string; stats: Record<string, unknown> }> {
  const res = await t.call({ method: 'POST', url: `${V1}/ops/jobs/outbound-dispatch/run` });
  expect(res.statusCode).toBe(200);
  return res.json().run;
}

describe('the outbound-dispatch flag', () => {
  it('off, the job sends nothing and the delivery stays pending; released, it is sent', async () => {
    const { outbound, database } = t.app;
    const [id] = await withTransaction(database.db, (tx) =>
      outbound.enqueue(tx, {
        source: 'honeypot-rule',
        sourceId: 'rule-flag',
        destinations: [{ kind: 'slack', url: `${rx.origin}/hook` }],
        message: { title: 'LIAR burst', text: '5 LIAR events', severity: 'critical', details: {} },
      }),
    );

    t.app.faults.flags.override('run-flip', 'outbound-dispatch', false);
    const held = await runDispatch();
    expect(held).toMatchObject({ outcome: 'ok', stats: { sent: 0, retried: 0, failed: 0, heldByFlag: 'outbound-dispatch', pending: 1 } });
    expect(rx.requests).toHaveLength(0);
    const [waiting] = await outbound.listDeliveries({ source: 'honeypot-rule', sourceId: 'rule-flag' });
    expect(waiting).toMatchObject({ id, status: 'pending', attempts: 0 });

    t.app.faults.flags.release('run-flip');
    const sent = await runDispatch();
    expect(sent).toMatchObject({ outcome: 'ok', stats: { sent: 1, retried: 0, failed: 0 } });
    expect(sent.stats).not.toHaveProperty('heldByFlag');
    expect(rx.to('/hook')).toHaveLength(1);
    const [delivered] = await outbound.listDeliveries({ source: 'honeypot-rule', sourceId: 'rule-flag' });
    expect(delivered).toMatchObject({ id, status: 'delivered', attempts: 1 });
  });
});
