import { errorCodes, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * The deadline of each request from its route's first hook to its answer: past it the request is
 * answered 503 `timeout` (errors.ts), and whatever the handler still does is not stopped, as with
 * Fastify's own `handlerTimeout`.
 *
 * Fastify's option was not kept: it gives every request an AbortController and aborts it on the
 * request's 'close', which Node emits as soon as a body has been read, so every POST paid for an
 * abort and its DOMException (about a tenth of the server thread of a small signed ingest,
 * docs/performance.md) and its `request.signal` reads as aborted in every POST handler. Nothing
 * here reads that signal; this keeps the timer alone.
 */
const timers = new WeakMap<FastifyRequest, NodeJS.Timeout>();

/** Starts `request`'s deadline of `timeoutMs`; at it the request is answered 503 `timeout` unless answered already. */
export function startDeadline(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): void {
  const timer = setTimeout(() => {
    timers.delete(request);
    if (reply.sent) return;
    const error = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, request.routeOptions.url ?? request.url);
    // An answer whose headers went out already (a stream) cannot become an error: it is cut.
    if (reply.raw.headersSent) {
      reply.raw.destroy(error);
      return;
    }
    void reply.send(error);
  }, timeoutMs);
  // A deadline keeps no process alive: closing the server waits for the requests themselves.
  timer.unref();
  timers.set(request, timer);
}

/** Ends `request`'s deadline (its answer went out). */
export function endDeadline(request: FastifyRequest): void {
  const timer = timers.get(request);
  if (timer === undefined) return;
  clearTimeout(timer);
  timers.delete(request);
}
