import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeTransport } from './transport.ts';

const servers: Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

async function echo(answer: (body: string, respond: (status: number, text: string) => void) => void) {
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => answer(Buffer.concat(chunks).toString('utf8'), (status, text) => res.writeHead(status, { 'content-type': 'application/json' }).end(text)));
  });
  server.on('connection', () => (connections += 1));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`, connections: () => connections };
}

describe('the node:http transport', () => {
  it('sends the bytes and headers it is given and reads the whole answer, on one kept connection', async () => {
    const site = await echo((body, respond) => respond(200, JSON.stringify({ got: body, long: 'x'.repeat(200_000) })));
    const transport = nodeTransport(site.url, 2000);
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i += 1) {
      const answer = await transport.post(Buffer.from(`{"n":${i},"text":"é"}`), { 'content-type': 'application/json' }, signal);
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ got: `{"n":${i},"text":"é"}` });
      expect(JSON.parse(answer.text).long).toHaveLength(200_000);
    }
    expect(site.connections()).toBe(1);
    transport.close();
  });

  it('gives the status of a refusal with its text', async () => {
    const site = await echo((_body, respond) => respond(503, '{"reason":"unavailable"}'));
    const transport = nodeTransport(site.url, 2000);
    expect(await transport.post(Buffer.from('{}'), {}, new AbortController().signal)).toEqual({ status: 503, text: '{"reason":"unavailable"}' });
    transport.close();
  });

  it('rejects when no answer comes within the timeout, and when cut by its signal', async () => {
    const site = await echo(() => undefined);
    const transport = nodeTransport(site.url, 150);
    const started = performance.now();
    await expect(transport.post(Buffer.from('{}'), {}, new AbortController().signal)).rejects.toThrow(/no answer within 150 ms/);
    expect(performance.now() - started).toBeLessThan(1000);
    const cut = new AbortController();
    const pending = transport.post(Buffer.from('{}'), {}, cut.signal);
    cut.abort();
    await expect(pending).rejects.toThrow();
    transport.close();
  });

  it('rejects when nothing listens', async () => {
    const site = await echo(() => undefined);
    servers.splice(0).forEach((server) => server.close());
    const transport = nodeTransport(site.url.replace(/:\d+\//, ':1/'), 500);
    await expect(transport.post(Buffer.from('{}'), {}, new AbortController().signal)).rejects.toThrow();
    transport.close();
  });
});
