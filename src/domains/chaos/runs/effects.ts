import type { BridgeTokens, LatencyFaults, RuntimeFlags } from '../../../platform/faults/index.ts';
import type { ChaosKind } from '../kinds.ts';
import type { RunRow } from './repository.ts';

/** What a kind's effect and probe may touch: the platform's fault levers and a few reads. */
export interface EffectLevers {
  latency: LatencyFaults;
  latencyMs: number;
  flags: RuntimeFlags;
  database: { setReadOnly(on: boolean): Promise<void> };
  bridgeTokens: BridgeTokens;
  /** One in-process GET through the whole HTTP stack (hooks included): status and wall time. */
  request(url: string): Promise<{ status: number; ms: number }>;
  /** The URL a latency probe asks for a target: the endpoint's path with its example params, or the prefix. */
  probeUrlFor(target: string): string;
  /** Asks every active peer region through the bridge with the token sent now. Null: no federation. */
  askPeers(): Promise<{ answered: string[]; failed: { region: string; reason: string }[] } | null>;
  /** When the first run of `job` started after `after` ended ok; null while there is none. */
  okJobRunAfter(job: string, after: Date): Promise<{ finishedAt: Date } | null>;
  /** A write through the ordinary path (refused while the database is read-only). */
  probeWrite(run: RunRow): Promise<void>;
}

/** A probe's answer: green, and what it saw; `at` overrides the time recovery is measured to (a job run's end). */
export interface ProbeResult {
  green: boolean;
  detail: Record<string, unknown>;
  at?: Date;
}

/**
 * One kind's effect on this service. `inject` turns the fault on and may measure it (its answer is
 * stored in the run's measurements); it throws when it cannot act (the run then ends `partial`).
 * `undo` must be safe to call twice and after a failed inject. `probe` is the kind's health check
 * after the window: green once the thing the fault touched works again.
 */
export interface KindEffect {
  inject(run: RunRow, levers: EffectLevers): Promise<Record<string, unknown>>;
  /** True when the window may close before `windowEndsAt` (the fault has done all it does). */
  doneEarly?(run: RunRow): boolean;
  undo(run: RunRow, levers: EffectLevers): Promise<void>;
  probe(run: RunRow, levers: EffectLevers): Promise<ProbeResult>;
  /** A problem that stops the run from starting at all (nothing to rehearse against), or null. */
  cannotRun?(run: Pick<RunRow, 'target'>, levers: EffectLevers): string | null;
}

const latency: KindEffect = {
  async inject(run, levers) {
    levers.latency.add(run.id, run.target, levers.latencyMs);
    const url = levers.probeUrlFor(run.target);
    const seen = await levers.request(url);
    return { injectedMs: levers.latencyMs, probeUrl: url, duringWindowMs: Math.round(seen.ms), duringWindowStatus: seen.status };
  },
  async undo(run, levers) {
    levers.latency.remove(run.id);
  },
  async probe(run, levers) {
    const url = levers.probeUrlFor(run.target);
    const seen = await levers.request(url);
    // Green once a request is back well under the added delay: the fault no longer acts.
    return { green: seen.ms < levers.latencyMs / 2, detail: { afterWindowMs: Math.round(seen.ms), afterWindowStatus: seen.status } };
  },
};

const cronSkip: KindEffect = {
  // Nothing to turn on in-process: the scheduler asks the run table before each scheduled run.
  async inject() {
    return {};
  },
  async undo() {},
  async probe(run, levers) {
    const since = run.undoneAt ?? run.startedAt;
    const next = await levers.okJobRunAfter(run.target, since);
    if (next === null) return { green: false, detail: { nextOkRun: null } };
    return { green: true, detail: { nextOkRunFinishedAt: next.finishedAt.toISOString() }, at: next.finishedAt };
  },
};

const flagFlip: KindEffect = {
  async inject(run, levers) {
    const before = levers.flags.enabled(run.target);
    levers.flags.override(run.id, run.target, !before);
    return { flag: run.target, from: before, to: levers.flags.enabled(run.target) };
  },
  async undo(run, levers) {
    levers.flags.release(run.id);
  },
  async probe(run, levers) {
    const definition = levers.flags.definitions().find((d) => d.name === run.target);
    const now = levers.flags.enabled(run.target);
    return { green: definition !== undefined && now === definition.default, detail: { flagNow: now } };
  },
  cannotRun(run, levers) {
    return levers.flags.definitions().some((d) => d.name === run.target) ? null : `there is no runtime flag named ${run.target}`;
  },
};

const readOnlyWindow: KindEffect = {
  async inject(run, levers) {
    await levers.database.setReadOnly(true);
    // Seen from outside: an ordinary write is refused now.
    const refused = await levers.probeWrite(run).then(
      () => false,
      () => true,
    );
    return { writeRefusedDuringWindow: refused };
  },
  async undo(_run, levers) {
    await levers.database.setReadOnly(false);
  },
  async probe(run, levers) {
    try {
      await levers.probeWrite(run);
      return { green: true, detail: { writeAccepted: true } };
    } catch (error) {
      return { green: false, detail: { writeAccepted: false, error: error instanceof Error ? error.message : String(error) } };
    }
  },
};

const bridgeRotate: KindEffect = {
  async inject(run, levers) {
    levers.bridgeTokens.useStaged(true);
    const asked = await levers.askPeers();
    const chosen = pickPeers(asked, run.target);
    if (chosen.answered.length + chosen.failed.length === 0) {
      throw new Error(run.target === '*' ? 'there is no active peer region to rehearse against' : `${run.target} is not an active peer region`);
    }
    return { sentStagedToken: true, stagedAnswered: chosen.answered, stagedFailed: chosen.failed };
  },
  // The rehearsal is one round of asking: the window closes as soon as it is done.
  doneEarly: () => true,
  async undo(_run, levers) {
    if (levers.bridgeTokens.usingStaged()) levers.bridgeTokens.useStaged(false);
  },
  async probe(run, levers) {
    const asked = await levers.askPeers();
    const chosen = pickPeers(asked, run.target);
    return { green: chosen.failed.length === 0 && chosen.answered.length > 0, detail: { currentAnswered: chosen.answered, currentFailed: chosen.failed } };
  },
  cannotRun(_run, levers) {
    if (levers.bridgeTokens.outgoing() === null) return 'this deployment has no OBSERVATORY_BRIDGE_TOKEN, so there is no token to rotate';
    if (levers.bridgeTokens.staged() === null) return 'no staged token is configured (OBSERVATORY_BRIDGE_TOKEN_NEXT), so there is nothing to rotate to';
    return null;
  },
};

function pickPeers(asked: Awaited<ReturnType<EffectLevers['askPeers']>>, target: string) {
  if (asked === null) return { answered: [] as string[], failed: [] as { region: string; reason: string }[] };
  const wanted = (region: string) => target === '*' || region === target;
  return { answered: asked.answered.filter(wanted), failed: asked.failed.filter((f) => wanted(f.region)) };
}

export const KIND_EFFECTS: Record<ChaosKind, KindEffect> = {
  'synthetic-latency': latency,
  'cron-skip-one': cronSkip,
  'feature-flag-flip': flagFlip,
  'prisma-readonly-window': readOnlyWindow,
  'bridge-token-rotate-rehearsal': bridgeRotate,
};
