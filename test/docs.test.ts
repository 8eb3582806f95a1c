import { createCatalogue } from '../src/domains/compliance/frameworks/catalogue.ts';
import { PREDICATE_KEYS } from '../src/domains/compliance/evaluation/predicates.ts';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/platform/clock.ts';
import { runJob, startTestApp, type TestApp, V1 } from './helpers/app.ts';
import { ingestEmpire } from './helpers/empire.ts';

/**
 * What the docs state about the running service, held to the service: the job table of
 * docs/operations.md against the scheduler's jobs, and docs/graph/query.md's worked lineage example run
 * as written against a materialised graph.
 */

const root = new URL('..', import.meta.url).pathname;
const doc = (name: string) => readFileSync(`${root}docs/${name}`, 'utf8');

const clock = new ManualClock('2026-11-26T10:00:00.000Z');
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ clock });
});
afterAll(async () => t?.close());

/** The rows `| \`job\` | \`schedule\` or — | … |` of the table under "## Jobs" in operations.md. */
function documentedJobs(): { name: string; schedule: string | null }[] {
  const ops = doc('operations.md');
  const section = ops.slice(ops.indexOf('\n## Jobs\n'), ops.indexOf('\n## ', ops.indexOf('\n## Jobs\n') + 1));
  const rows: { name: string; schedule: string | null }[] = [];
  for (const line of section.split('\n')) {
    const match = /^\| `([a-z0-9-]+)` \| (?:`([^`]+)`|—) \|/.exec(line);
    if (match) rows.push({ name: match[1]!, schedule: match[2] ?? null });
  }
  return rows;
}

describe('docs/operations.md job table', () => {
  it('lists exactly the scheduler\'s jobs, with their schedules', () => {
    const registered = t.app.scheduler.jobs().map((j) => ({ name: j.name, schedule: j.schedule }));
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(documentedJobs().sort(byName)).toEqual([...registered].sort(byName));
  });
});

describe('docs/graph/query.md worked example 4 (lineage)', () => {
  /** The query text of the numbered example, as the doc shows it. */
  function example(n: number): string {
    const text = doc('graph/query.md');
    const start = text.indexOf(`\n${n}. `);
    const block = /```\n([\s\S]*?)```/.exec(text.slice(start))!;
    return block[1]!.split('\n').map((l) => l.trim()).join(' ').trim();
  }

  beforeAll(async () => {
    // evt-000124 caused by 123, caused by 122, caused by 121: three steps back reach 123, 122 and 121.
    const chain = await ingestEmpire(t, 'crawler-lab', [
      { id: 'evt-000120', eventType: 'crawl.scheduled' },
      { id: 'evt-000121', eventType: 'crawl.scheduled', causedBy: 'evt-000120' },
      { id: 'evt-000122', eventType: 'crawl.started', causedBy: 'evt-000121' },
      { id: 'evt-000123', eventType: 'crawl.page', causedBy: 'evt-000122' },
      { id: 'evt-000124', eventType: 'crawl.completed', causedBy: 'evt-000123' },
    ]);
    expect(chain.statusCode, chain.body).toBe(200);
    // The same sender id on another toolset, with a cause of its own: not part of the answer.
    const other = await ingestEmpire(t, 'probe-kit', [
      { id: 'evt-000099', eventType: 'probe.sent' },
      { id: 'evt-000124', eventType: 'probe.answered', causedBy: 'evt-000099' },
    ]);
    expect(other.statusCode, other.body).toBe(200);
    clock.advance(2 * 60_000);
    await runJob(t, 'graph-materialise');
  });

  it('answers the causes up to three steps back, named by the ids the toolset sent', async () => {
    const query = example(4);
    expect(query).toContain("senderId: 'evt-000124'");
    const res = await t.call({ method: 'POST', url: `${V1}/empire/graph/query`, payload: { query } });
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().rows as Record<string, unknown>[];
    expect(rows.map((r) => [r['cause.senderId'], r['cause.eventType']]).sort()).toEqual([
      ['evt-000121', 'crawl.scheduled'],
      ['evt-000122', 'crawl.started'],
      ['evt-000123', 'crawl.page'],
    ]);
    expect(rows.map((r) => (r.chain as unknown[]).length).sort()).toEqual([1, 2, 3]);
  });

  it('the key of an event node is its eventId, not the id the toolset sent', async () => {
    const byKey = await t.call({ method: 'POST', url: `${V1}/empire/graph/query`, payload: { query: "MATCH (e:EmpireEvent {key: 'evt-000124'}) RETURN e.key" } });
    expect(byKey.json().rows).toEqual([]);
    const ingested = await ingestEmpire(t, 'crawler-lab', [{ id: 'evt-000124', eventType: 'crawl.completed' }]);
    const eventId = ingested.json().results[0].eventId as string;
    const res = await t.call({
      method: 'POST',
      url: `${V1}/empire/graph/query`,
      payload: { query: `MATCH (e:EmpireEvent {key: '${eventId}'})-[chain:CAUSED_BY*1..3]->(cause:EmpireEvent) RETURN cause.senderId` },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rows.map((r: Record<string, unknown>) => r['cause.senderId']).sort()).toEqual(['evt-000121', 'evt-000122', 'evt-000123']);
  });
});

describe('docs/compliance/README.md', () => {
  it('lists every control of the shipped frameworks with its predicate, and every predicate', () => {
    const text = doc('compliance/README.md');
    for (const framework of createCatalogue().frameworks) {
      for (const c of framework.controls) expect(text, c.id).toContain(`| \`${c.controlId}\` | ${c.title} | ${c.severity} | \`${c.predicateKey}\` |`);
    }
    for (const key of PREDICATE_KEYS) expect(text, key).toMatch(new RegExp(`^\\| \`${key}\` \\|`, 'm'));
  });
});

