// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.

import type { DnsAnswer } from './dns-types.js';

/**
 * An answer's data as the last column of a table shows it, as dig does: the address, the target,
 * `preference exchange` for MX, the text for TXT. Shared by the page's table, the CLI's, the
 * monitor's dns check and the DNS cache's size estimate.
 */
export function answerText(a: DnsAnswer): string {
  // By shape, not by type: a new type of an existing shape needs nothing here.
  if ('address' in a) return a.address;
  if ('target' in a) return a.target;
  if ('exchange' in a) return `${String(a.preference)} ${a.exchange}`;
  return a.value;
}
