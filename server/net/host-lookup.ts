import { lookup as dnsLookup } from 'node:dns/promises';

/** Resolves a host name to its addresses (dns.lookup by default; tests inject their own). */
export type HostLookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const defaultHostLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });
