import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A real HTTP server on 127.0.0.1 that records every request and answers as told. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  port: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: ReceivedRequest[];
  /** Requests whose path is `path` (query included). */
  to(path: string): ReceivedRequest[];
  /** How to answer a request; default 200. Return 'hang' to never answer. */
  respond: (request: ReceivedRequest, nth: number) => { status: number; headers?: Record<string, string>; body?: string } | 'hang';
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const hanging = new Set<http.ServerResponse>();
  const receiver = {
    requests,
    to: (path: string) => requests.filter((r) => r.path === path),
    respond: () => ({ status: 200 }),
  } as unknown as Receiver;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      const answer = receiver.respond(received, receiver.to(received.path).length);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? 'ok');
    });
  });
  const port = await listenAvoiding(server, handedOutClosedPorts);
  receiver.port = port;
  receiver.origin = `http://127.0.0.1:${port}`;
  receiver.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/**
 * Ports closedPort handed out in this process. The kernel may give a freed port to the next
 * listen(0), so a receiver started after closedPort() could land on the "dead" port and answer
 * for it: receivers skip these.
 */
const handedOutClosedPorts = new Set<number>();

async function listenAvoiding(server: http.Server, avoid: ReadonlySet<number>): Promise<number> {
  for (;;) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    if (!avoid.has(port)) return port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A port on 127.0.0.1 where nothing listens (it was just freed); receivers in this process never take it. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  const port = await listenAvoiding(server, handedOutClosedPorts);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  handedOutClosedPorts.add(port);
  return port;
}
