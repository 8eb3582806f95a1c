import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';
import * as dnsPacket from 'dns-packet';
import { arpaName } from '../../src/domains/honeypot/vendors/reverse-dns.ts';

/**
 * A DNS server on a loopback UDP port for the reverse DNS tests (no network): answers PTR, A and
 * AAAA questions from a table the test fills, NXDOMAIN for anything else; an address or name put
 * in `servfail` gets SERVFAIL, one in `silent` gets no answer at all (a timeout).
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as OBSERVATORY_RDNS_SERVERS takes it. */
  address: string;
  /** PTR names by address (either family, any spelling `ipaddr.js` parses). */
  ptr: Map<string, string[]>;
  /** Forward addresses by name (lower case, no trailing dot); A and AAAA come from the same list. */
  forward: Map<string, string[]>;
  servfail: Set<string>;
  silent: Set<string>;
  /** Every question asked, as `<type> <name>`. */
  questions: string[];
  /** Holds every answer from now on until `resume` (a lookup that is slow to answer). */
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket = dgram.createSocket('udp4');
  const ptr = new Map<string, string[]>();
  const forward = new Map<string, string[]>();
  const servfail = new Set<string>();
  const silent = new Set<string>();
  const questions: string[] = [];
  let held: (() => void)[] | null = null;
  const ptrByArpa = () => new Map([...ptr].map(([ip, names]) => [arpaName(ip) ?? ip, { ip, names }]));

  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    questions.push(`${question.type} ${name}`);
    const reverse = ptrByArpa().get(name);
    const named = (set: Set<string>) => set.has(name) || [...set].some((entry) => ipaddr.isValid(entry) && arpaName(entry) === name);
    if (named(silent)) return;
    const answers: dnsPacket.Answer[] = [];
    // RCODE: 0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN (the low four bits of the flags).
    let rcode = 0;
    if (named(servfail)) rcode = 2;
    else if (question.type === 'PTR' && reverse) {
      for (const data of reverse.names) answers.push({ type: 'PTR', name: question.name, ttl: 60, data });
    } else if ((question.type === 'A' || question.type === 'AAAA') && forward.has(name)) {
      for (const ip of forward.get(name)!) {
        const family = ipaddr.parse(ip).kind() === 'ipv4' ? 'A' : 'AAAA';
        if (family === question.type) answers.push({ type: family, name: question.name, ttl: 60, data: ip } as dnsPacket.Answer);
      }
    } else rcode = 3;
    const flags = dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode;
    const response = dnsPacket.encode({ type: 'response', id: query.id, flags, questions: query.questions, answers });
    const send = () => socket.send(response, remote.port, remote.address);
    if (held) held.push(send);
    else send();
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address();
  return {
    address: `127.0.0.1:${port}`,
    ptr,
    forward,
    servfail,
    silent,
    questions,
    pause() {
      held ??= [];
    },
    resume() {
      const waiting = held ?? [];
      held = null;
      for (const send of waiting) send();
    },
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
