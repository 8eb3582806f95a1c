/**
 * Faults this service can have injected into itself, on purpose and for a bounded window: the
 * levers the chaos domain pulls (docs/chaos/README.md). Platform code consults them at the one place each
 * fault acts (the HTTP server, the scheduler, the database client, the bridge client, the flags
 * read by domains); the chaos domain decides when a fault is on and undoes it. Nothing here knows
 * about experiments or runs.
 *
 * Every fault is held by this process only, so a crash or restart clears it with the process
 * (the run records in the database say what was injected and until when).
 */

/** Added latency on the routes a target names: an endpoint id (`searchTopics`) or a path prefix (`/v1/agent-api/`). */
export interface LatencyFaults {
  /** Adds `ms` of delay to every request matching `target` until `remove(holder)`. */
  add(holder: string, target: string, ms: number): void;
  remove(holder: string): void;
  /** The delay for a request (the largest of the matching injections); 0 when none matches. */
  delayFor(request: { endpointId: string | null; url: string }): number;
  /** True when `target` names something requests can match: a registered endpoint id or a path prefix starting with `/`. */
  isTarget(target: string): boolean;
}

/** A documented runtime flag (docs/chaos/README.md, "Runtime flags"). */
export interface RuntimeFlagDefinition {
  name: string;
  description: string;
  default: boolean;
}

export interface RuntimeFlags {
  definitions(): readonly RuntimeFlagDefinition[];
  /** The flag's value now: the override if one is held, else its default. Unknown names throw. */
  enabled(name: string): boolean;
  /** Holds `value` for the flag until `release(holder)`. */
  override(holder: string, name: string, value: boolean): void;
  release(holder: string): void;
}

/** The scheduler asks before each scheduled run whether it is to be skipped (the cron-skip-one kind). */
export type SkipDecision = { skip: false } | { skip: true; reason: string; stats: Record<string, unknown> };
export type BeforeScheduledRun = (job: string, fireTime: Date) => Promise<SkipDecision>;

/** The bridge token this instance sends, and the ones it accepts (current, and the staged next one). */
export interface BridgeTokens {
  /** What bridge calls to peers carry now: the current token, or the staged one during a rotation rehearsal. */
  outgoing(): string | null;
  /** True when a presented token is the current or the staged one. */
  accepts(presented: string): boolean;
  /** The staged token (OBSERVATORY_BRIDGE_TOKEN_NEXT), or null when none is configured. */
  staged(): string | null;
  /** Sends the staged token (true) or the current one (false). Throws when no token is staged. */
  useStaged(on: boolean): void;
  usingStaged(): boolean;
}

/**
 * Where a fault acts: the blast radius of a chaos experiment, and what OBSERVATORY_CHAOS_ALLOW
 * lists (`http` latency, `bridge` token rotation, `scheduler` skipped runs, `flags` runtime flags,
 * `database` read-only sessions).
 */
export const FAULT_CATEGORIES = ['http', 'bridge', 'scheduler', 'flags', 'database'] as const;
export type FaultCategory = (typeof FAULT_CATEGORIES)[number];
