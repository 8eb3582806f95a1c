import type { Server as HttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { MAX_HELLO_BYTES, ja4Of, readClientHello } from './client-hello.ts';

/**
 * TLS terminated by the router itself, with each client's JA4 read from its ClientHello. The
 * HTTPS server's own connection listener (the TLS handshake) is put behind one that reads until
 * the ClientHello is whole (at most MAX_HELLO_BYTES and `helloTimeoutMs`), computes its JA4,
 * puts the bytes back and then hands the connection on unchanged. A connection that does not open
 * with a ClientHello is closed. The JA4 is found again by the client's address and port, which
 * the TLS socket shares with the connection under it.
 */

export interface HelloOptions {
  /** How long a client may take to send its ClientHello (default 10 s). */
  helloTimeoutMs?: number;
}

export interface HelloReader {
  /** The JA4 of the connection a request came on; undefined if none was read. */
  ja4Of(socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }): string | undefined;
  /** Connections closed before TLS: they did not open with a ClientHello, or took too long. */
  refused(): number;
  /** Closes the connections still sending their ClientHello. */
  destroyPending(): void;
}

const keyOf = (socket: { remoteAddress?: string | undefined; remotePort?: number | undefined }) => `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;

export function readHellosBeforeTls(https: HttpsServer, options: HelloOptions = {}): HelloReader {
  const helloTimeoutMs = options.helloTimeoutMs ?? 10_000;
  const listeners = https.listeners('connection');
  if (listeners.length !== 1) throw new Error(`expected the HTTPS server to have one connection listener, found ${listeners.length}`);
  const handshake = listeners[0] as (socket: Socket) => void;
  https.removeAllListeners('connection');

  const fingerprints = new Map<string, string>();
  const pending = new Set<Socket>();
  let refused = 0;

  https.on('connection', (socket: Socket) => {
    const key = keyOf(socket);
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = () => {
      clearTimeout(timer);
      pending.delete(socket);
      socket.off('data', onData);
      socket.off('close', finish);
    };
    const refuse = () => {
      refused += 1;
      finish();
      socket.destroy();
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      const bytes = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      const reading = readClientHello(bytes);
      if (reading.state === 'more' && size <= MAX_HELLO_BYTES + 1024) return;
      if (reading.state !== 'hello') return refuse();
      finish();
      socket.pause();
      fingerprints.set(key, ja4Of(reading.hello));
      socket.once('close', () => fingerprints.delete(key));
      socket.unshift(bytes);
      handshake.call(https, socket);
    };
    const timer = setTimeout(refuse, helloTimeoutMs);
    pending.add(socket);
    socket.on('data', onData);
    socket.once('close', finish);
    socket.on('error', () => socket.destroy());
  });

  return {
    ja4Of: (socket) => fingerprints.get(keyOf(socket)),
    refused: () => refused,
    destroyPending: () => {
      for (const socket of pending) socket.destroy();
    },
  };
}
