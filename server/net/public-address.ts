import { BlockList, isIP } from 'node:net';

/**
 * Which IP addresses an `image_url` may be fetched from: public unicast only. Everything a
 * server-side fetch could use to reach the service's own machine or network is refused — loopback,
 * private, link-local (cloud metadata at 169.254.169.254), CGNAT, multicast, reserved and
 * documentation ranges, IPv6 unique-local and site-local, and every IPv6 form that embeds an IPv4
 * address (mapped, compatible, NAT64, 6to4, Teredo), whatever IPv4 address it carries.
 */
const REFUSED_V4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"; 0.0.0.0 reaches the local host on Linux
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255
] as const) {
  REFUSED_V4.addSubnet(net, prefix, 'ipv4');
}
// Kept apart from the IPv4 list: a BlockList matches IPv4 addresses against IPv6 rules as mapped
// addresses, so one list would refuse every IPv4 address through ::ffff:0:0/96.
const REFUSED_V6 = new BlockList();
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['::ffff:0:0', 96], // IPv4-mapped
  ['64:ff9b::', 96], // NAT64
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments, Teredo among them
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local
  ['ff00::', 8], // multicast
] as const) {
  REFUSED_V6.addSubnet(net, prefix, 'ipv6');
}
/** IPv6 global unicast; the rest of the IPv6 space is unassigned or special. */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet('2000::', 3, 'ipv6');

/** Whether `address` (an IPv4 or IPv6 literal, without brackets) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !REFUSED_V4.check(address, 'ipv4');
  if (family === 6) {
    // A zone id (fe80::1%eth0) only ever goes with link-local addresses.
    if (address.includes('%')) return false;
    return GLOBAL_UNICAST.check(address, 'ipv6') && !REFUSED_V6.check(address, 'ipv6');
  }
  return false;
}

/**
 * A host name or literal that always means this machine: `localhost`, 127.0.0.0/8, `::1` (bare or
 * bracketed as in a URL). Where the service may listen without `--allow-remote`, and the names under
 * which a loopback service's own URLs are recognised.
 */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
