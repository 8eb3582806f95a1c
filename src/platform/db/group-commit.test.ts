import { describe, expect, it } from 'vitest';
import { createGroupCommit } from './group-commit.ts';

/** A write that records each group it is given and answers every item doubled, once released. */
function recorder(options: { failOn?: number; hold?: boolean } = {}) {
  const groups: number[][] = [];
  const releases: (() => void)[] = [];
  return {
    groups,
    releaseAll: () => releases.splice(0).forEach((release) => release()),
    async write(items: number[]): Promise<number[]> {
      groups.push([...items]);
      if (options.hold) await new Promise<void>((resolve) => releases.push(resolve));
      if (options.failOn !== undefined && items.includes(options.failOn)) throw new Error(`cannot write ${options.failOn}`);
      return items.map((i) => i * 2);
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
/** Turns the event loop until `done` holds (at most 50 turns). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 50 && !done(); i++) await tick();
  expect(done()).toBe(true);
}

describe('group commit', () => {
  it('writes the items submitted in one turn of the event loop together, and answers each its own', async () => {
    const r = recorder();
    const gc = createGroupCommit<number, number>({ write: r.write, maxWeight: 100, maxInFlight: 1 });
    const answers = await Promise.all([1, 2, 3].map((i) => gc.submit(i)));
    expect(answers).toEqual([2, 4, 6]);
    expect(r.groups).toEqual([[1, 2, 3]]);
  });

  it('writes a lone item at once, without waiting for company', async () => {
    const r = recorder();
    const gc = createGroupCommit<number, number>({ write: r.write, maxWeight: 100, maxInFlight: 1 });
    expect(await gc.submit(7)).toBe(14);
    expect(await gc.submit(8)).toBe(16);
    expect(r.groups).toEqual([[7], [8]]);
  });

  it('gathers what arrives while a group is being written into the next group', async () => {
    const r = recorder({ hold: true });
    const gc = createGroupCommit<number, number>({ write: r.write, maxWeight: 100, maxInFlight: 1 });
    const first = gc.submit(1);
    await tick();
    expect(r.groups).toEqual([[1]]);
    const later = [2, 3, 4].map((i) => gc.submit(i));
    await tick();
    expect(r.groups).toEqual([[1]]); // nothing else starts while one group is in flight
    expect(gc.stats()).toMatchObject({ queued: 3, inFlight: 1 });
    r.releaseAll();
    expect(await first).toBe(2);
    await until(() => r.groups.length === 2);
    expect(r.groups).toEqual([[1], [2, 3, 4]]);
    r.releaseAll();
    expect(await Promise.all(later)).toEqual([4, 6, 8]);
  });

  it('keeps each group within maxWeight, and writes an item heavier than it alone', async () => {
    const r = recorder();
    const gc = createGroupCommit<number, number>({ write: r.write, weight: (i) => i, maxWeight: 10, maxInFlight: 1 });
    await Promise.all([4, 5, 3, 12, 1].map((i) => gc.submit(i)));
    expect(r.groups).toEqual([[4, 5], [3], [12], [1]]);
    expect(r.groups.every((g) => g.length === 1 || g.reduce((a, b) => a + b, 0) <= 10)).toBe(true);
  });

  it('lets up to maxInFlight groups be written at once', async () => {
    const r = recorder({ hold: true });
    const gc = createGroupCommit<number, number>({ write: r.write, weight: () => 1, maxWeight: 2, maxInFlight: 2 });
    const all = [1, 2, 3, 4, 5].map((i) => gc.submit(i));
    await tick();
    expect(r.groups).toEqual([[1, 2], [3, 4]]);
    expect(gc.stats().inFlight).toBe(2);
    r.releaseAll();
    await until(() => r.groups.length === 3);
    expect(r.groups).toEqual([[1, 2], [3, 4], [5]]);
    r.releaseAll();
    expect(await Promise.all(all)).toEqual([2, 4, 6, 8, 10]);
  });

  it('writes the items of a failed group one by one, so only the item that cannot be written fails', async () => {
    const r = recorder({ failOn: 3 });
    const gc = createGroupCommit<number, number>({ write: r.write, maxWeight: 100, maxInFlight: 1 });
    const settled = await Promise.allSettled([1, 2, 3, 4].map((i) => gc.submit(i)));
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual([2, 4, 'cannot write 3', 8]);
    expect(r.groups).toEqual([[1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  it('fails the whole group at once when retrying alone cannot help (the database is down)', async () => {
    const r = recorder({ failOn: 1 });
    const gc = createGroupCommit<number, number>({ write: r.write, maxWeight: 100, maxInFlight: 1, retryAlone: () => false });
    const settled = await Promise.allSettled([1, 2].map((i) => gc.submit(i)));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(r.groups).toEqual([[1, 2]]);
  });

  it('drains: resolves once everything submitted so far has been written', async () => {
    const r = recorder({ hold: true });
    const gc = createGroupCommit<number, number>({ write: r.write, maxWeight: 1, maxInFlight: 1 });
    const all = [1, 2, 3].map((i) => gc.submit(i));
    let drained = false;
    const draining = gc.drain().then(() => (drained = true));
    for (let written = 1; written <= 3; written++) {
      await until(() => r.groups.length === written);
      expect(drained).toBe(false);
      r.releaseAll();
    }
    await draining;
    expect(await Promise.all(all)).toEqual([2, 4, 6]);
    expect(gc.stats()).toEqual({ queued: 0, inFlight: 0, groups: 3, items: 3 });
    await gc.drain(); // idle: at once
  });
});
