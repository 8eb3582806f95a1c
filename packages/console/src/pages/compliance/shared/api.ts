import { api, unwrap } from '../../../api/client';

/** The compliance reads and writes, typed from the served OpenAPI document. */
export const EVALUATE_JOB = 'compliance-evaluate';
export const OUTCOMES = ['pass', 'fail', 'manual-review', 'n/a'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const loadPosture = () => unwrap(api.GET('/api/observatory/v1/compliance/posture'));
export const loadFramework = (framework: string) => unwrap(api.GET('/api/observatory/v1/compliance/frameworks/{framework}', { params: { path: { framework } } }));
export const loadReplay = (evaluationId: string) => unwrap(api.GET('/api/observatory/v1/compliance/replay/{evaluationId}', { params: { path: { evaluationId } } }));
export type OverrideBody = { controlId: string; framework: string; outcome: Outcome; note: string; observed?: unknown };
export const overrideControl = (body: OverrideBody) => unwrap(api.POST('/api/observatory/v1/compliance/override', { body }));
/** The hourly evaluation, run now through the ops job runner (as Ops → Jobs does). */
export const runEvaluation = () => unwrap(api.POST('/api/observatory/v1/ops/jobs/{job}/run', { params: { path: { job: EVALUATE_JOB } }, body: {} }));
export const loadManifest = () => unwrap(api.GET('/api/observatory/v1/manifest'));

/** Fails the console's build when the service's list of choices and the page's differ. */
export type SameChoices<Listed extends string, Served extends string> = [Exclude<Served, Listed>, Exclude<Listed, Served>] extends [never, never] ? true : never;
export const outcomesAreTheServices: SameChoices<Outcome, NonNullable<Control['latestOutcome']>> = true;

export type PostureRow = Awaited<ReturnType<typeof loadPosture>>['frameworks'][number];
export type Control = Awaited<ReturnType<typeof loadFramework>>['controls'][number];
export type Replay = Awaited<ReturnType<typeof loadReplay>>;

/** The controls page of one framework, with one control opened when given. */
export const controlsPath = (framework: string, controlId?: string) =>
  `/compliance/controls?${new URLSearchParams({ framework, ...(controlId ? { control: controlId } : {}) })}`;

export const createBundle = (framework: string) => unwrap(api.POST('/api/observatory/v1/compliance/bundle', { body: { framework } }));
export type Bundle = Awaited<ReturnType<typeof createBundle>>;
export type Artifact = Bundle['artifacts'][number];

export const loadNarration = () => unwrap(api.GET('/api/observatory/v1/compliance/narrator'));
export const narrate = () => unwrap(api.POST('/api/observatory/v1/compliance/narrator', { body: {} }));
export type Narration = Awaited<ReturnType<typeof loadNarration>>;

export const loadSubprocessors = (includeArchived: boolean) =>
  unwrap(api.GET('/api/observatory/v1/compliance/subprocessors', { params: { query: includeArchived ? { includeArchived: '1' } : {} } }));
export type Subprocessor = Awaited<ReturnType<typeof loadSubprocessors>>['rows'][number];
export const SUBPROCESSOR_ROLES = ['ai', 'auth', 'billing', 'cdn', 'email', 'infra', 'observability', 'other', 'storage'] as const;
export type SubprocessorRole = (typeof SUBPROCESSOR_ROLES)[number];
export const rolesAreTheServices: SameChoices<SubprocessorRole, Subprocessor['role']> = true;
export type SubprocessorBody = {
  name: string;
  role: SubprocessorRole;
  dataAccess: string;
  region: string;
  notes: string;
  websiteUrl: string | null;
  contractUrl: string | null;
  markReviewed: boolean;
};
export const upsertSubprocessor = (body: SubprocessorBody) => unwrap(api.POST('/api/observatory/v1/compliance/subprocessors', { body }));
export const actOnSubprocessor = (id: string, action: 'review' | 'archive') =>
  unwrap(api.POST('/api/observatory/v1/compliance/subprocessors/{id}', { params: { path: { id } }, body: { action } }));
