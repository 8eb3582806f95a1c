import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A port free on loopback now (listened on, then closed): for apps that must know their peers' ports before they start. */
export async function freePort(): Promise<number> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
