import { createServer, type Server, type Socket, connect } from 'node:net';

/**
 * A loopback TCP proxy in front of a server (PostgreSQL, Redis), so a test can take the server
 * away from the app and give it back without touching the server itself.
 *
 * - `cut('refuse')`: every live connection is reset, and new ones are accepted and reset at once
 *   (the server is down or restarting: the client sees ECONNRESET or a closed connection).
 * - `cut('blackhole')`: live connections stay open but nothing passes either way, and new ones
 *   are accepted and never answered (a network partition, a server frozen): only the client's own
 *   timeouts can end its wait. Bytes already sent wait in the sockets, as TCP retransmission
 *   would keep them, and flow on `restore()` if their connection is still open then.
 * - `restore()`: new connections reach the server again; held ones are connected to it.
 */
export interface TcpProxy {
  readonly host: string;
  readonly port: number;
  cut(mode?: 'refuse' | 'blackhole'): void;
  restore(): void;
  /** Connections open through the proxy now (client side). */
  connections(): number;
  close(): Promise<void>;
}

interface Link {
  client: Socket;
  server: Socket | null;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const links = new Set<Link>();
  let state: 'up' | 'refuse' | 'blackhole' = 'up';

  const drop = (link: Link) => {
    links.delete(link);
    link.client.destroy();
    link.server?.destroy();
  };

  const join = (link: Link) => {
    const server = connect(target.port, target.host);
    link.server = server;
    server.on('error', () => drop(link));
    server.on('close', () => drop(link));
    link.client.pipe(server);
    server.pipe(link.client);
  };

  const hold = (link: Link) => {
    link.client.unpipe();
    link.server?.unpipe();
    link.client.pause();
    link.server?.pause();
  };

  const release = (link: Link) => {
    if (link.server === null) join(link);
    else {
      link.client.pipe(link.server);
      link.server.pipe(link.client);
    }
  };

  const listener: Server = createServer((client) => {
    if (state === 'refuse') {
      client.on('error', () => {});
      client.resetAndDestroy();
      return;
    }
    const link: Link = { client, server: null };
    links.add(link);
    client.on('error', () => drop(link));
    client.on('close', () => drop(link));
    if (state === 'up') join(link);
    else client.pause();
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen(0, '127.0.0.1', () => resolve());
  });
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');

  return {
    host: '127.0.0.1',
    port: address.port,
    cut(mode = 'refuse') {
      state = mode;
      for (const link of [...links]) {
        if (mode === 'refuse') {
          links.delete(link);
          link.client.resetAndDestroy();
          link.server?.destroy();
        } else hold(link);
      }
    },
    restore() {
      const wasHolding = state === 'blackhole';
      state = 'up';
      if (wasHolding) for (const link of links) release(link);
    },
    connections: () => links.size,
    async close() {
      for (const link of [...links]) drop(link);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const rewritten = new URL(url);
  rewritten.hostname = proxy.host;
  rewritten.port = String(proxy.port);
  return rewritten.toString();
}
