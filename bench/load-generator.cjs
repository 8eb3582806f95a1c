'use strict';
/**
 * The bench's load generator in a process of its own (bench/run.ts forks one for every autocannon
 * run): the server's resident memory is then the bench process's own, with no load generator's
 * heap, connections or histograms in it, and the two share the machine's cores as two processes.
 * It receives `{ options }` (autocannon's options; a request's `setupRequest` is a module path),
 * answers `{ result }` or `{ error }`, and stops early on `'stop'`. With `options.workers` autocannon
 * loads the module in each of its worker threads; without, it runs on this process's main thread
 * and the module is required here. CommonJS and plain JavaScript so the fork starts without tsx.
 */
const autocannon = require('autocannon');

// p95, which the targets of docs/performance.md use, joins the percentiles autocannon computes
// from its merged histogram (the list exported by the hdr-histogram-percentiles-obj it loads).
{
  const fromAutocannon = require('node:module').createRequire(require.resolve('autocannon'));
  const { percentiles } = fromAutocannon('hdr-histogram-percentiles-obj');
  if (!percentiles.includes(95)) percentiles.push(95);
}

let instance = null;

process.on('message', (message) => {
  if (message === 'stop') {
    instance?.stop();
    return;
  }
  const options = message.options;
  if (!options.workers && options.requests) {
    options.requests = options.requests.map((r) => (typeof r.setupRequest === 'string' ? { ...r, setupRequest: require(r.setupRequest) } : r));
  }
  instance = autocannon(options, (error, result) => {
    instance = null;
    const reply = error ? { error: error instanceof Error ? error.message : String(error) } : { result: JSON.parse(JSON.stringify(result)) };
    process.send(reply, () => process.exit(0));
  });
});

process.on('disconnect', () => {
  instance?.stop();
  process.exit(0);
});
