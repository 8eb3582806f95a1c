/**
 * Group commit: concurrent callers' writes share one transaction. Each caller submits an item and
 * waits; items that arrive while a group is being written are written together in the next one,
 * in one transaction and so with one commit (one WAL flush) for all of them. An idle queue writes
 * an item at once (after the current turn of the event loop, so that the requests read in the same
 * turn share it), so a lone caller waits no longer than it would alone.
 *
 * A caller's promise settles only after the group that holds its item has committed (or failed),
 * so "acknowledged" still means "durable". When a group of several items fails, each item is
 * written again alone, so one item that cannot be written fails only its own caller; `retryAlone`
 * can say that a failure (the database being down) would fail them all anyway.
 */
export interface GroupCommitOptions<I> {
  /** Writes the items in one transaction and answers each, in order. */
  write(items: I[]): Promise<unknown[]>;
  /** How much an item weighs against `maxWeight` (events in a batch); 1 unless given. */
  weight?(item: I): number;
  /** A group holds items up to this weight (an item heavier than it goes alone). */
  maxWeight: number;
  /** Groups written at the same time; more overlap one commit with the next group's work. */
  maxInFlight: number;
  /** False for failures where writing the items one by one cannot help. */
  retryAlone?(error: unknown): boolean;
}

export interface GroupCommit<I, O> {
  submit(item: I): Promise<O>;
  /** Resolves once every item submitted so far has been written (or has failed). */
  drain(): Promise<void>;
  /** Items waiting and groups being written, for metrics and tests. */
  stats(): { queued: number; inFlight: number; groups: number; items: number };
}

interface Pending<I> {
  item: I;
  weight: number;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export function createGroupCommit<I, O>(options: GroupCommitOptions<I>): GroupCommit<I, O> {
  const queue: Pending<I>[] = [];
  let inFlight = 0;
  let scheduled = false;
  let groups = 0;
  let items = 0;
  const idleWaiters: (() => void)[] = [];

  function takeGroup(): Pending<I>[] {
    const group: Pending<I>[] = [];
    let weight = 0;
    while (queue.length > 0) {
      const next = queue[0]!;
      if (group.length > 0 && weight + next.weight > options.maxWeight) break;
      group.push(queue.shift()!);
      weight += next.weight;
    }
    return group;
  }

  async function writeGroup(group: Pending<I>[]): Promise<void> {
    groups += 1;
    items += group.length;
    try {
      const answers = await options.write(group.map((p) => p.item));
      group.forEach((p, i) => p.resolve(answers[i]));
    } catch (error) {
      if (group.length === 1 || options.retryAlone?.(error) === false) {
        for (const p of group) p.reject(error);
        return;
      }
      for (const p of group) {
        try {
          const [answer] = await options.write([p.item]);
          p.resolve(answer);
        } catch (alone) {
          p.reject(alone);
        }
      }
    }
  }

  function pump(): void {
    scheduled = false;
    while (inFlight < options.maxInFlight && queue.length > 0) {
      const group = takeGroup();
      inFlight += 1;
      void writeGroup(group).finally(() => {
        inFlight -= 1;
        if (queue.length > 0) schedule();
        else if (inFlight === 0) for (const wake of idleWaiters.splice(0)) wake();
      });
    }
  }

  function schedule(): void {
    if (scheduled || inFlight >= options.maxInFlight) return;
    scheduled = true;
    setImmediate(pump);
  }

  return {
    submit(item: I): Promise<O> {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, weight: options.weight?.(item) ?? 1, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
    drain(): Promise<void> {
      if (queue.length === 0 && inFlight === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    stats: () => ({ queued: queue.length, inFlight, groups, items }),
  };
}
