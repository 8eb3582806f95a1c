'use strict';
/**
 * autocannon `setupRequest` module for the empire ingest scenario (bench/scenarios.ts). The
 * scenario's setup signs every batch up front and writes one JSON body per line to
 * BENCH_EMPIRE_BODIES; this module hands them out in turn to every connection of its worker, so
 * each request carries events nobody sent before and the load generator signs nothing during the
 * load. The warm-up and the measured load run in different workers: the position is kept in
 * `<BENCH_EMPIRE_BODIES>.next` so the second carries on where the first stopped. Past the last
 * body it starts again (the events are then duplicates; the scenario's counters show it).
 */
const { readFileSync, writeFileSync } = require('node:fs');

let bodies = null;
let next = 0;

module.exports = function setupRequest(request) {
  const file = process.env.BENCH_EMPIRE_BODIES;
  if (bodies === null) {
    bodies = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    try {
      next = Number(readFileSync(`${file}.next`, 'utf8')) || 0;
    } catch {
      next = 0;
    }
  }
  request.body = bodies[next++ % bodies.length];
  writeFileSync(`${file}.next`, String(next));
  return request;
};
