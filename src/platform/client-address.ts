import ipaddr from 'ipaddr.js';

/**
 * The key a client address is counted under by per-address limits. An IPv6 user is usually given
 * a whole /64 and can pick any address in it, so IPv6 addresses count by their /64; IPv4 (and
 * IPv4-mapped IPv6) by the address itself. Text that is not an address is its own key.
 */
export function addressKey(ip: string): string {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(ip);
  } catch {
    return ip;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    const parts = v6.parts.slice(0, 4).map((p) => p.toString(16));
    return `${parts.join(':')}::/64`;
  }
  return parsed.toString();
}
