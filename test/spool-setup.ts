import { relative } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { recordResponses, setContext, spoolActive } from './helpers/spool.ts';

// Runs in every test worker before each test file (vitest `setupFiles`): when the run has a
// secret-leak spool (test/global-setup.ts), record every response and mark which test each
// spooled line belongs to.
if (spoolActive()) {
  recordResponses();
  const file = () => relative(process.cwd(), expect.getState().testPath ?? '?');
  const test = () => expect.getState().currentTestName ?? '?';
  beforeAll(() => setContext(file(), '(beforeAll)'));
  beforeEach(() => setContext(file(), test()));
  afterEach(() => setContext(file(), `(after) ${test()}`));
}
