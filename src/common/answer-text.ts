import type { DnsAnswer } from './dns-types.js';

/**
 * An answer's data as the last column of a table shows it, as dig does: the address, the target,
 * `preference exchange` for MX, the text for TXT. Shared by the page's table and the CLI's.
 */
export function answerText(a: DnsAnswer): string {
  switch (a.type) {
    case 'A':
    case 'AAAA':
      return a.address;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      return a.target;
    case 'MX':
      return `${String(a.preference)} ${a.exchange}`;
    case 'TXT':
      return a.value;
  }
}
