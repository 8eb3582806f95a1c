import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../platform/clock.ts';
import type { Db } from '../../../platform/db/client.ts';
import type { SkipDecision } from '../../../platform/faults/index.ts';
import { blastRadiusAllowed, type ChaosKind, KIND_RULES } from '../kinds.ts';
import { type EffectLevers, KIND_EFFECTS, type KindEffect } from './effects.ts';
import * as repo from './repository.ts';

/** A run's holder renews its heartbeat every step; one silent this long is taken for stopped. */
export const HEARTBEAT_LEASE_MS = 15_000;
/** How often the holder of an open run steps it (window end, probes, heartbeat). */
export const STEP_INTERVAL_MS = 1_000;

export type RunTrigger = 'schedule' | 'manual';

/** Why a run cannot start now: the schedule's stats and the manual run's 409 both name it. */
export type StartRefusal =
  | 'not-active'
  | 'chaos-off'
  | 'blast-radius-not-allowed'
  | 'frozen'
  | 'critical-drift-open'
  | 'run-open'
  | 'cannot-run';

export type StartOutcome = { ok: true; run: repo.RunWithExperiment } | { ok: false; reason: StartRefusal; human: string };

export interface RunGates {
  /** OBSERVATORY_CHAOS_ALLOW. */
  allow: readonly string[];
  frozen(): Promise<{ frozen: boolean; reason: string }>;
  /** Open or acknowledged critical drift events; null when the deployment has no drift inbox. */
  unresolvedCriticalDrift(): Promise<number | null>;
}

export interface ChaosRunner {
  readonly instanceId: string;
  /** The gate that holds for every experiment now (chaos off, frozen, critical drift, a run open), or null. */
  closedGate(): Promise<{ reason: StartRefusal; human: string } | null>;
  /** Starts a run of `experiment` now, if every gate lets it. */
  start(experiment: repo.ExperimentRow, trigger: RunTrigger): Promise<StartOutcome>;
  /** Moves this instance's run on (window end, undo, recovery probe) and closes lapsed runs of anyone. */
  step(now?: Date): Promise<void>;
  /** Ends the open run, wherever it runs, as `aborted` with `reason`; undoes it here if held here. */
  abortOpen(reason: string): Promise<repo.RunWithExperiment | null>;
  /** Start-up: nothing injected survives a restart; runs left open by a stopped instance are closed. */
  recoverAtStart(): Promise<void>;
  /** The scheduler's question before each scheduled run (the cron-skip-one kind). */
  beforeScheduledRun(job: string, fireTime: Date): Promise<SkipDecision>;
  /** Stops stepping; a run held here is undone and ends `aborted`. */
  close(): Promise<void>;
}

export function createChaosRunner(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  levers: EffectLevers;
  gates: RunGates;
  /** Step an open run every STEP_INTERVAL_MS; false only where a test steps by hand. */
  autoStep: boolean;
}): ChaosRunner {
  const { db, clock, log, levers, gates } = deps;
  const instanceId = randomUUID();
  /** The run whose effects this process holds. */
  let held: { id: string; kind: ChaosKind } | null = null;
  let timer: NodeJS.Timeout | null = null;
  // start, step and abort never interleave in one process.
  let chain: Promise<unknown> = Promise.resolve();
  const serially = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => {});
    return next;
  };

  const effectOf = (kind: string): KindEffect => KIND_EFFECTS[kind as ChaosKind];
  const staleBefore = (now: Date) => new Date(now.getTime() - HEARTBEAT_LEASE_MS);

  function startTicking(): void {
    if (timer || !deps.autoStep) return;
    timer = setInterval(() => {
      void serially(() => stepNow(clock.now())).catch((error: unknown) => log.warn({ err: error }, 'chaos step failed'));
    }, STEP_INTERVAL_MS);
    timer.unref();
  }
  function stopTicking(): void {
    if (timer) clearInterval(timer);
    timer = null;
  }

  async function undoHeld(): Promise<string | null> {
    if (!held) return null;
    const { id, kind } = held;
    held = null;
    const run = await repo.getRunView(db, id);
    if (!run) return null;
    try {
      await effectOf(kind).undo(run, levers);
      return null;
    } catch (error) {
      log.error({ err: error, runId: id }, 'chaos undo failed');
      return error instanceof Error ? error.message : String(error);
    }
  }

  async function end(id: string, fields: Pick<repo.RunRow, 'outcome' | 'observedRecoverySec' | 'errorText' | 'abortReason'> & { measurements?: unknown }): Promise<void> {
    const now = clock.now();
    await repo.updateOpenRun(db, id, { ...fields, endedAt: now, phase: 'ended', heartbeatAt: now });
  }

  async function closeLapsed(now: Date): Promise<void> {
    for (const run of await repo.lapsedOpenRuns(db, now, staleBefore(now), instanceId)) {
      if (held?.id === run.id) await undoHeld();
      const expired = run.expiresAt.getTime() < now.getTime();
      await end(run.id, {
        outcome: 'partial',
        observedRecoverySec: null,
        abortReason: null,
        errorText: expired
          ? 'the run outlived its expiry (window and recovery bound) without ending; it was closed and nothing it injected is held any more'
          : 'the instance running it stopped renewing its hold (a crash or restart); what it injected ended with its process, and the run was closed',
      });
      log.warn({ runId: run.id, kind: run.kind }, 'closed a lapsed chaos run');
    }
  }

  async function closedGate(now: Date): Promise<{ ok: false; reason: StartRefusal; human: string } | null> {
    if (gates.allow.length === 0) return { ok: false, reason: 'chaos-off', human: 'Chaos is off in this deployment: OBSERVATORY_CHAOS_ALLOW is not set.' };
    const freeze = await gates.frozen();
    if (freeze.frozen) return { ok: false, reason: 'frozen', human: `Chaos is frozen${freeze.reason ? `: ${freeze.reason}` : ''}.` };
    const drift = await gates.unresolvedCriticalDrift();
    if (drift !== null && drift > 0) return { ok: false, reason: 'critical-drift-open', human: `${drift} critical drift event(s) are unresolved; no chaos runs until they are resolved.` };
    await closeLapsed(now);
    if (await repo.openRun(db)) return { ok: false, reason: 'run-open', human: 'Another chaos run is open; one runs at a time.' };
    return null;
  }

  async function refusal(experiment: repo.ExperimentRow, now: Date): Promise<Extract<StartOutcome, { ok: false }> | null> {
    if (experiment.status !== 'active') return { ok: false, reason: 'not-active', human: `Experiment ${experiment.slug} is ${experiment.status}; only active experiments run.` };
    const closed = await closedGate(now);
    if (closed) return closed;
    if (!blastRadiusAllowed(gates.allow, experiment.blastRadius)) {
      return { ok: false, reason: 'blast-radius-not-allowed', human: `Blast radius ${experiment.blastRadius} is not in OBSERVATORY_CHAOS_ALLOW (${gates.allow.join(',')}).` };
    }
    const cannot = effectOf(experiment.kind).cannotRun?.(experiment, levers) ?? null;
    if (cannot !== null) return { ok: false, reason: 'cannot-run', human: `Experiment ${experiment.slug} cannot run: ${cannot}.` };
    return null;
  }

  async function startNow(experiment: repo.ExperimentRow, trigger: RunTrigger): Promise<StartOutcome> {
    const now = clock.now();
    const refused = await refusal(experiment, now);
    if (refused) return refused;
    const rules = KIND_RULES[experiment.kind as ChaosKind];
    const windowEndsAt = new Date(now.getTime() + rules.windowSec * 1000);
    const id = randomUUID();
    const inserted = await repo.insertRun(db, {
      id,
      experimentId: experiment.id,
      kind: experiment.kind,
      target: experiment.target,
      recoverySloSec: experiment.recoverySloSec,
      trigger,
      phase: 'injected',
      startedAt: now,
      windowEndsAt,
      undoneAt: null,
      expiresAt: new Date(windowEndsAt.getTime() + rules.maxWindowSec * 1000 + HEARTBEAT_LEASE_MS),
      heartbeatAt: now,
      instanceId,
      endedAt: null,
      outcome: 'partial',
      observedRecoverySec: null,
      errorText: null,
      abortReason: null,
      measurements: {},
    });
    if (!inserted) return { ok: false, reason: 'run-open', human: 'Another chaos run is open; one runs at a time.' };
    held = { id, kind: experiment.kind as ChaosKind };
    const run = (await repo.getRunView(db, id))!;
    try {
      const measured = await effectOf(experiment.kind).inject(run, levers);
      await repo.updateOpenRun(db, id, { measurements: { inject: measured } });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const undoError = await undoHeld();
      await end(id, { outcome: 'partial', observedRecoverySec: null, abortReason: null, errorText: `the fault could not be injected: ${message}${undoError ? `; undo failed: ${undoError}` : ''}` });
    }
    if (held) startTicking();
    return { ok: true, run: (await repo.getRunView(db, id))! };
  }

  /** The outcome of a recovered run: the objective decides ok or sla-breach; an effect that never showed is partial. */
  function judged(run: repo.RunRow, observedSec: number): Pick<repo.RunRow, 'outcome' | 'errorText'> {
    const inject = ((run.measurements ?? {}) as { inject?: Record<string, unknown> }).inject ?? {};
    const unseen = effectNotSeen(run.kind as ChaosKind, inject, levers.latencyMs);
    if (unseen !== null) return { outcome: 'partial', errorText: unseen };
    return observedSec <= run.recoverySloSec
      ? { outcome: 'ok', errorText: null }
      : { outcome: 'sla-breach', errorText: `recovery took ${observedSec.toFixed(3)} s, over the objective of ${run.recoverySloSec} s` };
  }

  async function stepNow(now: Date): Promise<void> {
    await closeLapsed(now);
    if (!held) return stopTicking();
    const run = await repo.getRunView(db, held.id);
    if (!run || run.endedAt !== null) {
      // Closed elsewhere (a freeze on another instance): undo here too.
      await undoHeld();
      return stopTicking();
    }
    const effect = effectOf(run.kind);
    if (run.phase === 'injected') {
      if (now.getTime() >= run.windowEndsAt.getTime() || effect.doneEarly?.(run)) {
        if (run.kind === 'cron-skip-one' && run.phase === 'injected') {
          // The job never came due inside the window: nothing was skipped.
          await undoHeld();
          await end(run.id, { outcome: 'partial', observedRecoverySec: null, abortReason: null, errorText: `job ${run.target} did not come due within the ${KIND_RULES['cron-skip-one'].windowSec} s window, so no run was skipped` });
          return stopTicking();
        }
        const { id, kind } = held;
        const undoError = await undoHeld();
        if (undoError !== null) {
          await end(id, { outcome: 'partial', observedRecoverySec: null, abortReason: null, errorText: `undo failed: ${undoError}` });
          return stopTicking();
        }
        // Held again for the recovery phase (probes), with nothing injected.
        held = { id, kind };
        await repo.updateOpenRun(db, id, { phase: 'recovering', undoneAt: now, heartbeatAt: now });
        return;
      }
    } else if (run.phase === 'recovering') {
      const undoneAt = run.undoneAt ?? now;
      const probe = await effect.probe(run, levers);
      const measurements = { ...((run.measurements ?? {}) as object), probe: probe.detail };
      if (probe.green) {
        const at = probe.at ?? now;
        const observedSec = Math.max(0, (at.getTime() - undoneAt.getTime()) / 1000);
        held = null;
        await end(run.id, { ...judged(run, observedSec), observedRecoverySec: observedSec, abortReason: null, measurements });
        return stopTicking();
      }
      const boundSec = KIND_RULES[run.kind as ChaosKind].maxWindowSec;
      if (now.getTime() - undoneAt.getTime() > boundSec * 1000) {
        held = null;
        await end(run.id, {
          outcome: 'sla-breach',
          observedRecoverySec: null,
          abortReason: null,
          errorText: `not healthy again within ${boundSec} s of the window's end (the ${run.kind} probe stayed red)`,
          measurements,
        });
        return stopTicking();
      }
    }
    await repo.updateOpenRun(db, run.id, { heartbeatAt: now });
  }

  return {
    instanceId,
    closedGate: () =>
      serially(async () => {
        const closed = await closedGate(clock.now());
        return closed && { reason: closed.reason, human: closed.human };
      }),
    start: (experiment, trigger) => serially(() => startNow(experiment, trigger)),
    step: (now) => serially(() => stepNow(now ?? clock.now())),
    abortOpen: (reason) =>
      serially(async () => {
        const open = await repo.openRun(db);
        if (!open) return null;
        const undoError = held?.id === open.id ? await undoHeld() : null;
        await end(open.id, { outcome: 'aborted', observedRecoverySec: null, abortReason: reason, errorText: undoError ? `undo failed: ${undoError}` : null });
        return repo.getRunView(db, open.id);
      }),
    recoverAtStart: () =>
      serially(async () => {
        // A restarted process holds no fault; the database's session default is set back explicitly
        // in case this process shares its database with the one that stopped (tests, one PGlite).
        await levers.database.setReadOnly(false);
        await closeLapsed(clock.now());
      }),
    async beforeScheduledRun(job, fireTime) {
      const now = clock.now();
      const taken = await repo.takeCronSkip(db, job, now, staleBefore(now), instanceId, (run) => ({
        ...((run.measurements ?? {}) as object),
        skipped: { job, fireTime: fireTime.toISOString(), at: now.toISOString() },
      }));
      if (taken === null) return { skip: false };
      return { skip: true, reason: `skipped by chaos run ${taken.id} (cron-skip-one)`, stats: { chaosRunId: taken.id } };
    },
    async close() {
      stopTicking();
      await serially(async () => {
        if (!held) return;
        const id = held.id;
        const undoError = await undoHeld();
        await end(id, { outcome: 'aborted', observedRecoverySec: null, abortReason: 'the service stopped during the run', errorText: undoError ? `undo failed: ${undoError}` : null });
      }).catch((error: unknown) => log.warn({ err: error }, 'chaos close failed'));
    },
  };
}

/** Why the fault did not show while injected (the run is then `partial`), or null. */
export function effectNotSeen(kind: ChaosKind, inject: Record<string, unknown>, latencyMs: number): string | null {
  switch (kind) {
    case 'synthetic-latency':
      return typeof inject.duringWindowMs === 'number' && inject.duringWindowMs >= latencyMs * 0.9
        ? null
        : `the probe request during the window took ${String(inject.duringWindowMs)} ms, not the ${latencyMs} ms injected`;
    case 'prisma-readonly-window':
      return inject.writeRefusedDuringWindow === true ? null : 'a write was accepted during the read-only window';
    case 'bridge-token-rotate-rehearsal': {
      const failed = (inject.stagedFailed ?? []) as { region: string; reason: string }[];
      return failed.length === 0 ? null : `peer regions refused the staged token: ${failed.map((f) => `${f.region} (${f.reason})`).join(', ')}`;
    }
    default:
      return null;
  }
}
